"""Standing bets: a bet that stays in the box between rounds (``docs/rules.md`` §1).

A player sets one with ``/autobet``, or for one round with the results' "same again"; as
each round's betting opens, the group's standing bets are placed in one unit of work, each
as an ordinary bet (``bot.engine.autobets``: ``engine.bet``, one version higher, its own
balanced ledger transaction), so they are held and settled like any bet. The group's bets
are written together: one compare-and-set on the round's version from before the first to
after the last (all or none), and the bets and their ledger transactions in a fixed number
of statements however many there are. Placement listens to every round command and start
(``bot.service.round_events``: betting opens as bidding ends, or as a round starts when the
house deals), and ``place_due_autobets`` catches up on a window that opened just before a
restart. Each standing bet is considered once per round (``last_round_id``), so a second
worker or a restart never places one twice.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass

from bot.engine.autobets import Autobet, AutobetRun, betting_open, place_autobets
from bot.engine.errors import RuleViolation
from bot.engine.round import Phase, Round, check_bet_limits
from bot.service.core import GroupSettings, ServiceObserver, StoredPeople, admin_command
from bot.service.records import CommandResult, Person
from bot.service.round_commands import RoundCommandUseCases
from bot.service.round_events import RoundEvents
from bot.store.errors import StaleRound
from bot.store.round_writes import accounts_moved, describe_placed
from bot.store.unit_of_work import Store, UnitOfWork

log = logging.getLogger(__name__)

#: Tries of one group's placement when the round or a balance changed under it.
PLACING_ATTEMPTS = 5


@dataclass(frozen=True, slots=True)
class AutobetChange:
    """What ``/autobet AMOUNT`` or ``/autobet off`` did: the standing bet before and after
    (``None``: none), and, if the round takes bets right now, what placing it did."""

    before: Autobet | None
    after: Autobet | None
    placed: CommandResult | None = None


@dataclass(frozen=True, slots=True)
class SameAgain:
    """What a "same again" press did: ``amount`` bet now (``placed``, the bet's result)
    or kept for the next round's betting (``placed`` is ``None``)."""

    amount: int
    placed: CommandResult | None = None


class AutobetUseCases:
    """Standing bets: set, cleared, shown, and placed as betting opens (``betting_opened``
    listens to the round steps' events). A "same again" while the round takes bets is an
    ordinary bet, placed by ``commands``."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Callable[[], int],
        people: StoredPeople,
        group_settings: GroupSettings,
        observer: ServiceObserver,
        commands: RoundCommandUseCases,
        events: RoundEvents,
    ) -> None:
        self.store = store
        self.clock = clock
        self.people = people
        self.group_settings = group_settings
        self.observer = observer
        self.commands = commands
        self.events = events

    # -- the reaction to betting opened -----------------------------------------------

    async def betting_opened(self, opened: Round) -> AutobetRun | None:
        """Place the group's standing bets in ``opened``, whose betting a round command or
        start opened: what placing them did, which the step's result carries, or ``None``
        when there were none to consider or placing them failed."""
        try:
            return await self.place_autobets(opened.chat_id, opened.id)
        except Exception:
            # The round goes on without them; a restart's catch-up tries again.
            log.exception("round %s: placing standing bets failed", opened.id)
            return None

    # -- placing --------------------------------------------------------------------

    async def place_autobets(self, chat_id: int, round_id: int) -> AutobetRun | None:
        """Place the group's standing bets not yet considered for this round, if it takes
        bets: one unit of work for the group, one compare-and-set for all, a ledger
        transaction per bet. ``None`` when there were none to consider (one indexed read)."""
        for _ in range(PLACING_ATTEMPTS):
            try:
                run = await self._place_autobets(chat_id, round_id)
            except StaleRound:
                self.observer.database_retried()
            except RuleViolation as error:
                if error.key != "chips_changed":  # a balance changed since it was read
                    raise
                self.observer.database_retried()
            else:
                if run is not None and run.placed:
                    self.events.committed(run.round)
                return run
        raise RuntimeError(f"round {round_id}: standing bets not placed in {PLACING_ATTEMPTS}")

    async def _place_autobets(self, chat_id: int, round_id: int) -> AutobetRun | None:
        # Most groups have none: one round trip that waits for no writer finds that out.
        if not await self.store.autobet_lookup.any_due(chat_id, round_id):
            return None
        async with self.store.writing() as uow:
            state = await uow.rounds.load(round_id)  # locked: one worker places them
            now = self.clock()
            if state is None or state.chat_id != chat_id or not betting_open(state, now):
                return None
            # Again, under the round's lock; with the chips and accounts the bets move.
            due = await uow.autobets.due_with_chips(chat_id, round_id)
            free = {d.autobet.user_id: d.free_chips for d in due}
            run = place_autobets(state, [d.autobet for d in due], free, now)
            # One compare-and-set for the group's bets, and a ledger transaction per bet,
            # each written in a fixed number of statements.
            steps = [placed.transition for placed in run.placed]
            if steps:
                accounts = {ref: id_ for d in due for ref, id_ in d.accounts.items()}
                unknown = accounts_moved(steps) - accounts.keys()
                accounts.update(await uow.ledger.account_ids(chat_id, unknown))
                write = describe_placed(state, steps, now, accounts=accounts)
                await uow.round_writer.write(write)
            # A one-round bet ("same again") is used up once placed (one that sat out
            # waits for the next round); a stopped one goes.
            finished = [stopped.autobet for stopped in run.stopped]
            finished += [placed.autobet for placed in run.placed if placed.autobet.once]
            await uow.autobets.remove_as_read(chat_id, finished)
            kept = [autobet for autobet in run.autobets if autobet not in finished]
            await uow.autobets.considered(chat_id, round_id, kept)
        return run

    async def place_due_autobets(self) -> list[CommandResult]:
        """Place the standing bets of rounds taking bets that have not had them (a window
        that opened just before a restart); one statement when there are none."""
        async with self.store.reading() as uow:
            due = await uow.autobets.rounds_due()
        results = []
        for round_id, chat_id in due:
            run = await self.place_autobets(chat_id, round_id)
            if run is not None:
                results.append(CommandResult(run.round, autobets=run))
        return results

    # -- what players ask -------------------------------------------------------------

    async def autobet(self, chat_id: int, user_id: int) -> Autobet | None:
        """The player's standing bet in the group, if any."""
        async with self.store.reading() as uow:
            return await uow.autobets.get(chat_id, user_id)

    async def set_autobet(
        self, chat_id: int, actor: Person, amount: int, *, update_id: int | None = None
    ) -> AutobetChange | None:
        """Keep a bet of ``amount`` cents every round of the table's game (0: stop it).
        Refused (nothing changes) for an amount outside the table's bet limits. If the
        round takes bets now and the player has none in it, it is placed at once.
        ``None`` for an update processed before."""

        async def body(uow: UnitOfWork, now: int) -> AutobetChange:
            await self.people.touch(uow, [actor], now)
            chat = await uow.chats.get_or_create(chat_id, now)
            before = await uow.autobets.get(chat_id, actor.id)
            if amount == 0:
                await uow.autobets.remove(chat_id, [actor.id])
                return AutobetChange(before, None)
            settings = self.group_settings.of(chat)
            check_bet_limits(settings, amount)
            after = Autobet(actor.id, amount, settings.ruleset)
            await uow.autobets.put(chat_id, after, now)
            return AutobetChange(before, after)

        change = await admin_command(self.store, self.clock, update_id, body)
        if change is None or change.after is None:
            return change
        return dataclasses.replace(change, placed=await self._place_now(chat_id))

    async def _place_now(self, chat_id: int) -> CommandResult | None:
        """Place the group's standing bets in the round taking bets now, if one does."""
        async with self.store.reading() as uow:
            phase = await uow.queries.open_phase(chat_id)
            round_id = await uow.rounds.open_round_id(chat_id)
        if phase != Phase.BETTING.value or round_id is None:
            return None
        run = await self.place_autobets(chat_id, round_id)
        if run is None:
            return None
        return CommandResult(run.round, autobets=run)

    async def same_again(
        self, chat_id: int, actor: Person, round_id: int, *, update_id: int | None = None
    ) -> SameAgain | None:
        """The results' "same again": the player's bet in settled round ``round_id``, bet
        again in the round taking bets now, or kept for the next round's betting. Refused
        for results that are not the group's latest (``stale_button``), for a player who
        did not bet in that round, and once the table plays another game. ``None`` for an
        update processed before."""
        async with self.store.reading() as uow:
            found = await uow.autobets.bet_in(round_id, actor.id)
            stale = (
                found is None
                or found.chat_id != chat_id
                or found.phase is not Phase.SETTLED
                or await uow.autobets.settled_since(chat_id, round_id)
            )
            phase = await uow.queries.open_phase(chat_id)
            table_game = self.group_settings.of(await uow.chats.get(chat_id)).ruleset
        if stale or found is None:
            raise RuleViolation("stale_button")
        amount = found.stake
        if amount is None:
            raise RuleViolation("again_without_bet")
        if found.ruleset != table_game:  # a stake of another game is not "the same"
            raise RuleViolation("again_other_game")
        if phase == Phase.BETTING.value:
            result = await self.commands.bet(chat_id, actor, amount, update_id=update_id)
            return SameAgain(amount, result)

        async def body(uow: UnitOfWork, now: int) -> SameAgain:
            await self.people.touch(uow, [actor], now)
            standing = await uow.autobets.get(chat_id, actor.id)
            if standing is not None and not standing.once:
                raise RuleViolation("autobet_already_on", amount=standing.amount)
            settings = self.group_settings.of(await uow.chats.get(chat_id))
            check_bet_limits(settings, amount)
            await uow.autobets.put(chat_id, Autobet(actor.id, amount, settings.ruleset, True), now)
            return SameAgain(amount)

        return await admin_command(self.store, self.clock, update_id, body)

"""Standing bets: a bet that stays in the box between rounds (``docs/rules.md`` §1).

A player sets one with ``/autobet``, or for one round with the results' "same again"; as
each round's betting opens, the group's standing bets are placed in one unit of work, each
as an ordinary bet (``bot.engine.autobets``: ``engine.bet``, one version higher, its own
balanced ledger transaction), so they are held and settled like any bet. The group's bets
are written together: one compare-and-set on the round's version from before the first to
after the last (all or none), and the bets and their ledger transactions in a fixed number
of statements however many there are. Placement hooks onto every round command and start
(betting opens as bidding ends, or as a round starts when the house deals), and
``place_due_autobets`` catches up on a window that opened just before a restart. Each
standing bet is considered once per round (``last_round_id``), so a second worker or a
restart never places one twice.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

from bot.engine.autobets import Autobet, AutobetRun, betting_open, place_autobets
from bot.engine.errors import RuleViolation
from bot.engine.round import DealerChosen, Phase, Round, RoundStarted, check_bet_limits
from bot.service.records import CommandResult, Person
from bot.service.rounds import RoundUseCases
from bot.store.errors import StaleRound
from bot.store.round_commands import Decide
from bot.store.round_writes import accounts_moved, describe_placed
from bot.store.unit_of_work import UnitOfWork

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


def _betting_opened(result: CommandResult) -> Round | None:
    """The round whose betting this command or deadline opened, if it opened one."""
    started = result.started
    if started is not None and started.phase is Phase.BETTING:
        return started  # a re-deal when the house deals
    state = result.round
    if state is None or state.phase is not Phase.BETTING:
        return None
    opened = any(isinstance(event, (DealerChosen, RoundStarted)) for event in result.events)
    return state if opened else None


class AutobetUseCases(RoundUseCases):
    """Standing bets: set, cleared, shown, and placed as betting opens. Every round command
    and start passes through here, so that a window that opens gets its standing bets."""

    # -- the hook on round commands ---------------------------------------------------

    async def start_round(
        self, chat_id: int, *, actor: Person | None = None, update_id: int | None = None
    ) -> CommandResult:
        """Start a round (``RoundUseCases.start_round``); when the house deals it opens for
        bets at once, with the group's standing bets placed."""
        result = await super().start_round(chat_id, actor=actor, update_id=update_id)
        return await self._with_autobets(result)

    async def _run(
        self,
        *,
        chat_id: int | None,
        round_id: int | None,
        decide: Decide,
        actor: Person | None = None,
        update_id: int | None = None,
        skip_locked: bool = False,
    ) -> CommandResult:
        """Run a round command (``RoundUseCases._run``); a step that opened betting is
        followed by the group's standing bets."""
        result = await super()._run(
            chat_id=chat_id,
            round_id=round_id,
            decide=decide,
            actor=actor,
            update_id=update_id,
            skip_locked=skip_locked,
        )
        return await self._with_autobets(result)

    async def _with_autobets(self, result: CommandResult) -> CommandResult:
        opened = _betting_opened(result)
        if opened is None:
            return result
        try:
            run = await self.place_autobets(opened.chat_id, opened.id)
        except Exception:
            # The round goes on without them; a restart's catch-up tries again.
            log.exception("round %s: placing standing bets failed", opened.id)
            return result
        if run is None:
            return result
        return dataclasses.replace(result, autobets=run)

    # -- placing --------------------------------------------------------------------

    async def place_autobets(self, chat_id: int, round_id: int) -> AutobetRun | None:
        """Place the group's standing bets not yet considered for this round, if it takes
        bets: one unit of work for the group, one compare-and-set for all, a ledger
        transaction per bet. ``None`` when there were none to consider (one indexed read)."""
        for _ in range(PLACING_ATTEMPTS):
            try:
                return await self._place_autobets(chat_id, round_id)
            except StaleRound:
                self.observer.database_retried()
            except RuleViolation as error:
                if error.key != "chips_changed":  # a balance changed since it was read
                    raise
                self.observer.database_retried()
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
            await self._touch_people(uow, [actor], now)
            chat = await uow.chats.get_or_create(chat_id, now)
            before = await uow.autobets.get(chat_id, actor.id)
            if amount == 0:
                await uow.autobets.remove(chat_id, [actor.id])
                return AutobetChange(before, None)
            settings = self._settings_of(chat)
            check_bet_limits(settings, amount)
            after = Autobet(actor.id, amount, settings.ruleset)
            await uow.autobets.put(chat_id, after, now)
            return AutobetChange(before, after)

        change = await self._admin_command(update_id, body)
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
            table_game = self._settings_of(await uow.chats.get(chat_id)).ruleset
        if stale or found is None:
            raise RuleViolation("stale_button")
        amount = found.stake
        if amount is None:
            raise RuleViolation("again_without_bet")
        if found.ruleset != table_game:  # a stake of another game is not "the same"
            raise RuleViolation("again_other_game")
        if phase == Phase.BETTING.value:
            result = await self.bet(chat_id, actor, amount, update_id=update_id)
            return SameAgain(amount, result)

        async def body(uow: UnitOfWork, now: int) -> SameAgain:
            await self._touch_people(uow, [actor], now)
            standing = await uow.autobets.get(chat_id, actor.id)
            if standing is not None and not standing.once:
                raise RuleViolation("autobet_already_on", amount=standing.amount)
            settings = self._settings_of(await uow.chats.get(chat_id))
            check_bet_limits(settings, amount)
            await uow.autobets.put(chat_id, Autobet(actor.id, amount, settings.ruleset, True), now)
            return SameAgain(amount)

        return await self._admin_command(update_id, body)

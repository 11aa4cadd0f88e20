"""Round use cases: start, bid, bet, grab, deadlines, the sweep and recovery.

A command runs on the hot path (``Store.round_commands``: one read, one write) when the
step is one it covers, and otherwise on the general path: the round loaded whole in a
unit of work, the engine's transition written by ``_write`` with its consequences (the
shoe moved on, the ledger transaction, the next round's start or its time). Either way the
round's version is compared and set in the same transaction as its postings and the
processed update, so a duplicate timer, a retried update or a second worker change
nothing twice.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any

from bot.engine import round as engine
from bot.engine.errors import GameError, NotDue, RuleViolation
from bot.engine.round import (
    BANK,
    HOUSE,
    HOUSE_DEALER,
    Phase,
    RetiredShoe,
    Round,
    ShoeRef,
    Transition,
    VoidReason,
)
from bot.engine.settings import Settings
from bot.priority import urgent
from bot.rules.ruleset import Ruleset, get_ruleset
from bot.rules.split import commitment
from bot.service.core import ServiceCore
from bot.service.records import CommandResult, Person
from bot.store.chats import ChatRecord
from bot.store.errors import AlreadyProcessed, RoundAlreadyOpen, StaleRound, is_transient
from bot.store.round_commands import Decide, Located, NotOnHotPath, StepFailed
from bot.store.round_starts import StartRead
from bot.store.round_writes import accounts_moved, describe
from bot.store.shoes import ShoeRecord
from bot.store.unit_of_work import UnitOfWork

log = logging.getLogger(__name__)


def _bank_for(settings: Settings, balance: int) -> int:
    """The pool a round opens with: the bank's balance when the house deals (refused if it
    is empty), else nothing."""
    if settings.dealer != HOUSE_DEALER:
        return 0
    if balance <= 0:
        raise RuleViolation("bank_empty")
    return balance


def _shoe_spent(shoe: ShoeRecord | None, ruleset: Ruleset[Any]) -> bool:
    """Whether the group's shoe is retired before its next round: spent, or of another
    game (a table that moved to a game of other decks, or of none)."""
    return shoe is not None and (
        shoe.decks != ruleset.shoe_decks or shoe.dealt > ruleset.reshuffle_after
    )


MAX_ATTEMPTS = 20


@dataclass
class _Attempt:
    """What one try of a round command produced."""

    before: Round
    transition: Transition
    started: Transition | None = None
    refused: GameError | None = None
    next_round_at_ms: int | None = None

    def result(self) -> CommandResult:
        """What the shell needs to know of this attempt."""
        started = self.started
        return CommandResult(
            self.transition.round,
            self.transition.events,
            started.round if started else None,
            refused=self.refused,
            started_events=started.events if started else (),
            next_round_at_ms=self.next_round_at_ms,
        )


class RoundUseCases(ServiceCore):
    """Rounds: their commands and deadlines."""

    # -- starting -----------------------------------------------------------------------

    async def start_round(
        self, chat_id: int, *, actor: Person | None = None, update_id: int | None = None
    ) -> CommandResult:
        """Start a round in an open group. Refused if the table is closed or a round runs."""
        try:
            transition = await self._start(chat_id, actor, update_id)
        except AlreadyProcessed:
            return CommandResult(duplicate=True)
        except RoundAlreadyOpen:  # two starts raced; the unique index let one through
            raise RuleViolation("round_running") from None
        return CommandResult(transition.round, transition.events)

    async def _start(self, chat_id: int, actor: Person | None, update_id: int | None) -> Transition:
        """On the hot path (``Store.round_starts``) when it covers the start, else on the
        general path."""
        try:
            return await self._start_hot(chat_id, actor, update_id)
        except NotOnHotPath:
            pass  # decided from what the path read, before it wrote
        except (GameError, AlreadyProcessed, RoundAlreadyOpen):
            raise
        except Exception as error:
            if not is_transient(error):
                self.observer.command_failed("hot")
                error.add_note(f"a round start in chat {chat_id}")
            raise
        return await self._start_whole(chat_id, actor, update_id)

    async def _start_hot(
        self, chat_id: int, actor: Person | None, update_id: int | None
    ) -> Transition:
        def decide(read: StartRead, now: int) -> Transition:
            if not read.is_open:
                raise RuleViolation("table_closed")
            if read.open_round_id is not None:
                raise RuleViolation("round_running", round_id=read.open_round_id)
            settings = self._settings_from(read.chat_settings)
            bank = _bank_for(settings, read.bank)
            ruleset = get_ruleset(settings.ruleset)
            if _shoe_spent(read.shoe, ruleset) or (ruleset.shoe_decks and read.shoe is None):
                raise NotOnHotPath("the group's shoe is replaced")
            if not read.house_account:
                raise NotOnHotPath("the house's account is created")
            return self._new_round(chat_id, settings, now, bank, read.shoe, None)

        user_row = self._user_row(actor)
        transition = await self.store.round_starts.run(
            chat_id, decide, clock=self.clock, update_id=update_id, user_row=user_row
        )
        self._remember_stored(actor, user_row)
        return transition

    async def _start_whole(
        self, chat_id: int, actor: Person | None, update_id: int | None
    ) -> Transition:
        """The general path: a unit of work that also replaces the group's shoe and
        creates the house's account when the start needs them."""
        async with self.store.writing() as uow:
            now = self.clock()
            await uow.updates.claim(update_id, now)
            await self._touch_people(uow, [actor] if actor else [], now)
            chat = await uow.chats.get_or_create(chat_id, now)
            if not chat.is_open:
                raise RuleViolation("table_closed")
            running = await uow.rounds.open_round_id(chat_id)
            if running is not None:
                raise RuleViolation("round_running", round_id=running)
            return await self._insert_round(uow, chat, now)

    async def _insert_round(self, uow: UnitOfWork, chat: ChatRecord, now: int) -> Transition:
        settings = self._settings_of(chat)
        bank = 0
        if settings.dealer == HOUSE_DEALER:
            bank = _bank_for(settings, await uow.ledger.account_balance(chat.id, BANK))
        shoe, retired = await self._shoe_for(uow, chat.id, get_ruleset(settings.ruleset), now)
        transition = self._new_round(chat.id, settings, now, bank, shoe, retired)
        stored = await uow.round_writer.start(transition.round, now)
        # The house takes the round's rake: its account exists before the round settles.
        await uow.ledger.account_ids(chat.id, [HOUSE])
        return dataclasses.replace(transition, round=stored)

    def _new_round(
        self,
        chat_id: int,
        settings: Settings,
        now: int,
        bank: int,
        shoe: ShoeRecord | None,
        retired: RetiredShoe | None,
    ) -> Transition:
        """The engine's new round (id 0 until stored), dealt from ``shoe`` if its game
        has one."""
        ref = None if shoe is None else ShoeRef(shoe.id, shoe.seed, shoe.dealt, shoe.client_seeds)
        return engine.start_round(
            round_id=0,
            chat_id=chat_id,
            settings=settings,
            seed=self.seed_source(),
            now_ms=now,
            bank=bank,
            shoe=ref,
            retired_shoe=retired,
            # A shoe round deals by its shoe's derivation (an older shoe's stays 1).
            derivation=self.seed_derivation if shoe is None else shoe.fairness,
        )

    async def _shoe_for(
        self, uow: UnitOfWork, chat_id: int, ruleset: Ruleset[Any], now: int
    ) -> tuple[ShoeRecord | None, RetiredShoe | None]:
        """The shoe the group's next round deals from (``None`` for a game without one),
        and the shoe retired for it, whose seed is revealed: a spent shoe is replaced, and
        a table that moved to another game retires its shoe, so that the rounds dealt from
        it can be verified. (The round being started is the chat's only open round, so
        none is still to be dealt from a retired shoe.)"""
        shoe = await uow.shoes.current(chat_id)
        retired = None
        if _shoe_spent(shoe, ruleset):
            assert shoe is not None
            await uow.shoes.retire(shoe.id, now)
            retired = RetiredShoe(shoe.id, shoe.seed)
            shoe = None
        if not ruleset.shoe_decks:
            return None, retired
        if shoe is None:
            seed = self.seed_source()
            shoe = await uow.shoes.create(
                chat_id,
                decks=ruleset.shoe_decks,
                seed=seed,
                commitment=commitment(seed),
                now_ms=now,
                fairness=self.seed_derivation,
            )
        return shoe, retired

    async def start_due_round(self, chat_id: int) -> CommandResult:
        """Start the round of a table whose pause is over; if it cannot start (closed, a
        round already runs, the bank is empty), forget the pending start instead. The
        result's ``refused`` names why, when the group should be told (the empty bank)."""
        try:
            return await self.start_round(chat_id)
        except RuleViolation as error:
            async with self.store.writing() as uow:
                await uow.chats.change(chat_id, next_round_at_ms=None)
            return CommandResult(refused=error if error.key == "bank_empty" else None)

    # -- commands -----------------------------------------------------------------------

    async def bid(
        self,
        chat_id: int,
        actor: Person,
        amount: int,
        *,
        round_id: int | None = None,
        update_id: int | None = None,
    ) -> CommandResult:
        """Bid ``amount`` cents to be the dealer of the chat's round."""
        return await self._stake(engine.bid, chat_id, actor, amount, round_id, update_id)

    async def bet(
        self,
        chat_id: int,
        actor: Person,
        amount: int,
        *,
        round_id: int | None = None,
        update_id: int | None = None,
    ) -> CommandResult:
        """Bet ``amount`` cents in the chat's round; again to change it, 0 to cancel it."""
        return await self._stake(engine.bet, chat_id, actor, amount, round_id, update_id)

    async def stake(
        self, chat_id: int, actor: Person, amount: int, *, update_id: int | None = None
    ) -> CommandResult:
        """A bare amount: a bid while the round is bidding, a bet while it is betting."""

        def by_phase(
            state: Round, user_id: int, amount: int, *, free_chips: int, now_ms: int
        ) -> Transition:
            command = engine.bid if state.phase is Phase.BIDDING else engine.bet
            return command(state, user_id, amount, free_chips=free_chips, now_ms=now_ms)

        return await self._stake(by_phase, chat_id, actor, amount, None, update_id)

    async def _stake(
        self,
        command: Any,
        chat_id: int,
        actor: Person,
        amount: int,
        round_id: int | None,
        update_id: int | None,
    ) -> CommandResult:
        def decide(state: Round, free_chips: int, now: int) -> Transition:
            result: Transition = command(state, actor.id, amount, free_chips=free_chips, now_ms=now)
            return result

        return await self._run(
            chat_id=chat_id, round_id=round_id, decide=decide, actor=actor, update_id=update_id
        )

    async def grab(
        self,
        chat_id: int,
        actor: Person,
        *,
        round_id: int | None = None,
        update_id: int | None = None,
    ) -> CommandResult:
        """Grab the next share of the chat's envelope; the last grab settles the round."""

        def decide(state: Round, free_chips: int, now: int) -> Transition:
            return engine.grab(state, actor.id, now)

        return await self._run(
            chat_id=chat_id, round_id=round_id, decide=decide, actor=actor, update_id=update_id
        )

    async def advance(self, round_id: int) -> CommandResult:
        """Apply a round's deadline if it has passed; nothing if not (a duplicate timer),
        or if another worker is advancing it right now."""

        def decide(state: Round, free_chips: int, now: int) -> Transition:
            return engine.advance(state, now)

        try:
            with urgent():  # before waiting commands for the database (bot/store/db.py)
                return await self._run(
                    chat_id=None, round_id=round_id, decide=decide, skip_locked=True
                )
        except NotDue:
            return CommandResult()

    async def move_window(self, round_id: int, phase: Phase, opens_at_ms: int) -> CommandResult:
        """Open the window of ``phase`` at ``opens_at_ms`` (``engine.move_window``: its board
        reaches the group then, later than the window opened); nothing if the round has
        left ``phase`` or the window opened about then anyway. Compare-and-set on the
        round's version, as every step: a bet placed meanwhile is kept, and a deadline
        applied meanwhile wins."""

        def decide(state: Round, free_chips: int, now: int) -> Transition:
            return engine.move_window(state, phase, max(opens_at_ms, now))

        try:
            with urgent():  # what shows a deadline, as the deadline's advance
                return await self._run(chat_id=None, round_id=round_id, decide=decide)
        except NotDue:
            return CommandResult()

    # -- running a command ----------------------------------------------------------------

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
        """Run a round command: on the hot path when it covers the step, else on the
        general path; retry on a stale version.

        ``round_id`` given with ``chat_id`` means the command names a round (a button):
        it is refused unless that is the chat's open round.
        """

        def checked(state: Round, free_chips: int, now: int) -> Transition:
            if chat_id is not None and round_id is not None and round_id != state.id:
                raise RuleViolation("stale_button")
            return decide(state, free_chips, now)

        hot = True
        for _ in range(MAX_ATTEMPTS):
            try:
                if hot:
                    return await self._run_hot(
                        chat_id, round_id, checked, actor, update_id, skip_locked
                    )
                return await self._run_whole(
                    chat_id, round_id, checked, actor, update_id, skip_locked
                )
            except StaleRound:
                self.observer.database_retried()
                continue
            except AlreadyProcessed:
                return CommandResult(duplicate=True)
            except NotOnHotPath:
                hot = False  # decided from what the path read, before it wrote
            except StepFailed as failure:
                self.observer.command_failed("hot")
                cause = failure.__cause__
                error = cause if isinstance(cause, Exception) else failure
                return await self._void_after_error(failure.round_id, error)
            except GameError:
                raise
            except Exception as error:
                if not is_transient(error):
                    self.observer.command_failed("hot" if hot else "general")
                    error.add_note(f"a round command in chat {chat_id} (round {round_id})")
                raise
        raise RuntimeError(f"round command did not settle after {MAX_ATTEMPTS} attempts")

    async def _run_hot(
        self,
        chat_id: int | None,
        round_id: int | None,
        decide: Decide,
        actor: Person | None,
        update_id: int | None,
        skip_locked: bool,
    ) -> CommandResult:
        user_row = self._user_row(actor)
        where = Located(chat_id, None if chat_id is not None else round_id, skip_locked)
        applied = await self.store.round_commands.run(
            where,
            decide,
            clock=self.clock,
            user_id=actor.id if actor is not None else None,
            update_id=update_id,
            user_row=user_row,
        )
        if applied is None:
            if chat_id is not None:
                raise RuleViolation("stale_button" if round_id else "no_round")
            return CommandResult()
        self._remember_stored(actor, user_row)
        transition = applied.transition
        return CommandResult(
            transition.round, transition.events, next_round_at_ms=applied.next_round_at_ms
        )

    async def _run_whole(
        self,
        chat_id: int | None,
        round_id: int | None,
        decide: Decide,
        actor: Person | None,
        update_id: int | None,
        skip_locked: bool,
    ) -> CommandResult:
        """The general path: the round loaded whole, then written by ``_write``. Raises
        ``StaleRound`` to be tried again, ``AlreadyProcessed`` for a repeated update."""
        located: int | None = None
        try:
            async with self.store.writing() as uow:
                # The clock is read once the transaction has its turn to write.
                now = self.clock()
                await uow.updates.claim(update_id, now)
                if chat_id is not None:
                    state = await uow.rounds.load_open(chat_id)
                    if state is None:
                        raise RuleViolation("stale_button" if round_id else "no_round")
                else:
                    assert round_id is not None
                    state = await uow.rounds.load(round_id, skip_locked=skip_locked)
                    if state is None:
                        return CommandResult()
                located = state.id
                # The player's row after the round's: the hot path's write takes them in
                # that order too (PostgreSQL), and two orders could deadlock.
                await self._touch_people(uow, [actor] if actor else [], now)
                free = 0
                if actor is not None:
                    free = (await uow.ledger.balance(state.chat_id, actor.id)).available
                try:
                    transition = decide(state, free, now)
                except GameError:
                    raise
                except Exception:
                    log.exception("round %s: error in a transition; voiding it", state.id)
                    transition = engine.void(state, VoidReason.ERROR)
                attempt = _Attempt(state, transition)
                await self._write(uow, attempt, now)
        except (StaleRound, GameError, AlreadyProcessed):
            raise
        except Exception as error:
            if located is None or is_transient(error):
                # Nothing was written; the command can be sent again, the sweep will
                # apply a deadline again.
                raise
            # Writing the transition failed: void the round, so none is left half-done.
            return await self._void_after_error(located, error)
        return attempt.result()

    async def _write(self, uow: UnitOfWork, attempt: _Attempt, now: int) -> None:
        """Write a transition as ``describe`` says (the hot path's statements, in the unit
        of work), creating the accounts it moves chips of first; a re-deal starts the next
        round in the same transaction."""
        before, transition = attempt.before, attempt.transition
        accounts = await uow.ledger.account_ids(before.chat_id, accounts_moved([transition]))
        chat = None
        if not transition.round.phase.is_open:
            chat = await uow.chats.get_or_create(before.chat_id, now)
        write = describe(
            before, transition, now, accounts=accounts, table_open=chat is None or chat.is_open
        )
        await uow.round_writer.write(write)
        attempt.next_round_at_ms = write.next_round_at
        if write.redeal:
            assert chat is not None
            try:
                attempt.started = await self._insert_round(uow, chat, now)
            except RuleViolation as error:  # the bank is empty: the table waits for /fund
                attempt.refused = error

    async def _void_after_error(self, round_id: int, error: Exception) -> CommandResult:
        """Void a round whose transition could not be written, with every hold released."""
        log.error("round %s: a transition failed; voiding it", round_id, exc_info=error)
        async with self.store.writing() as uow:
            now = self.clock()
            state = await uow.rounds.load(round_id)
            if state is None or not state.phase.is_open:
                return CommandResult(state)
            attempt = _Attempt(state, engine.void(state, VoidReason.ERROR))
            await self._write(uow, attempt, now)
        return attempt.result()

    # -- deadlines and recovery -------------------------------------------------------------

    async def due_rounds(self) -> list[tuple[int, int]]:
        """Open rounds whose deadline has passed: (round id, chat id), most overdue first."""
        return await self.store.due_lookup.rounds(self.clock())

    async def due_chat_ids(self) -> list[int]:
        """Open tables whose pause after a settled round is over."""
        return await self.store.due_lookup.chat_ids(self.clock())

    async def open_rounds(self) -> list[Round]:
        """Every open round (to reschedule their deadlines after a start), in a fixed number
        of statements however many there are."""
        async with self.store.reading() as uow:
            return await uow.queries.open_rounds()

    async def sweep(self) -> list[CommandResult]:
        """Advance every overdue round and start the rounds whose pause is over."""
        results = [await self.advance(round_id) for round_id, _ in await self.due_rounds()]
        results += [await self.start_due_round(chat_id) for chat_id in await self.due_chat_ids()]
        return [result for result in results if result.events]

    async def recover(self) -> tuple[list[CommandResult], list[Round]]:
        """After a start: finish what is overdue, then list the open rounds to schedule."""
        results = await self.sweep()
        return results, await self.open_rounds()

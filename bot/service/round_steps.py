"""Running a round command: its decision written once, on the hot path or the general path.

A command runs on the hot path (``Store.round_commands``: one read, one write) when the
step is one it covers, and otherwise on the general path: the round loaded whole in a
unit of work, the engine's transition written by ``_write`` with its consequences (the
shoe moved on, the ledger transaction, the next round's start or its time). Either way the
round's version is compared and set in the same transaction as its postings and the
processed update, so a duplicate timer, a retried update or a second worker change
nothing twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from bot.engine import round as engine
from bot.engine.errors import GameError, RuleViolation
from bot.engine.round import Round, RoundOrSeat, Transition, VoidReason
from bot.service.core import ServiceObserver, StoredPeople
from bot.service.records import CommandResult, Person
from bot.service.round_events import RoundEvents
from bot.service.round_starts import RoundStartUseCases
from bot.store.errors import AlreadyProcessed, StaleRound, is_transient
from bot.store.round_commands import Decide, Located, NotOnHotPath, StepFailed
from bot.store.round_reads import StepInput
from bot.store.round_writes import accounts_moved, describe
from bot.store.unit_of_work import Store, UnitOfWork

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 20


@dataclass
class _Attempt:
    """What one try of a round command produced."""

    before: Round
    transition: Transition[RoundOrSeat]
    started: Transition[Round] | None = None
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


@dataclass(frozen=True, slots=True)
class RoundCommand:
    """One round command as it is run: the chat it was sent in and the round it names
    (a button's), what decides, who sent it, its update, and whether a round another
    worker holds is passed over (a deadline)."""

    chat_id: int | None
    round_id: int | None
    decide: Decide
    actor: Person | None = None
    update_id: int | None = None
    skip_locked: bool = False
    joinable: bool = False


class RoundSteps:
    """Round commands run: on the hot path when it covers the step, else on the general
    path, tried again on a stale version, the round voided when its step failed. A step
    that opens betting is told to ``events``; a re-deal starts the next round by
    ``starts``."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Callable[[], int],
        people: StoredPeople,
        observer: ServiceObserver,
        events: RoundEvents,
        starts: RoundStartUseCases,
    ) -> None:
        self.store = store
        self.clock = clock
        self.people = people
        self.observer = observer
        self.events = events
        self.starts = starts

    async def run(
        self,
        *,
        chat_id: int | None,
        round_id: int | None,
        decide: Decide,
        actor: Person | None = None,
        update_id: int | None = None,
        skip_locked: bool = False,
        joinable: bool = False,
    ) -> CommandResult:
        """Run a round command: on the hot path when it covers the step, else on the
        general path; retry on a stale version. ``events`` are told of what it did (a step
        that opened betting is followed by the group's standing bets).

        ``round_id`` given with ``chat_id`` means the command names a round (a button):
        it is refused unless that is the chat's open round. ``joinable``: a step that reads
        nothing of its player's but the round (a grab), which the hot path may write
        together with other players' on the same round (``RoundCommands.run``).
        """

        def checked(step: StepInput) -> Transition[RoundOrSeat]:
            if chat_id is not None and round_id is not None and round_id != step.round.id:
                raise RuleViolation("stale_button")
            return decide(step)

        command = RoundCommand(chat_id, round_id, checked, actor, update_id, skip_locked, joinable)
        result = await self._on_either_path(command)
        return await self.events.told(result)

    async def _on_either_path(self, command: RoundCommand) -> CommandResult:
        """``decide`` written on the hot path, or on the general path once the hot path
        says it does not cover the step; a step that failed voids the round."""
        hot = True
        for _ in range(MAX_ATTEMPTS):
            try:
                if hot:
                    return await self._run_hot(command)
                return await self._run_whole(command)
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
                    error.add_note(
                        f"a round command in chat {command.chat_id} (round {command.round_id})"
                    )
                raise
        raise RuntimeError(f"round command did not settle after {MAX_ATTEMPTS} attempts")

    async def _run_hot(self, command: RoundCommand) -> CommandResult:
        actor, chat_id, round_id = command.actor, command.chat_id, command.round_id
        user_row = self.people.user_row(actor)
        where = Located(chat_id, None if chat_id is not None else round_id, command.skip_locked)
        applied = await self.store.round_commands.run(
            where,
            command.decide,
            clock=self.clock,
            user_id=actor.id if actor is not None else None,
            update_id=command.update_id,
            user_row=user_row,
            joinable=command.joinable,
        )
        if applied is None:
            if chat_id is not None:
                raise RuleViolation("stale_button" if round_id else "no_round")
            return CommandResult()
        self.people.remember(actor, user_row)
        transition = applied.transition
        return CommandResult(
            transition.round, transition.events, next_round_at_ms=applied.next_round_at_ms
        )

    async def _run_whole(self, command: RoundCommand) -> CommandResult:
        """The general path: the round loaded whole, then written by ``_write``. Raises
        ``StaleRound`` to be tried again, ``AlreadyProcessed`` for a repeated update."""
        actor, chat_id, round_id = command.actor, command.chat_id, command.round_id
        located: int | None = None
        try:
            async with self.store.writing() as uow:
                # The clock is read once the transaction has its turn to write.
                now = self.clock()
                await uow.updates.claim(command.update_id, now)
                if chat_id is not None:
                    state = await uow.rounds.load_open(chat_id)
                    if state is None:
                        raise RuleViolation("stale_button" if round_id else "no_round")
                else:
                    assert round_id is not None
                    state = await uow.rounds.load(round_id, skip_locked=command.skip_locked)
                    if state is None:
                        return CommandResult()
                located = state.id
                # The player's row after the round's: the hot path's write takes them in
                # that order too (PostgreSQL), and two orders could deadlock.
                await self.people.touch(uow, [actor] if actor else [], now)
                free = 0
                if actor is not None:
                    free = (await uow.ledger.balance(state.chat_id, actor.id)).available
                seeds = await uow.rounds.player_seeds(state)
                try:
                    transition = command.decide(StepInput(state, free, seeds, now))
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
                attempt.started = await self.starts.insert_round(uow, chat, now)
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

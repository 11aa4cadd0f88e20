"""Round commands: a bid, a bet, a bare amount, a grab, a deadline applied, a window
moved. Each is the engine's decision for the round as it is read, run by ``RoundSteps``
(once however often it is sent)."""

from __future__ import annotations

from typing import Protocol

from bot.engine import round as engine
from bot.engine.errors import NotDue
from bot.engine.round import Phase, RoundOrSeat, Transition, UserId
from bot.priority import urgent
from bot.service.records import CommandResult, Person
from bot.service.round_steps import RoundSteps
from bot.store.round_reads import StepInput


class _Stake(Protocol):
    """A bid or a bet (``engine.bid``, ``engine.bet``) of a round or a seat."""

    def __call__(
        self, state: RoundOrSeat, user_id: UserId, amount: int, *, free_chips: int, now_ms: int
    ) -> Transition[RoundOrSeat]: ...


class RoundCommandUseCases:
    """A round's commands and deadlines, as players and timers send them."""

    def __init__(self, steps: RoundSteps) -> None:
        self.steps = steps

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
            state: RoundOrSeat, user_id: UserId, amount: int, *, free_chips: int, now_ms: int
        ) -> Transition[RoundOrSeat]:
            command = engine.bid if state.phase is Phase.BIDDING else engine.bet
            return command(state, user_id, amount, free_chips=free_chips, now_ms=now_ms)

        return await self._stake(by_phase, chat_id, actor, amount, None, update_id)

    async def _stake(
        self,
        command: _Stake,
        chat_id: int,
        actor: Person,
        amount: int,
        round_id: int | None,
        update_id: int | None,
    ) -> CommandResult:
        def decide(step: StepInput) -> Transition[RoundOrSeat]:
            return command(
                step.round, actor.id, amount, free_chips=step.free_chips, now_ms=step.now_ms
            )

        return await self.steps.run(
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

        def decide(step: StepInput) -> Transition[RoundOrSeat]:
            return engine.grab(step.round, actor.id, step.now_ms)

        return await self.steps.run(
            chat_id=chat_id,
            round_id=round_id,
            decide=decide,
            actor=actor,
            update_id=update_id,
            joinable=True,
        )

    async def advance(self, round_id: int, phase: Phase | None = None) -> CommandResult:
        """Apply a round's deadline if it has passed; nothing if not (a duplicate timer, or
        another worker applied it first). ``phase``: only that phase's deadline (a timer
        set for it); nothing once the round has left it."""

        def decide(step: StepInput) -> Transition[RoundOrSeat]:
            if phase is not None and step.round.phase is not phase:
                raise NotDue("phase_over", phase=step.round.phase.value)
            return engine.advance(step.whole(), step.now_ms, player_seeds=step.player_seeds)

        try:
            with urgent():  # before waiting commands for the database (bot/store/db.py)
                return await self.steps.run(
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

        def decide(step: StepInput) -> Transition[RoundOrSeat]:
            return engine.move_window(step.round, phase, max(opens_at_ms, step.now_ms))

        try:
            with urgent():  # what shows a deadline, as the deadline's advance
                return await self.steps.run(chat_id=None, round_id=round_id, decide=decide)
        except NotDue:
            return CommandResult()

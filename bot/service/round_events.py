"""What a round's steps tell those who react to them: that a round's betting window
opened, as bidding ended or as a round started when the house deals, and that a round's
new state was written. The standing bets listen to the first (``bot.service.autobets``:
the group's are placed as betting opens), the live feed to the second
(``bot.service.round_changes``); the round use cases tell, knowing nothing of who
listens."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

from bot.engine.autobets import AutobetRun
from bot.engine.round import DealerChosen, Phase, Round, RoundStarted, RoundState
from bot.service.records import CommandResult

#: Told that a round's betting window opened (the round as it opened); returns what
#: placing the group's standing bets did, which the step's result carries as its
#: ``autobets``, or ``None`` when it placed none. It does not raise: the step it reacts to
#: is written already.
BettingOpenedListener = Callable[[Round], Awaitable[AutobetRun | None]]
#: Told of a round's state as a step wrote it (committed). It must return at once and
#: not raise: the step is written already, and its caller waits.
CommittedListener = Callable[[RoundState], None]


def betting_opened(result: CommandResult) -> Round | None:
    """The round whose betting this command or deadline opened, if it opened one."""
    started = result.started
    if started is not None and started.phase is Phase.BETTING:
        return started  # a re-deal when the house deals
    state = result.round
    if state is None or state.phase is not Phase.BETTING:
        return None
    if not any(isinstance(event, (DealerChosen, RoundStarted)) for event in result.events):
        return None
    assert isinstance(state, Round)  # opened by a deadline or a start: read whole
    return state


class RoundEvents:
    """The listeners of round steps. Every round start and command passes its result
    through ``told`` once it is written, so that a window that opens is heard of."""

    def __init__(self) -> None:
        self._betting_opened: list[BettingOpenedListener] = []
        self._committed: list[CommittedListener] = []

    def on_betting_opened(self, listener: BettingOpenedListener) -> None:
        """Tell ``listener`` of every betting window a round step opens from now on."""
        self._betting_opened.append(listener)

    def on_committed(self, listener: CommittedListener) -> None:
        """Tell ``listener`` of every round state a step writes from now on."""
        self._committed.append(listener)

    def committed(self, state: RoundState) -> None:
        """A step wrote ``state`` (its transaction committed)."""
        for listener in self._committed:
            listener(state)

    async def told(self, result: CommandResult) -> CommandResult:
        """``result`` once the listeners are told of what it did: of the rounds it wrote,
        and with the standing bets placed (``autobets``) when it opened betting."""
        if not result.duplicate:
            for state in (result.round, result.started):
                if state is not None:
                    self.committed(state)
        opened = betting_opened(result)
        if opened is None:
            return result
        for listener in self._betting_opened:
            run = await listener(opened)
            if run is not None:
                result = dataclasses.replace(result, autobets=run)
        return result

"""The board as the round is now, and a window the group was shown late opened anew."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import NamedTuple

from telegram import InlineKeyboardMarkup

from bot.engine.round import WINDOW_LATE_MS, Phase, Round, window_ms
from bot.service.game import CommandResult
from bot.telegram.lookups import People
from bot.telegram.miniapp_links import MiniAppLinks, no_links
from bot.telegram.service_needs import BoardService
from bot.telegram.views import Views

log = logging.getLogger(__name__)


def board_people(state: Round) -> list[int]:
    """Everyone a round's board names: bettors, the high bidder, the dealer."""
    ids = [bet.user_id for bet in state.bets]
    ids += [user for user in (state.high_bidder, state.dealer_id) if user is not None]
    return ids


class RenderedBoard(NamedTuple):
    """A round as read, its board's text and buttons, and the message id of its board
    as recorded in the same read (``None``: not posted yet)."""

    state: Round
    text: str
    markup: InlineKeyboardMarkup | None
    message_id: int | None


class BoardRenderer:
    """Renders a round's board as the round is when it is read; a board that shows the
    group a phase later than its window opened opens that window anew (docs/rules.md §1)."""

    def __init__(
        self,
        service: BoardService,
        people: People,
        clock: Callable[[], int],
        links: MiniAppLinks | None = None,
    ) -> None:
        self.service = service
        self.people = people
        self.clock = clock
        #: The Mini App's links: the board's button opening it for the group.
        self.links = links or no_links()
        #: Told of a window moved to open when its board reached the group (the deadline
        #: is timed again: ``RoundProgress.window_moved``).
        self.window_moved: Callable[[CommandResult], None] | None = None

    async def render(
        self, round_id: int, *, shown_now: bool = False, phase: Phase | None = None
    ) -> RenderedBoard:
        """The round as it is, its board, and the board's message as recorded in the same
        read. ``shown_now``: the board shows the round's phase (if ``phase``, only that
        one) to the group now, so a window that opened unseen opens now instead."""
        found = await self.service.round_on_board(round_id)
        if found is None:
            raise LookupError(f"round {round_id} is gone")
        state = found.round
        if shown_now and (phase is None or state.phase is phase):
            state = await self.opened_when_seen(state, self.clock())
        views = Views(state.settings)  # a running round keeps the settings it started with
        people = await self.people.names(board_people(state))
        link = self.links.group_link(state.chat_id)
        text, markup = views.board(state, people, self.clock(), table_link=link)
        return RenderedBoard(state, text, markup, found.board_message_id)

    async def opened_when_seen(self, state: Round, opens_at_ms: int) -> Round:
        """The round with its phase's window opening at ``opens_at_ms`` if it opened more
        than ``WINDOW_LATE_MS`` before (docs/rules.md §1: the group never loses time it was
        not shown), rescheduled; else as it is. Nothing is read or written unless late."""
        if not state.phase.is_open:
            return state
        if opens_at_ms + window_ms(state) - state.deadline_ms <= WINDOW_LATE_MS:
            return state
        result = await self.service.move_window(state.id, state.phase, opens_at_ms)
        if result.round is None:  # the round moved on meanwhile: as it is then
            return state
        log.info(
            "round %s: its %s board reached the group late; the window opens now",
            state.id,
            state.phase.value,
        )
        if self.window_moved is not None:
            self.window_moved(result)
        assert isinstance(result.round, Round)  # a window moves on the round read whole
        return result.round

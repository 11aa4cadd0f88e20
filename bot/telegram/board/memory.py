"""What the board's parts share: what this process remembers of the boards it shows and
the work it has on their way, and how that work is queued."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from cachetools import TTLCache
from telegram import InlineKeyboardMarkup

from bot.engine.round import Phase
from bot.engine.settings import MAX_WINDOW_SECONDS
from bot.priority import urgent

#: Boards remembered at once (their message id and what they show): every open round's.
BOARDS_CACHED = 20_000
#: How long a board is remembered at most. A round's last edit forgets it; this bounds
#: what a round whose end this process never saw (another worker's) keeps: after it, the
#: message id is read from the database and what it shows is sent again.
BOARD_CACHE_SECONDS = 4 * MAX_WINDOW_SECONDS

#: A board's text and buttons.
Rendered = tuple[str, InlineKeyboardMarkup | None]
#: A message's work, queued in a chat's outbox or beside it.
Job = Callable[[], Awaitable[None]]


def urgently(send: Job) -> Job:
    """``send`` run as urgent work: what shows a deadline (see ``Board``)."""

    async def job() -> None:
        with urgent():
            await send()

    return job


class BoardMemory:
    """What each board shows, the phases recorded, the chats' edit times, the work this
    process has on its way: bounded caches, or entries kept only while their work lasts."""

    def __init__(self, *, edit_seconds: float) -> None:
        self.shown: TTLCache[int, Rendered] = TTLCache(BOARDS_CACHED, BOARD_CACHE_SECONDS)
        #: Each round's board message as this process last read or recorded it: a press
        #: on it needs no look (``BoardPresses``).
        self.board_ids: TTLCache[int, int] = TTLCache(BOARDS_CACHED, BOARD_CACHE_SECONDS)
        #: The phase each round's board was last recorded showing (by this process).
        self.phase_recorded: TTLCache[int, Phase] = TTLCache(BOARDS_CACHED, BOARD_CACHE_SECONDS)
        #: When each chat's board was last edited, while that still holds its next edit back.
        self.edited_at: TTLCache[int, float] = TTLCache(BOARDS_CACHED, edit_seconds)
        #: Rounds with an edit on its way: later changes ride along with it.
        self.edit_pending: set[int] = set()
        #: Boards and results this process has queued and not finished sending: the sweep
        #: looks for undelivered ones every time and must not queue them again.
        self.delivering: set[tuple[str, int]] = set()
        #: Rounds whose board message this process is sending now, and those of them
        #: that ended meanwhile (closed once the new message is recorded).
        self.posting: set[int] = set()
        self.close_after_post: set[int] = set()

    def queue_once(self, key: tuple[str, int], queue: Callable[[Job], None], send: Job) -> None:
        """Queue ``send`` (``queue``: in its chat's outbox, or beside it) under ``key``,
        unless this process has that key queued already; the key is let go once ``send``
        is done, sent or not."""
        if key in self.delivering:
            return
        self.delivering.add(key)

        async def job() -> None:
            try:
                await send()
            finally:
                self.delivering.discard(key)

        queue(job)

    def forget_quiet(self) -> None:
        """Forget the boards, phases recorded and edit times whose time ran out."""
        for cache in (self.shown, self.board_ids, self.phase_recorded, self.edited_at):
            cache.expire()

    def sizes(self) -> dict[str, int]:
        """Entries kept now, per round or per chat (each bounded, or transient)."""
        return {
            "shown": len(self.shown),
            "board_ids": len(self.board_ids),
            "phase_recorded": len(self.phase_recorded),
            "edited_at": len(self.edited_at),
            "edit_pending": len(self.edit_pending),
            "delivering": len(self.delivering),
            "posting": len(self.posting),
            "close_after_post": len(self.close_after_post),
        }

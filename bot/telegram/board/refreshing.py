"""When a round's board is edited: throttled for bets, at once for a change of phase."""

from __future__ import annotations

import asyncio
import time
from functools import partial

from bot.engine.round import Phase, RoundState
from bot.telegram.board.closing import BoardClosing
from bot.telegram.board.editing import BoardEditor
from bot.telegram.board.memory import BoardMemory
from bot.telegram.budget import Priority
from bot.telegram.delivery import ChatOutbox


class BoardRefresh:
    """Keeps each round's board up to date: at most one edit per chat every
    ``edit_seconds``, the latest state each time."""

    def __init__(
        self,
        outbox: ChatOutbox,
        memory: BoardMemory,
        editor: BoardEditor,
        closing: BoardClosing,
        *,
        edit_seconds: float,
    ) -> None:
        self.outbox = outbox
        self.memory = memory
        self.editor = editor
        self.closing = closing
        self.edit_seconds = edit_seconds
        self.tasks: set[asyncio.Task[None]] = set()

    def refresh(self, state: RoundState, *, at_once: bool = False) -> None:
        """Edit the round's board soon: at most one edit per chat every ``edit_seconds``,
        the latest state each time (several changes in between make one edit); or, for a
        change of phase (``at_once``), as soon as the chat's outbox gets to it. The end
        of a round is shown by its results (a message of their own, more urgent): the
        board's last edit, which takes its buttons away, goes beside the chat's queue,
        after every board and phase waiting for the bot's rate (``Priority.CLOSING``)."""
        if at_once and state.phase.is_open:
            self.outbox.put(state.chat_id, partial(self.edit, state.id, Priority.PHASE))
            return
        if at_once:
            self.closing.close(state.chat_id, state.id)
            return
        if state.id in self.memory.edit_pending:
            return
        self.memory.edit_pending.add(state.id)
        task = asyncio.get_running_loop().create_task(self._edit_later(state.chat_id, state.id))
        self.tasks.add(task)  # the loop keeps only weak references to tasks
        task.add_done_callback(self.tasks.discard)

    async def edit(
        self, round_id: int, priority: Priority = Priority.EDIT, *, only_in: Phase | None = None
    ) -> None:
        """Edit the round's board (``BoardEditor.edit``)."""
        edit = await self.editor.edit(round_id, priority, only_in=only_in)
        if edit is not None:
            # It showed the round open: if another worker ended the round (and made the
            # last edit) while this edit was on its way, it has just put buttons back.
            await self.closing.close_if_ended(edit.chat_id, round_id)

    def cancel(self) -> None:
        """Drop the edits waiting for their turn (stopping without sending them)."""
        for task in self.tasks:
            task.cancel()

    async def drain(self, timeout: float) -> None:
        """Wait for edits on their way to be queued."""
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=timeout)

    async def _edit_later(self, chat_id: int, round_id: int) -> None:
        wait = self.memory.edited_at.get(chat_id, 0.0) + self.edit_seconds - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        # Beside the chat's queue, not in it: an edit waits its turn behind every more
        # urgent message of the bot, and the chat's results must not wait behind it.
        self.outbox.put_aside(partial(self.edit, round_id))

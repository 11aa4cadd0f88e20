"""An ended round's board: its last edit takes the buttons away, and is recorded."""

from __future__ import annotations

from bot.telegram.board.editing import BoardEditor
from bot.telegram.board.memory import BoardMemory
from bot.telegram.budget import Priority
from bot.telegram.delivery import ChatOutbox
from bot.telegram.service_needs import BoardService


class BoardClosing:
    """Shows an ended round over on its board, once, also when the round ended while a
    board message of it was on its way (here or in another worker)."""

    def __init__(
        self,
        service: BoardService,
        outbox: ChatOutbox,
        memory: BoardMemory,
        editor: BoardEditor,
    ) -> None:
        self.service = service
        self.outbox = outbox
        self.memory = memory
        self.editor = editor

    def close(self, chat_id: int, round_id: int) -> None:
        """Show an ended round over on its board, its buttons gone (unless this process
        has that queued already), and record it: one this process did not live to make
        is made by the sweep (``redeliver``). Beside the chat's queue, after every board
        and phase waiting for the bot's rate (``Priority.CLOSING``)."""
        key = ("closing", round_id)
        if round_id in self.memory.posting and key not in self.memory.delivering:
            # A board of it is on its way: closed once Telegram has it and it is recorded
            # (the edit would find no message, or the one it replaces, now).
            self.memory.close_after_post.add(round_id)
            return

        async def send() -> None:
            # The board as recorded before the edit: if another worker records a new
            # one meanwhile, the mark below does nothing and the sweep closes that.
            message_id = await self.service.board_message(round_id)
            # Raises if it failed on the way for as long as it is tried: left to the
            # sweep. Refused (the message is gone): nothing more to do.
            await self.editor.edit(round_id, Priority.CLOSING, closing=True)
            await self.service.mark_board_closed(round_id, message_id)

        self.memory.queue_once(key, self.outbox.put_aside, send)

    async def close_if_ended(self, chat_id: int, round_id: int) -> None:
        """Once a board message is recorded, or an edit showing the round open landed: if
        the round ended meanwhile (in another worker, whose last edit then found the
        message this one replaced, or came before this edit), close it. The record or
        edit comes before this look, and another worker's end before its last edit's:
        one of the two sees the other. The board is recorded open again first, so that
        the sweep closes it if this process does not live to."""
        if await self.service.round_ended(round_id):
            await self.service.mark_board_open(round_id)
            self.close(chat_id, round_id)

    def done_posting(self, chat_id: int, round_id: int) -> None:
        """A board message of the round is sent (or not) and recorded: if the round ended
        meanwhile, its board loses its buttons now."""
        self.memory.posting.discard(round_id)
        if round_id in self.memory.close_after_post:
            self.memory.close_after_post.discard(round_id)
            self.close(chat_id, round_id)

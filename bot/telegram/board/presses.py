"""A press on a round's button tells the bot which message it is on: one that is not the
round's board is a board a worker sent and died before recording (Telegram took it, and
its id was never learnt), to be taken down."""

from __future__ import annotations

from bot.telegram.board.memory import BoardMemory
from bot.telegram.delivery import ChatOutbox
from bot.telegram.service_needs import BoardService


class BoardPresses:
    """Records a message a round's button was pressed on, if it is not the round's board,
    as one to take down: the sweep takes it down as it does a board a new phase's
    replaced (``BoardSweep``, after a lease: its worker, if alive, records it as the
    board before that, and it stays). Nothing else finds it: nobody alive knows its id,
    and neither a new phase nor the round's end looks at the messages around the board."""

    def __init__(self, service: BoardService, outbox: ChatOutbox, memory: BoardMemory) -> None:
        self.service = service
        self.outbox = outbox
        self.memory = memory

    def pressed(self, round_id: int, message_id: int) -> None:
        """A button of the round was pressed on ``message_id``: unless that is its board as
        this process knows it, look, beside the chat's queue."""
        if self.memory.board_ids.get(round_id) == message_id:
            return

        async def look() -> None:
            board = await self.service.board_message(round_id)
            if board:
                self.memory.board_ids[round_id] = board
            if board != message_id:
                await self.service.mark_stray_board(round_id, message_id)

        self.memory.queue_once(("pressed", round_id), self.outbox.put_aside, look)

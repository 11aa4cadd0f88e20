"""The delivery of boards and results in one unit of work.

A round row is the intent to post its board (``board_message_id IS NULL``) and, once it
ended, to send its results (``announced_at_ms IS NULL``): both are written in the
round's own transaction. A worker takes the job of sending one with a lease (``lease``,
compare-and-set on ``*_claimed_until_ms``), renews it while its message waits to go out,
and marks it delivered only after Telegram answered (``set_board_message``,
``mark_announced``). A worker that dies stops renewing; once its lease ran out another
worker, or the restarted one, sends the message again. So no crash loses a message, and
only a crash between Telegram's answer and recording it repeats one.
"""

from __future__ import annotations

from enum import Enum

from sqlalchemy import and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from bot.store.models import RoundRow
from bot.store.rounds import OPEN_PHASES

#: ``board_message_id`` of a round whose board Telegram refused: it is not tried again.
BOARD_REFUSED = 0


class Message(Enum):
    """What is delivered: a round's board or its results."""

    BOARD = "board"
    RESULTS = "results"


#: (column that says delivered, column of the lease) of each message.
_COLUMNS: dict[Message, tuple[InstrumentedAttribute[int | None], ...]] = {
    Message.BOARD: (RoundRow.board_message_id, RoundRow.board_claimed_until_ms),
    Message.RESULTS: (RoundRow.announced_at_ms, RoundRow.announcement_claimed_until_ms),
}


class Deliveries:
    """Boards and results on their way to the group."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def lease(
        self, round_id: int, message: Message, *, now_ms: int, lease_ms: int, renew: bool
    ) -> bool:
        """Hold the job of sending ``message`` until ``now_ms + lease_ms`` if it is not
        delivered and (unless ``renew``) nobody holds a lease that has not run out."""
        delivered, claimed_until = _COLUMNS[message]
        condition = [RoundRow.id == round_id, delivered.is_(None)]
        if not renew:
            condition.append(or_(claimed_until.is_(None), claimed_until <= now_ms))
        leased = await self.session.execute(
            update(RoundRow).where(*condition).values({claimed_until: now_ms + lease_ms})
        )
        return bool(leased.rowcount)  # type: ignore[attr-defined]

    async def set_board_message(self, round_id: int, message_id: int) -> None:
        """Telegram has the round's board (``BOARD_REFUSED``: it refused it)."""
        await self.session.execute(
            update(RoundRow).where(RoundRow.id == round_id).values(board_message_id=message_id)
        )

    async def mark_announced(self, round_id: int, now_ms: int) -> None:
        """Telegram took the round's results (or refused them for good)."""
        await self.session.execute(
            update(RoundRow)
            .where(RoundRow.id == round_id, RoundRow.announced_at_ms.is_(None))
            .values(announced_at_ms=now_ms)
        )

    async def board_message(self, round_id: int) -> int | None:
        """The board's message id: ``None`` until Telegram has it."""
        message_id: int | None = await self.session.scalar(
            select(RoundRow.board_message_id).where(RoundRow.id == round_id)
        )
        return message_id

    async def unposted_boards(
        self, *, now_ms: int, unclaimed_grace_ms: int
    ) -> list[tuple[int, int]]:
        """Open rounds whose board is not posted and that no worker is posting: (round id,
        chat id); one never claimed is left to the worker that started it for
        ``unclaimed_grace_ms``."""
        claimed_until = RoundRow.board_claimed_until_ms
        rows = await self.session.execute(
            select(RoundRow.id, RoundRow.chat_id)
            .where(
                RoundRow.phase.in_(OPEN_PHASES),
                RoundRow.board_message_id.is_(None),
                or_(
                    claimed_until <= now_ms,
                    and_(
                        claimed_until.is_(None),
                        RoundRow.started_at_ms <= now_ms - unclaimed_grace_ms,
                    ),
                ),
            )
            .order_by(RoundRow.id)
        )
        return [(round_id, chat_id) for round_id, chat_id in rows.tuples()]

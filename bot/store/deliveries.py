"""The delivery of boards and results: the leases and the records that Telegram has them
(``DeliveryRecords``, a statement each on the hot path's connections), and what the
sweep and the board read of them in a unit of work (``Deliveries``).

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

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.db import Database
from bot.store.models import RoundRow
from bot.store.round_sql import Positional
from bot.store.rounds import OPEN_PHASES

#: ``board_message_id`` of a round whose board Telegram refused: it is not tried again.
BOARD_REFUSED = 0


class Message(Enum):
    """What is delivered: a round's board or its results."""

    BOARD = "board"
    RESULTS = "results"


#: (column that says delivered, column of the lease) of each message.
_COLUMNS: dict[Message, tuple[str, str]] = {
    Message.BOARD: ("board_message_id", "board_claimed_until_ms"),
    Message.RESULTS: ("announced_at_ms", "announcement_claimed_until_ms"),
}


def _lease_statement(message: Message, renew: bool) -> str:
    delivered, claimed_until = _COLUMNS[message]
    free = "" if renew else f" AND ({claimed_until} IS NULL OR {claimed_until} <= :now)"
    return (
        f"UPDATE rounds SET {claimed_until} = :claimed_until "
        f"WHERE id = :round_id AND {delivered} IS NULL{free}"
    )


#: The lease of each message, taken (``renew`` False) or renewed.
_LEASES = {
    (message, renew): _lease_statement(message, renew)
    for message in Message
    for renew in (False, True)
}
_SET_BOARD_MESSAGE = "UPDATE rounds SET board_message_id = :message_id WHERE id = :round_id"
_MARK_ANNOUNCED = (
    "UPDATE rounds SET announced_at_ms = :now WHERE id = :round_id AND announced_at_ms IS NULL"
)
_POSTGRES = {
    statement: Positional.of(statement)
    for statement in (*_LEASES.values(), _SET_BOARD_MESSAGE, _MARK_ANNOUNCED)
}


class DeliveryRecords:
    """The leases on a round's board and results and the records that Telegram has them:
    one ``UPDATE`` each, written as the hot path writes (SQLite: through the writer's
    batches, ``Database.sqlite_batches``; PostgreSQL: a statement of its own on the bare
    driver's pool), no unit of work of SQLAlchemy's around it."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def lease(
        self, round_id: int, message: Message, *, now_ms: int, lease_ms: int, renew: bool
    ) -> bool:
        """Hold the job of sending ``message`` until ``now_ms + lease_ms`` if it is not
        delivered and (unless ``renew``) nobody holds a lease that has not run out."""
        params = {"round_id": round_id, "now": now_ms, "claimed_until": now_ms + lease_ms}
        return await self._update(_LEASES[message, renew], params) == 1

    async def set_board_message(self, round_id: int, message_id: int) -> None:
        """Telegram has the round's board (``BOARD_REFUSED``: it refused it)."""
        await self._update(_SET_BOARD_MESSAGE, {"round_id": round_id, "message_id": message_id})

    async def mark_announced(self, round_id: int, now_ms: int) -> None:
        """Telegram took the round's results (or refused them for good)."""
        await self._update(_MARK_ANNOUNCED, {"round_id": round_id, "now": now_ms})

    async def _update(self, statement: str, params: dict[str, int]) -> int:
        """Run one ``UPDATE`` of a round row (by its id); the rows it changed (0 or 1)."""
        batches = self.db.sqlite_batches
        if batches is not None:
            # A body of a batch runs in a savepoint; its one statement needs no more.
            changed: int = await batches.run(
                lambda connection: connection.execute(statement, params).rowcount
            )
            return changed
        assert self.db.driver_pool is not None
        postgres = _POSTGRES[statement]
        async with self.db.driver_pool.connection() as driver:
            # Outside a transaction: the statement commits alone. Its status is the
            # command tag, "UPDATE <rows>".
            status: str = await driver.execute(postgres.sql, *postgres.arguments(params))
        return int(status.rsplit(" ", 1)[1])


class Deliveries:
    """Boards and results on their way to the group, as a unit of work reads them."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

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

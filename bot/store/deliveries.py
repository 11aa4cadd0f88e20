"""The delivery of boards and results: the leases and the records that Telegram has them
(``DeliveryRecords``), and what the sweep and the board read of them (``DeliveryLookup``):
a statement each on the hot path's connections.

A round row is the intent to post its board (``board_message_id IS NULL``) and, once it
ended, to send its results (``announced_at_ms IS NULL``) and to take the live buttons
off its board (``board_closed_at_ms IS NULL``): all are written in the round's own
transaction. A worker takes the job of sending one with a lease (``lease``,
compare-and-set on ``*_claimed_until_ms``), renews it while its message waits to go out,
and marks it delivered only after Telegram answered (``set_board_message``,
``mark_announced``). A worker that dies stops renewing; once its lease ran out another
worker, or the restarted one, sends the message again. So no crash loses a message, and
only a crash between Telegram's answer and recording it repeats one. For a board, which
has buttons, the worker that first takes the job keeps the newest message id it knows in
the chat (``board_known_before``): one that takes the job over is told it, and takes the
buttons off such a copy, which came after it (``bot.telegram.strays``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum
from typing import Any

from bot.store.chat_bots import served
from bot.store.db import Database
from bot.store.gatherings import Gathering
from bot.store.models import OPEN_PHASES_SQL, REPLACED_BOARD_SQL, UNCLOSED_SQL
from bot.store.statements import Positional

#: ``board_message_id`` of a round whose board Telegram refused: it is not tried again.
BOARD_REFUSED = 0


class Message(Enum):
    """What is delivered: a round's board or its results."""

    BOARD = "board"
    RESULTS = "results"


@dataclass(frozen=True, slots=True)
class BoardClaim:
    """The job of posting a round's board, taken. ``copy_after``, when it was taken over
    from a worker whose lease ran out: the newest message id in the chat that the worker
    who first took it knew of. Had that one sent the board and died before recording it,
    the board is after this id, with live buttons."""

    copy_after: int | None = None


#: (column that says delivered, column of the lease) of each message.
_COLUMNS: dict[Message, tuple[str, str]] = {
    Message.BOARD: ("board_message_id", "board_claimed_until_ms"),
    Message.RESULTS: ("announced_at_ms", "announcement_claimed_until_ms"),
}


def _take_statement(message: Message) -> str:
    delivered, claimed_until = _COLUMNS[message]
    return (
        f"UPDATE rounds SET {claimed_until} = :claimed_until "
        f"WHERE id = :round_id AND {delivered} IS NULL "
        f"AND ({claimed_until} IS NULL OR {claimed_until} <= :now)"
    )


#: The lease of each message taken, unless someone holds one that has not run out.
_TAKES = {message: _take_statement(message) for message in Message}


def _renewals_statement(message: Message, round_ids: str) -> str:
    delivered, claimed_until = _COLUMNS[message]
    return (
        f"UPDATE rounds SET {claimed_until} = :claimed_until "
        f"WHERE id IN ({round_ids}) AND {delivered} IS NULL RETURNING id"
    )


#: Rounds' leases on one kind of message renewed in one statement (one round's alike),
#: the rounds' ids as one JSON array (as ``bot.store.table_reads`` passes a list): those
#: still to be sent are returned.
_RENEWALS = {
    message: (
        _renewals_statement(message, "SELECT value FROM json_each(:round_ids)"),
        Positional.of(
            _renewals_statement(
                message,
                "SELECT CAST(jsonb_array_elements_text(CAST(:round_ids AS jsonb)) AS bigint)",
            )
        ),
    )
    for message in Message
}
#: A new board message is not closed yet, whatever the one it replaced was; nor to be taken
#: down, if a press on it was recorded first (``_MARK_STRAY_BOARD``).
_SET_BOARD_MESSAGE = (
    "UPDATE rounds SET board_message_id = :message_id, board_phase = :phase, "
    "board_closed_at_ms = NULL, "
    "board_replaced_at_ms = CASE WHEN replaced_board_message_id = :message_id "
    "THEN NULL ELSE board_replaced_at_ms END, "
    "replaced_board_message_id = CASE WHEN replaced_board_message_id = :message_id "
    "THEN NULL ELSE replaced_board_message_id END "
    "WHERE id = :round_id"
)
#: A new phase's board in place of ``:old`` (unless another worker replaced that first),
#: the old one remembered until it is taken down; not while another is remembered to be
#: taken down, which it would make the database forget (but the new board itself, marked
#: by a press that came before this record, is no stray).
_REPLACE_BOARD_MESSAGE = (
    "UPDATE rounds SET board_message_id = :message_id, board_phase = :phase, "
    "board_closed_at_ms = NULL, replaced_board_message_id = :old, board_replaced_at_ms = :now "
    "WHERE id = :round_id AND board_message_id = :old "
    "AND COALESCE(replaced_board_message_id, :message_id) = :message_id"
)
#: The board ``:message_id`` (still the round's) shows ``:phase``.
_MARK_PHASE_SHOWN = (
    "UPDATE rounds SET board_phase = :phase WHERE id = :round_id AND board_message_id = :message_id"
)
#: A message a button of the round was pressed on that is not its board (none is
#: remembered to be taken down already): one to take down, as a replaced board is.
_MARK_STRAY_BOARD = (
    "UPDATE rounds SET replaced_board_message_id = :message_id, board_replaced_at_ms = :now "
    "WHERE id = :round_id AND replaced_board_message_id IS NULL "
    "AND (board_message_id IS NULL OR board_message_id <> :message_id)"
)
_FORGET_REPLACED_BOARD = (
    "UPDATE rounds SET replaced_board_message_id = NULL, board_replaced_at_ms = NULL "
    "WHERE id = :round_id AND replaced_board_message_id = :message_id"
)
_MARK_ANNOUNCED = (
    "UPDATE rounds SET announced_at_ms = :now WHERE id = :round_id AND announced_at_ms IS NULL"
)
#: Only if the board is still the message that was edited (-1: none): one another worker
#: posted meanwhile is still to be closed.
_MARK_BOARD_CLOSED = (
    "UPDATE rounds SET board_closed_at_ms = :now "
    "WHERE id = :round_id AND board_closed_at_ms IS NULL "
    "AND COALESCE(board_message_id, -1) = :message_id"
)
#: The board shows the round open again (an edit of another worker's, rendered before the
#: round ended, landed after its last edit): to be closed again, by the sweep if need be.
_MARK_BOARD_OPEN = (
    "UPDATE rounds SET board_closed_at_ms = NULL "
    "WHERE id = :round_id AND board_closed_at_ms IS NOT NULL"
)
#: The board's job taken first: with the newest message id its worker knew in the chat.
_FIRST_BOARD_CLAIM = (
    "UPDATE rounds SET board_claimed_until_ms = :claimed_until, board_known_before = :newest "
    "WHERE id = :round_id AND board_message_id IS NULL AND board_claimed_until_ms IS NULL"
)
#: What the worker that first took the board's job knew (read once the job is taken over).
_BOARD_KNOWN_BEFORE = "SELECT board_known_before FROM rounds WHERE id = :round_id"
_POSTGRES = {
    statement: Positional.of(statement)
    for statement in (
        *_TAKES.values(),
        _FIRST_BOARD_CLAIM,
        _BOARD_KNOWN_BEFORE,
        _SET_BOARD_MESSAGE,
        _REPLACE_BOARD_MESSAGE,
        _MARK_PHASE_SHOWN,
        _MARK_STRAY_BOARD,
        _FORGET_REPLACED_BOARD,
        _MARK_ANNOUNCED,
        _MARK_BOARD_CLOSED,
        _MARK_BOARD_OPEN,
    )
}


@dataclass(frozen=True, slots=True)
class _Renewal:
    """A lease renewed: of which message, of which round, until when."""

    message: Message
    round_id: int
    claimed_until: int


class DeliveryRecords:
    """The leases on a round's board and results and the records that Telegram has them:
    one ``UPDATE`` each, written as the hot path writes (SQLite: through the writer's
    batches, ``Database.sqlite_batches``; PostgreSQL: a statement of its own on the bare
    driver's pool), no unit of work of SQLAlchemy's around it."""

    def __init__(self, db: Database) -> None:
        self.db = db
        #: Renewals of one kind of lease that come while one is written, written together
        #: next: a worker's messages waiting for their turn renew at the same ticks
        #: (``bot.telegram.board.lease``), so a tick costs two statements, not one each.
        self.renewals: Gathering[_Renewal, bool] = Gathering(self._renew_one, self._renew_many)

    async def lease(
        self, round_id: int, message: Message, *, now_ms: int, lease_ms: int, renew: bool
    ) -> bool:
        """Hold the job of sending ``message`` until ``now_ms + lease_ms`` if it is not
        delivered and (unless ``renew``) nobody holds a lease that has not run out."""
        if renew:
            return await self.renewals.run(message, _Renewal(message, round_id, now_ms + lease_ms))
        params = {"round_id": round_id, "now": now_ms, "claimed_until": now_ms + lease_ms}
        return await self._update(_TAKES[message], params) == 1

    async def _renew_one(self, renewal: _Renewal) -> bool:
        (held,) = await self._renew_many([renewal])
        return held

    async def _renew_many(self, renewals: list[_Renewal]) -> list[bool]:
        """Renewals of one kind of lease in one statement. Several came within one write's
        time of each other: each is held until the latest of the times asked (a few
        milliseconds more than some asked, never less)."""
        sqlite, postgres = _RENEWALS[renewals[0].message]
        params = {
            "round_ids": json.dumps([renewal.round_id for renewal in renewals]),
            "claimed_until": max(renewal.claimed_until for renewal in renewals),
        }
        held = {row[0] for row in await self.db.write_returning(sqlite, postgres, params)}
        return [renewal.round_id in held for renewal in renewals]

    async def claim_board(
        self, round_id: int, *, now_ms: int, lease_ms: int, newest_known: int | None
    ) -> BoardClaim | None:
        """Take the job of posting the round's board until ``now_ms + lease_ms`` (``None``:
        it is posted, or someone holds a lease that has not run out). Taken first, it
        keeps ``newest_known``, the newest message id this worker knows in the chat;
        taken over from a worker whose lease ran out, it says what that one knew."""
        params = {
            "round_id": round_id,
            "now": now_ms,
            "claimed_until": now_ms + lease_ms,
            "newest": newest_known,
        }
        if await self._update(_FIRST_BOARD_CLAIM, params) == 1:
            return BoardClaim()
        if await self._update(_TAKES[Message.BOARD], params) != 1:
            return None
        row = await self.db.read_one(
            _BOARD_KNOWN_BEFORE, _POSTGRES[_BOARD_KNOWN_BEFORE], {"round_id": round_id}
        )
        return BoardClaim(None if row is None else row[0])

    async def set_board_message(self, round_id: int, message_id: int, phase: str | None) -> None:
        """Telegram has the round's board, showing ``phase`` (``BOARD_REFUSED``, no phase:
        it refused it)."""
        params = {"round_id": round_id, "message_id": message_id, "phase": phase}
        await self._update(_SET_BOARD_MESSAGE, params)

    async def replace_board_message(
        self, round_id: int, old: int, new: int, phase: str, *, now_ms: int
    ) -> bool:
        """Telegram has a new board message, ``new``, showing ``phase``, in place of
        ``old``, which is to be taken down; False (nothing written) if the board is no
        longer ``old``: another worker replaced it first, and ``new`` is a second board."""
        params = {
            "round_id": round_id,
            "old": old,
            "message_id": new,
            "phase": phase,
            "now": now_ms,
        }
        return await self._update(_REPLACE_BOARD_MESSAGE, params) == 1

    async def mark_phase_shown(self, round_id: int, message_id: int, phase: str) -> None:
        """The board ``message_id`` shows ``phase`` (nothing if it is no longer the board)."""
        params = {"round_id": round_id, "message_id": message_id, "phase": phase}
        await self._update(_MARK_PHASE_SHOWN, params)

    async def mark_stray_board(self, round_id: int, message_id: int, *, now_ms: int) -> bool:
        """``message_id`` shows the round's buttons and is not its board: to be taken down
        as a replaced board is (``forget_replaced_board`` once it is). False (nothing
        written) if it is the board, or another board is remembered to be taken down."""
        params = {"round_id": round_id, "message_id": message_id, "now": now_ms}
        return await self._update(_MARK_STRAY_BOARD, params) == 1

    async def forget_replaced_board(self, round_id: int, message_id: int) -> None:
        """The replaced board ``message_id`` is deleted, or has no buttons left."""
        params = {"round_id": round_id, "message_id": message_id}
        await self._update(_FORGET_REPLACED_BOARD, params)

    async def mark_announced(self, round_id: int, now_ms: int) -> None:
        """Telegram took the round's results (or refused them for good)."""
        await self._update(_MARK_ANNOUNCED, {"round_id": round_id, "now": now_ms})

    async def mark_board_closed(self, round_id: int, message_id: int | None, now_ms: int) -> None:
        """The ended round's board, ``message_id`` (``None``: it had none), shows it over
        without buttons; nothing if its board is another message by now."""
        params = {
            "round_id": round_id,
            "now": now_ms,
            "message_id": -1 if message_id is None else message_id,
        }
        await self._update(_MARK_BOARD_CLOSED, params)

    async def mark_board_open(self, round_id: int) -> None:
        """The ended round's board shows buttons again: it is to be closed again."""
        await self._update(_MARK_BOARD_OPEN, {"round_id": round_id})

    async def _update(self, statement: str, params: dict[str, Any]) -> int:
        """Run one ``UPDATE`` of a round row (by its id); the rows it changed (0 or 1)."""
        return await self.db.write_one(statement, _POSTGRES[statement], params)


#: Open rounds whose board is not posted and that no worker is posting (a lease ran out,
#: or none was taken and the round started before ``:unclaimed_before``).
_UNPOSTED_BOARDS = f"""
SELECT id, chat_id FROM rounds
WHERE {OPEN_PHASES_SQL} AND board_message_id IS NULL
  AND (board_claimed_until_ms <= :now
       OR (board_claimed_until_ms IS NULL AND started_at_ms <= :unclaimed_before))
  AND {served("rounds.chat_id")}
ORDER BY id
"""
#: Ended rounds whose results have not gone out and that no worker is sending. The first
#: three conditions are ix_rounds_unannounced's (its partial condition, then its columns),
#: so that a plan can read that small index (SQLite's does; PostgreSQL's reads it or the
#: window's range of the index on ended_at_ms).
_UNANNOUNCED = f"""
SELECT id FROM rounds
WHERE announced_at_ms IS NULL AND phase IN ('settled', 'void') AND ended_at_ms >= :since
  AND (announcement_claimed_until_ms <= :now
       OR (announcement_claimed_until_ms IS NULL AND ended_at_ms <= :unclaimed_before))
  AND {served("rounds.chat_id")}
ORDER BY id
"""
#: Ended rounds whose board's last edit has not been made, that ended before
#: ``:unclosed_before`` (the worker that ended a round makes it at once): the first two
#: conditions are ix_rounds_unclosed's.
_UNCLOSED_BOARDS = f"""
SELECT id, chat_id FROM rounds
WHERE {UNCLOSED_SQL} AND phase IN ('settled', 'void') AND ended_at_ms <= :unclosed_before
  AND {served("rounds.chat_id")}
ORDER BY id
"""
#: Board messages replaced by a new phase's before ``:replaced_before`` and not yet taken
#: down (the worker that replaced one takes it down at once): ix_rounds_replaced_board's.
_REPLACED_BOARDS = f"""
SELECT id, chat_id, replaced_board_message_id FROM rounds
WHERE {REPLACED_BOARD_SQL} AND board_replaced_at_ms <= :replaced_before
  AND {served("rounds.chat_id")}
ORDER BY id
"""
#: Open rounds whose board (posted, not refused) does not show their phase yet.
_UNSHOWN_PHASES = f"""
SELECT id, chat_id, phase FROM rounds
WHERE {OPEN_PHASES_SQL} AND board_message_id > 0
  AND (board_phase IS NULL OR board_phase <> phase)
  AND {served("rounds.chat_id")}
ORDER BY id
"""
_BOARD_MESSAGE = "SELECT board_message_id FROM rounds WHERE id = :round_id"
_BOARDS = "SELECT board_message_id, replaced_board_message_id FROM rounds WHERE id = :round_id"
_BOARD_SHOWS = (
    "SELECT phase, deadline_ms, board_message_id, board_phase FROM rounds WHERE id = :round_id"
)
_PHASE = "SELECT phase FROM rounds WHERE id = :round_id"
_READS_POSTGRES = {
    statement: Positional.of(statement)
    for statement in (
        _UNPOSTED_BOARDS,
        _UNANNOUNCED,
        _UNCLOSED_BOARDS,
        _REPLACED_BOARDS,
        _UNSHOWN_PHASES,
        _BOARD_MESSAGE,
        _BOARDS,
        _BOARD_SHOWS,
        _PHASE,
    )
}


class DeliveryLookup:
    """What the sweep and the board read of deliveries: one statement each on a connection
    of the hot path's (SQLite: the reader's thread; PostgreSQL: the bare driver's pool),
    no transaction of SQLAlchemy's around it. The sweep reads them every second, and
    finds nothing nearly every time: through a unit of work each read cost a session,
    several thread hops and the statement's compilation. The sweep's reads find the
    rounds of the bot's own groups (``bot.store.chat_bots``)."""

    def __init__(self, db: Database, *, bot_id: int = 0) -> None:
        self.db = db
        self.bot_id = bot_id

    async def board_message(self, round_id: int) -> int | None:
        """The board's message id: ``None`` until Telegram has it (or no such round)."""
        params = {"round_id": round_id}
        row = await self.db.read_one(_BOARD_MESSAGE, _READS_POSTGRES[_BOARD_MESSAGE], params)
        return None if row is None else row[0]

    async def boards(self, round_id: int) -> tuple[int | None, int | None]:
        """The board's message id and that of a board replaced (or a stray) still to be
        taken down (``None``: none, or no such round)."""
        params = {"round_id": round_id}
        row = await self.db.read_one(_BOARDS, _READS_POSTGRES[_BOARDS], params)
        return (None, None) if row is None else (row[0], row[1])

    async def board_shows(self, round_id: int) -> tuple[str, int, int | None, str | None] | None:
        """The round's phase and deadline, its board's message id and the phase the board
        shows (``None``: no such round)."""
        params = {"round_id": round_id}
        row = await self.db.read_one(_BOARD_SHOWS, _READS_POSTGRES[_BOARD_SHOWS], params)
        return None if row is None else (str(row[0]), row[1], row[2], row[3])

    async def phase(self, round_id: int) -> str | None:
        """The round's phase as stored (``None``: no such round)."""
        row = await self.db.read_one(_PHASE, _READS_POSTGRES[_PHASE], {"round_id": round_id})
        return None if row is None else str(row[0])

    async def unposted_boards(
        self, *, now_ms: int, unclaimed_grace_ms: int
    ) -> list[tuple[int, int]]:
        """Open rounds whose board is not posted and that no worker is posting: (round id,
        chat id), by id; one never claimed is left to the worker that started it for
        ``unclaimed_grace_ms``."""
        params = {"now": now_ms, "unclaimed_before": now_ms - unclaimed_grace_ms}
        rows = await self._read_all(_UNPOSTED_BOARDS, params)
        return [(round_id, chat_id) for round_id, chat_id in rows]

    async def unannounced(
        self, *, now_ms: int, since_ms: int, unclaimed_grace_ms: int
    ) -> list[int]:
        """The ids of the rounds that ended at ``since_ms`` or later, whose results have not
        gone out and that no worker is sending (no lease running at ``now_ms``; a round
        never claimed is left to the worker that ended it for ``unclaimed_grace_ms``), by
        id."""
        params = {
            "now": now_ms,
            "since": since_ms,
            "unclaimed_before": now_ms - unclaimed_grace_ms,
        }
        return [round_id for (round_id,) in await self._read_all(_UNANNOUNCED, params)]

    async def unclosed_boards(self, *, now_ms: int, grace_ms: int) -> list[tuple[int, int]]:
        """Ended rounds whose board may still show live buttons: (round id, chat id), by
        id; one that ended less than ``grace_ms`` ago is left to the worker that ended
        it."""
        rows = await self._read_all(_UNCLOSED_BOARDS, {"unclosed_before": now_ms - grace_ms})
        return [(round_id, chat_id) for round_id, chat_id in rows]

    async def replaced_boards(self, *, now_ms: int, grace_ms: int) -> list[tuple[int, int, int]]:
        """Board messages replaced by a new phase's and not yet taken down: (round id, chat
        id, message id), by round; one replaced less than ``grace_ms`` ago is left to the
        worker that replaced it."""
        rows = await self._read_all(_REPLACED_BOARDS, {"replaced_before": now_ms - grace_ms})
        return [(round_id, chat_id, message_id) for round_id, chat_id, message_id in rows]

    async def unshown_phases(self) -> list[tuple[int, int, str]]:
        """Open rounds whose posted board does not show their phase: (round id, chat id,
        phase), by id (a phase just begun is among them until its worker shows it)."""
        rows = await self._read_all(_UNSHOWN_PHASES, {})
        return [(round_id, chat_id, str(phase)) for round_id, chat_id, phase in rows]

    async def _read_all(self, statement: str, params: dict[str, int]) -> list[Any]:
        params = {**params, "bot_id": self.bot_id}
        return await self.db.read_all(statement, _READS_POSTGRES[statement], params)

"""A group's slots in Telegram's limit on messages a bot sends it a minute
(``models.GroupSend``), shared by every worker of the bot and kept across restarts.

Taking a slot is one ``UPDATE`` that moves the group's oldest slot free for a window to
now, compare-and-set on its time: two workers that pick the same slot at once cannot
both take it (the second finds it taken and picks again). A group's slots are written
the first time this process sends it anything. Statements on the hot path's
connections (``Database.write_one``, ``read_one``): a group message is sent at most a
few times a minute, but there are many groups.
"""

from __future__ import annotations

from bot.store.db import Database
from bot.store.statements import Positional

#: Tries to take a slot when another worker took the one picked (at once, again).
TAKE_TRIES = 3

_TAKE = """
UPDATE group_sends SET sent_at_ms = :now
WHERE bot_id = :bot_id AND chat_id = :chat_id AND sent_at_ms <= :free_before
  AND slot = (SELECT slot FROM group_sends
              WHERE bot_id = :bot_id AND chat_id = :chat_id AND sent_at_ms <= :free_before
              ORDER BY sent_at_ms, slot LIMIT 1)
"""
_RETIME = (
    "UPDATE group_sends SET sent_at_ms = :delivered "
    "WHERE bot_id = :bot_id AND chat_id = :chat_id AND sent_at_ms = :taken"
)
_OLDEST = (
    "SELECT min(sent_at_ms), count(*) FROM group_sends "
    "WHERE bot_id = :bot_id AND chat_id = :chat_id"
)
_STATEMENTS = {statement: Positional.of(statement) for statement in (_TAKE, _RETIME, _OLDEST)}


def _make_slots(slots: int) -> str:
    rows = ", ".join(f"(:bot_id, :chat_id, {slot}, 0)" for slot in range(slots))
    return f"INSERT INTO group_sends (bot_id, chat_id, slot, sent_at_ms) VALUES {rows} " + (
        "ON CONFLICT DO NOTHING"
    )


class GroupSendSlots:
    """One bot's groups' slots: ``slots`` a group per ``window_ms``."""

    def __init__(self, db: Database, *, bot_id: int, slots: int, window_ms: int) -> None:
        self.db = db
        self.bot_id = bot_id
        self.slots = slots
        self.window_ms = window_ms
        self._make = _make_slots(slots)
        self._make_postgres = Positional.of(self._make)
        #: Groups whose slots this process knows exist.
        self._made: set[int] = set()

    async def take(self, chat_id: int, now_ms: int) -> int:
        """Take one of the group's slots now: 0, or (none free) the milliseconds until
        its oldest is free again."""
        params = {"bot_id": self.bot_id, "chat_id": chat_id}
        taking = {**params, "now": now_ms, "free_before": now_ms - self.window_ms}
        for _ in range(TAKE_TRIES):
            if chat_id not in self._made:
                await self.db.write_one(self._make, self._make_postgres, params)
                self._made.add(chat_id)
            if await self.db.write_one(_TAKE, _STATEMENTS[_TAKE], taking) == 1:
                return 0
            oldest, count = await self.db.read_one(_OLDEST, _STATEMENTS[_OLDEST], params)
            if count < self.slots:  # rows gone (a database restored): made again
                self._made.discard(chat_id)
                continue
            wait = int(oldest) + self.window_ms - now_ms
            if wait > 0:
                return wait
        return 1  # taken from under it each time: a moment, then again

    async def retime(self, chat_id: int, taken_ms: int, delivered_ms: int) -> None:
        """The send whose slot was taken at ``taken_ms`` reached the group only at
        ``delivered_ms`` (it waited for its turn, or was tried again): Telegram counts it
        from then, so its slot does too."""
        params = {
            "bot_id": self.bot_id,
            "chat_id": chat_id,
            "taken": taken_ms,
            "delivered": delivered_ms,
        }
        await self.db.write_one(_RETIME, _STATEMENTS[_RETIME], params)

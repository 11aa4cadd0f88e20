"""Round states written, told to whoever watches them (the Mini App's live feed) as
small notices: the chat, the round and its version, never the state itself. A player's
chips changed outside a round (an admin's ``/credit`` or ``/debit``) are told the same
way, as the chat and the player (``ChipsChange``): the round is as it was, the page's
chips are not.

A step's state is told at once to this process's watchers (``RoundEvents.committed``,
after its transaction committed). On PostgreSQL it is also sent to every worker with
``NOTIFY`` (``bot.store.change_notices``), and what other workers commit is heard with
``LISTEN`` and told to the watchers here; this worker's own notices come back too and
are passed over. On SQLite there is one process, and nothing to send.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from bot.engine.round import RoundState
from bot.store.change_notices import PostgresNotices
from bot.store.db import Database

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, order=True)
class RoundKey:
    """Where a group's table stands: its latest round and that round's version. Keys
    order as the states they name were written (a later round, or a later version)."""

    round_id: int
    version: int

    def __str__(self) -> str:
        return f"{self.round_id}.{self.version}"

    @classmethod
    def parse(cls, text: str) -> RoundKey | None:
        """A key as ``str`` wrote it; ``None`` for anything else."""
        round_id, dot, version = text.partition(".")
        if not dot or not round_id.isdecimal() or not version.isdecimal():
            return None
        if len(round_id) > 18 or len(version) > 18:
            return None
        return cls(int(round_id), int(version))


#: A group that never had a round.
NO_ROUND = RoundKey(0, 0)


@dataclass(frozen=True, slots=True)
class RoundChange:
    """A round of ``chat_id`` now stands at ``key``."""

    chat_id: int
    key: RoundKey


@dataclass(frozen=True, slots=True)
class ChipsChange:
    """The chips of ``user_id`` in ``chat_id`` changed outside a round (committed)."""

    chat_id: int
    user_id: int


#: Told of each change; must return at once and not raise.
ChangeWatcher = Callable[[RoundChange], None]
#: Told of each change of a player's chips outside a round; the same.
ChipsWatcher = Callable[[ChipsChange], None]
#: How a notice names a change of chips, in place of a ``RoundKey``: ``chips:<user id>``.
CHIPS_MARK = "chips:"
#: Told that changes may have been missed (the notices' connection was lost).
Resync = Callable[[], None]


class RoundChanges:
    """The service's round changes: ``committed`` by the round steps, told to the
    ``watch``-ers of this process and, between ``start`` and ``close`` on PostgreSQL,
    to every other worker's."""

    def __init__(self, db: Database) -> None:
        self._watchers: list[tuple[ChangeWatcher, Resync]] = []
        self._chips_watchers: list[ChipsWatcher] = []
        #: This worker's mark on its notices, to pass over its own when they come back.
        self._origin = secrets.token_hex(4)
        self._notices = PostgresNotices.of(db, self._heard, self._reconnected)
        self._sending = False

    def watch(
        self, watcher: ChangeWatcher, resync: Resync, chips: ChipsWatcher | None = None
    ) -> None:
        """Tell ``watcher`` of every change from now on, ``chips`` (if given) of every
        change of a player's chips outside a round, and ``resync`` when some may have
        been missed."""
        self._watchers.append((watcher, resync))
        if chips is not None:
            self._chips_watchers.append(chips)

    def chips_changed(self, chat_id: int, user_id: int) -> None:
        """A use case outside the rounds changed (committed) the player's chips."""
        change = ChipsChange(chat_id, user_id)
        for watcher in self._chips_watchers:
            watcher(change)
        if self._sending and self._notices is not None:
            payload = f"{chat_id} {CHIPS_MARK}{user_id} {self._origin}"
            # Its own key: it must neither replace nor be replaced by the round's notice.
            self._notices.send((CHIPS_MARK, chat_id, user_id), payload)

    def committed(self, state: RoundState) -> None:
        """A step wrote ``state`` (``RoundEvents``' listener)."""
        change = RoundChange(state.chat_id, RoundKey(state.id, state.version))
        self._tell(change)
        if self._sending and self._notices is not None:
            payload = f"{change.chat_id} {change.key} {self._origin}"
            self._notices.send(change.chat_id, payload)

    @property
    def across_workers(self) -> bool:
        """Whether changes are sent to and heard from other workers (PostgreSQL)."""
        return self._notices is not None

    async def start(self) -> None:
        """Send this worker's changes and hear the others' (PostgreSQL; nothing on SQLite)."""
        if self._notices is not None:
            self._sending = True
            await self._notices.start()

    async def close(self) -> None:
        self._sending = False
        if self._notices is not None:
            await self._notices.close()

    def _tell(self, change: RoundChange) -> None:
        for watcher, _ in self._watchers:
            watcher(change)

    def _heard(self, payload: str) -> None:
        chat, _, rest = payload.partition(" ")
        key_text, _, origin = rest.partition(" ")
        chat_id, player = _number(chat), None
        if key_text.startswith(CHIPS_MARK):
            key, player = None, _number(key_text.removeprefix(CHIPS_MARK))
        else:
            key = RoundKey.parse(key_text)
        if chat_id == 0 or (key is None and not player):
            log.warning("round change notices: a payload not ours (%.40r)", payload)
            return
        if origin == self._origin:
            return
        if key is not None:
            self._tell(RoundChange(chat_id, key))
        elif player:
            for watcher in self._chips_watchers:
                watcher(ChipsChange(chat_id, player))

    def _reconnected(self) -> None:
        for _, resync in self._watchers:
            resync()


def _number(text: str) -> int:
    """A notice's chat or user id; 0 for anything else."""
    try:
        return int(text) if len(text) <= 20 else 0
    except ValueError:
        return 0

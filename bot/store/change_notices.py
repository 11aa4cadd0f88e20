"""Short notices between the workers of one PostgreSQL database: its ``LISTEN`` and
``NOTIFY`` on one channel (``CHANNEL``), so that a change one worker commits reaches
what the others serve (the Mini App's live feed) without a new server.

``PostgresNotices`` holds a connection of its own, outside the pools: a listening
connection must stay open, and the pools' connections are leased and given back. The
same connection sends this worker's notices: whatever was queued while the last batch
was on its way goes out in the next, in one statement, and a later notice under the same
key replaces one still queued. When the connection is lost it is opened again; what was
heard meanwhile is lost, so ``on_reconnect`` is told, and the listener reads afresh.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import asyncpg

from bot.store.db import Database

log = logging.getLogger(__name__)

#: The channel every worker listens and notifies on.
CHANNEL = "niuniu_round_changes"
#: How long to wait before opening a lost connection again.
RETRY_SECONDS = 1.0
#: How long ``start`` waits for the first connection before serving without it.
CONNECT_SECONDS = 5.0
#: ``pg_notify`` takes one payload: the batch is unnested into one call per payload.
NOTIFY_BATCH = "SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload"


class PostgresNotices:
    """Notices on ``CHANNEL`` heard (``on_notice(payload)``) and sent (``send``) over a
    connection of their own, between ``start`` and ``close``."""

    def __init__(
        self,
        dsn: str,
        on_notice: Callable[[str], None],
        on_reconnect: Callable[[], None],
        *,
        retry_seconds: float = RETRY_SECONDS,
    ) -> None:
        self._dsn = dsn
        self._on_notice = on_notice
        self._on_reconnect = on_reconnect
        self._retry_seconds = retry_seconds
        #: Notices still to send, by key (a later one replaces an earlier).
        self._pending: dict[object, str] = {}
        self._wake = asyncio.Event()
        self._connected = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def of(
        cls, db: Database, on_notice: Callable[[str], None], on_reconnect: Callable[[], None]
    ) -> PostgresNotices | None:
        """Notices over ``db``'s server; ``None`` on SQLite (one process: nothing to tell)."""
        if db.dialect != "postgresql":
            return None
        dsn = db.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        return cls(dsn, on_notice, on_reconnect)

    @property
    def listening(self) -> bool:
        """Whether the connection is open and listening now."""
        return self._connected.is_set()

    async def start(self) -> None:
        """Connect and listen; waits for the first connection at most ``CONNECT_SECONDS``
        (after that it keeps trying in the background)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="postgres-notices")
        try:
            await asyncio.wait_for(self._connected.wait(), CONNECT_SECONDS)
        except TimeoutError:
            log.warning("round change notices: no connection yet; the feed is late meanwhile")

    def send(self, key: object, payload: str) -> None:
        """Queue ``payload`` for every listener (this worker's own too), replacing one
        queued under ``key`` that has not gone yet."""
        self._pending[key] = payload
        self._wake.set()

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        first = True
        while True:
            try:
                connection = await asyncpg.connect(self._dsn)
            except (OSError, asyncpg.PostgresError) as error:
                log.warning("round change notices: cannot connect (%s)", type(error).__name__)
                await asyncio.sleep(self._retry_seconds)
                continue
            try:
                await self._serve(connection, first)
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as error:
                log.warning("round change notices: connection lost (%s)", type(error).__name__)
            finally:
                self._connected.clear()
                connection.terminate()
            first = False
            await asyncio.sleep(self._retry_seconds)

    def _heard(self, connection: object, pid: int, channel: str, payload: object) -> None:
        if isinstance(payload, str):
            self._on_notice(payload)

    async def _serve(self, connection: asyncpg.Connection, first: bool) -> None:
        lost = asyncio.Event()

        def terminated(_: object) -> None:
            lost.set()
            self._wake.set()

        connection.add_termination_listener(terminated)
        await connection.add_listener(CHANNEL, self._heard)
        self._connected.set()
        if not first:
            self._on_reconnect()  # what was notified while away went unheard
        while True:
            await self._wake.wait()
            self._wake.clear()
            if lost.is_set() or connection.is_closed():
                raise asyncpg.InterfaceError("the notices' connection closed")
            batch, self._pending = self._pending, {}
            if not batch:
                continue
            try:
                await connection.execute(NOTIFY_BATCH, CHANNEL, list(batch.values()))
            except BaseException:
                # Sent again on the next connection, unless newer ones replaced them.
                self._pending = {**batch, **self._pending}
                raise

"""Bot API calls on kept-alive HTTP/1.1 connections: a request's bytes written on an
asyncio transport, its answer parsed by httptools (llhttp, in C).

Written by hand because aiohttp's client, per call, cost the event loop several times
what the call's own bytes cost (``bench/bench_http.py``), and calls are most of the bot's
work under load: a toast per press, a ``getUpdates`` per few updates, each board and
answer. aiohttp still carries what needs its machinery: uploads (multipart) and calls
through a proxy (``bot.telegram.http``).

A connection carries one call at a time; an answer read whole leaves it open for the
next call to the same host unless the server said it closes. A connection the server
closed while idle is dropped as soon as the loop hears of it.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import httptools

#: A server: scheme, host, port.
Origin = tuple[str, str, int]


class ConnectionBroken(ConnectionError):
    """The connection closed, or its answer was not HTTP, before a whole answer came."""


@dataclass(frozen=True)
class Timeouts:
    """Each ``None`` for no limit: ``pool`` to wait for a free connection, ``connect``
    to open one, ``answer`` from the request handed to the connection to the answer's
    last byte (a form is small: the socket takes it at once)."""

    pool: float | None
    connect: float | None
    answer: float | None


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection and the call it carries, if any."""

    def __init__(self, on_closed: Callable[[_Connection], None]) -> None:
        self._on_closed = on_closed
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.reusable = True
        self._answer: asyncio.Future[tuple[int, bytes]] | None = None
        self._parser: httptools.HttpResponseParser | None = None  # one per answer
        self._status = 0
        self._body: list[bytes] = []
        self._head_read = False
        self._delimited = False  # the answer's length is given (Content-Length, chunks)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A socket's transport (another loop's, such as uvloop's, is no subclass of it).
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self._answer is None:
            self.close()  # bytes nobody asked for: the stream cannot be trusted any more
            return
        assert self._parser is not None
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._fail(ConnectionBroken(f"the answer is not HTTP: {error}"))
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._answer is not None and self._head_read and not self._delimited:
            self._finish()  # an answer without a length ends where the connection does
        self._fail(ConnectionBroken(f"the connection closed: {exc or 'by the server'}"))
        self._on_closed(self)

    # httptools' callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() in (b"content-length", b"transfer-encoding"):
            self._delimited = True

    def on_headers_complete(self) -> None:
        assert self._parser is not None
        self._head_read = True
        self._status = self._parser.get_status_code()
        self.reusable = self._parser.should_keep_alive()

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        self._finish()

    async def exchange(self, request: bytes) -> tuple[int, bytes]:
        """Write ``request``; the answer's status and body."""
        assert self.transport is not None
        if self.closed or self.transport.is_closing():
            raise ConnectionBroken("the connection closed before the request")
        self._answer = asyncio.get_running_loop().create_future()
        self._parser = httptools.HttpResponseParser(self)
        self._status, self._body, self._head_read, self._delimited = 0, [], False, False
        self.transport.write(request)
        try:
            return await self._answer
        finally:
            self._answer = None

    def close(self) -> None:
        self.reusable = False
        if self.transport is not None and not self.closed:
            self.transport.close()

    def _finish(self) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_result((self._status, b"".join(self._body)))

    def _fail(self, error: Exception) -> None:
        if self._answer is not None and not self._answer.done():
            self._answer.set_exception(error)


class KeptAliveConnections:
    """At most ``limit`` connections at once, kept open between calls, per server;
    ``https`` checked against ``tls`` (by default the system's certificates)."""

    def __init__(self, limit: int, tls: ssl.SSLContext | None = None) -> None:
        self._free = asyncio.Semaphore(limit)
        self._idle: dict[Origin, list[_Connection]] = {}
        self._tls = tls

    async def call(
        self, origin: Origin, head: str, body: bytes, timeouts: Timeouts
    ) -> tuple[int, bytes]:
        """Send the request (``head``: its request line and headers but its length) with
        ``body`` to ``origin``; its answer's status and body. ``TimeoutError`` past a
        timeout; ``OSError`` (``ConnectionBroken`` among them) when the connection
        failed."""
        request = f"{head}\r\nContent-Length: {len(body)}\r\n\r\n".encode("latin-1") + body
        async with asyncio.timeout(timeouts.pool):
            await self._free.acquire()
        try:
            connection = self._idle_one(origin)
            if connection is None:
                async with asyncio.timeout(timeouts.connect):
                    connection = await self._open(origin)
            try:
                async with asyncio.timeout(timeouts.answer):
                    answer = await connection.exchange(request)
            except BaseException:
                connection.close()
                raise
            if connection.reusable and not connection.closed:
                self._idle.setdefault(origin, []).append(connection)
            else:
                connection.close()
            return answer
        finally:
            self._free.release()

    def close(self) -> None:
        """Close every idle connection."""
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()

    def _idle_one(self, origin: Origin) -> _Connection | None:
        idle = self._idle.get(origin)
        while idle:
            connection = idle.pop()
            transport = connection.transport
            if not connection.closed and transport is not None and not transport.is_closing():
                return connection
        return None

    async def _open(self, origin: Origin) -> _Connection:
        scheme, host, port = origin
        tls = None
        if scheme == "https":
            if self._tls is None:
                self._tls = ssl.create_default_context()
            tls = self._tls
        loop = asyncio.get_running_loop()
        _, connection = await loop.create_connection(
            lambda: _Connection(self._forget),
            host,
            port,
            ssl=tls,
            server_hostname=host if tls is not None else None,
        )
        return connection

    def _forget(self, connection: _Connection) -> None:
        """A closed connection leaves the idle ones."""
        for idle in self._idle.values():
            if connection in idle:
                idle.remove(connection)

"""The listeners' limits over real sockets on 127.0.0.1 (``bot/web/listener.py``), for the
web server and the webhook alike: a request head or body that does not arrive in time
closes the connection, one address holds a bounded number of connections, and a slow
answer is not cut off."""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiohttp import web
from telegram.ext import Application

from bot.telegram.webhook import WebhookServer
from bot.web.listener import ListenerLimits
from bot.web.server import WebServer

#: Short enough for a fast test; the defaults are seconds, not fractions.
QUICK = ListenerLimits(header_seconds=0.3, body_seconds=0.3, connections_per_address=1000)
#: Well past QUICK's deadlines: a closed connection shows by then, an open one does not.
AFTER = 5.0
HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

Serve = Callable[[ListenerLimits], AsyncIterator[int]]


def _app() -> web.Application:
    async def healthz(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(1.0)  # longer than QUICK's deadlines, shorter than AFTER
        return web.Response(text=f"read {len(await request.read())}")

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_post("/slow", slow)
    return app


@asynccontextmanager
async def web_server(limits: ListenerLimits) -> AsyncIterator[int]:
    server = WebServer(_app(), host="127.0.0.1", port=0, limits=limits)
    await server.start()
    try:
        yield server.port
    finally:
        await server.stop()


@asynccontextmanager
async def webhook_server(limits: ListenerLimits) -> AsyncIterator[int]:
    # No update gets as far as the application in these tests.
    application = Application.builder().token("123:TEST").build()
    server = WebhookServer(
        {"hook": application}, listen="127.0.0.1", port=0, secret_token="s", limits=limits
    )
    await server.start()
    try:
        yield server.port
    finally:
        await server.stop()


SERVERS = pytest.mark.parametrize("serve", [web_server, webhook_server], ids=["web", "webhook"])


async def closed_by_server(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sends until it closes the connection (within AFTER)."""
    try:
        return await asyncio.wait_for(reader.read(), AFTER)
    except ConnectionResetError:
        return b""


@SERVERS
async def test_a_client_that_stalls_in_its_request_head_is_closed(serve: Any) -> None:
    async with serve(QUICK) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-")
        await writer.drain()
        assert await closed_by_server(reader) == b""
        writer.close()


@SERVERS
async def test_a_client_that_trickles_its_head_is_closed_at_the_deadline(serve: Any) -> None:
    async with serve(QUICK) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)

        async def trickle() -> None:
            for byte in b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: aaaaaaaaaaaaaaaa":
                writer.write(bytes([byte]))
                await asyncio.sleep(0.05)

        trickling = asyncio.create_task(trickle())
        assert await closed_by_server(reader) == b""
        trickling.cancel()
        writer.close()


@SERVERS
async def test_a_client_that_connects_and_says_nothing_is_closed(serve: Any) -> None:
    async with serve(QUICK) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        assert await closed_by_server(reader) == b""
        writer.close()


@SERVERS
async def test_a_client_that_stalls_in_its_body_gets_408_and_is_closed(serve: Any) -> None:
    async with serve(QUICK) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n0123456789"
        )
        await writer.drain()
        answer = await closed_by_server(reader)
        assert answer.startswith(b"HTTP/1.1 408 ")
        writer.close()


@SERVERS
async def test_a_thousand_slow_connections_are_all_dropped_within_seconds(serve: Any) -> None:
    async with serve(QUICK) as port:
        clients = [await asyncio.open_connection("127.0.0.1", port) for _ in range(1000)]
        for _, writer in clients:
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127")
        answers = await asyncio.gather(*(closed_by_server(reader) for reader, _ in clients))
        assert answers == [b""] * 1000
        for _, writer in clients:
            writer.close()
        # And the listener still serves.
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(HEAD if serve is web_server else b"GET /hook HTTP/1.1\r\nHost: a\r\n\r\n")
        assert (await reader.readline()).startswith(b"HTTP/1.1 ")
        writer.close()


async def test_a_slow_answer_is_not_cut_off_by_the_deadlines() -> None:
    async with web_server(QUICK) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc")
        await writer.drain()
        status = await asyncio.wait_for(reader.readline(), AFTER)
        assert status.startswith(b"HTTP/1.1 200 ")
        assert (await closed_by_server(reader)).endswith(b"read 3")  # then idle: closed
        writer.close()


CAPPED = ListenerLimits(header_seconds=30, body_seconds=30, connections_per_address=3)


async def served(serve: Any, connection: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> bool:
    """Whether a request on this connection gets an answer."""
    reader, writer = connection
    writer.write(HEAD if serve is web_server else b"GET /hook HTTP/1.1\r\nHost: a\r\n\r\n")
    return (await asyncio.wait_for(reader.readline(), AFTER)).startswith(b"HTTP/1.1 ")


@SERVERS
async def test_one_address_holds_a_bounded_number_of_connections(serve: Any) -> None:
    async with serve(CAPPED) as port:
        held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(3)]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        assert await closed_by_server(reader) == b""  # the fourth is closed as it opens
        writer.close()
        assert [await served(serve, connection) for connection in held] == [True] * 3
        # Another address is not held back by the first one's connections.
        other = await asyncio.open_connection("127.0.0.1", port, local_addr=("127.0.0.2", 0))
        assert await served(serve, other)
        other[1].close()
        # One of the three closes: the address may open one again (once the server saw it).
        held[0][1].close()
        again = False
        for _ in range(50):
            connection = await asyncio.open_connection("127.0.0.1", port)
            again = await served(serve, connection)
            connection[1].close()
            if again:
                break
            await asyncio.sleep(0.02)
        assert again
        for _, held_writer in held[1:]:
            held_writer.close()


async def test_a_trusted_proxy_is_not_held_to_the_cap() -> None:
    proxy = ListenerLimits(
        header_seconds=30,
        body_seconds=30,
        connections_per_address=3,
        uncounted=(ipaddress.ip_network("127.0.0.1/32"),),
    )
    async with web_server(proxy) as port:
        held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(10)]
        assert [await served(web_server, connection) for connection in held] == [True] * 10
        for _, writer in held:
            writer.close()

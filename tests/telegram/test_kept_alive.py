"""Bot API calls on kept-alive connections (``bot.telegram.kept_alive``), against a server
that writes its answers byte for byte: what HTTP/1.1 allows an answer to be, and the ways a
connection fails."""

from __future__ import annotations

import asyncio
import ssl
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bot.telegram.kept_alive import ConnectionBroken, KeptAliveConnections, Timeouts

SOON = Timeouts(pool=2.0, connect=2.0, answer=2.0)
HEAD = "POST /bot1:x/answerCallbackQuery HTTP/1.1\r\nHost: test"
OK = b'{"ok":true,"result":true}'


def answer(body: bytes = OK, *headers: str) -> bytes:
    lines = ["HTTP/1.1 200 OK", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


@dataclass
class Server:
    """Answers each request it reads with ``answers(request number)``: the bytes to write,
    and whether to close the connection after them."""

    answers: Callable[[int], tuple[bytes, bool]]
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0
    port: int = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                self.requests.append(head + await reader.readexactly(length))
                data, close = self.answers(len(self.requests))
                writer.write(data)
                await writer.drain()
                if close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


#: Starts a server (with TLS if given) and gives it back listening.
Serve = Callable[..., Awaitable[Server]]


@pytest.fixture
async def serving() -> AsyncIterator[Serve]:
    servers: list[asyncio.Server] = []

    async def start(server: Server, tls: ssl.SSLContext | None = None) -> Server:
        listening = await asyncio.start_server(server.serve, "127.0.0.1", 0, ssl=tls)
        servers.append(listening)
        server.port = listening.sockets[0].getsockname()[1]
        return server

    yield start
    for listening in servers:
        listening.close()


async def test_calls_one_after_another_share_one_connection(serving: Serve) -> None:
    server = await serving(Server(lambda n: (answer(b'{"n":%d}' % n), False)))
    connections = KeptAliveConnections(4)
    origin = ("http", "127.0.0.1", server.port)

    answers = [
        await connections.call(origin, HEAD, b"callback_query_id=%d" % n, SOON) for n in (1, 2, 3)
    ]

    assert answers == [(200, b'{"n":1}'), (200, b'{"n":2}'), (200, b'{"n":3}')]
    assert server.connections == 1
    first = server.requests[0].decode()
    assert first.startswith("POST /bot1:x/answerCallbackQuery HTTP/1.1\r\nHost: test\r\n")
    assert first.endswith("Content-Length: 19\r\n\r\ncallback_query_id=1")
    connections.close()


async def test_a_chunked_answer_and_one_ended_by_closing_are_read_whole(serving: Serve) -> None:
    chunked = b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"ok"\r\n' + (
        b'14\r\n:true,"result":true}\r\n0\r\n\r\n'
    )
    unmeasured = b"HTTP/1.1 200 OK\r\n\r\n" + OK
    server = await serving(Server(lambda n: (chunked, False) if n == 1 else (unmeasured, True)))
    connections = KeptAliveConnections(4)
    origin = ("http", "127.0.0.1", server.port)

    for _ in range(3):
        assert await connections.call(origin, HEAD, b"", SOON) == (200, OK)
    # The second answer ended with its connection: the third call opened another.
    assert server.connections == 2


async def test_a_connection_the_server_closes_is_not_used_again(serving: Serve) -> None:
    said_close = answer(OK, "Connection: close")
    server = await serving(Server(lambda n: (said_close, False) if n == 1 else (answer(), n == 2)))
    connections = KeptAliveConnections(4)
    origin = ("http", "127.0.0.1", server.port)

    for _ in range(3):
        assert await connections.call(origin, HEAD, b"", SOON) == (200, OK)
        await asyncio.sleep(0.05)  # the server's close reaches the client

    # Closed by "Connection: close", then by the server after its answer (while idle).
    assert server.connections == 3


async def test_an_answer_cut_short_or_not_http_fails_the_call(serving: Serve) -> None:
    short = answer(OK)[:-5]
    server = await serving(
        Server(lambda n: (short, True) if n == 1 else (b"SSH-2.0-OpenSSH\r\n", False))
    )
    connections = KeptAliveConnections(4)
    origin = ("http", "127.0.0.1", server.port)

    with pytest.raises(ConnectionBroken, match="closed"):
        await connections.call(origin, HEAD, b"", SOON)
    with pytest.raises(ConnectionBroken, match="not HTTP"):
        await connections.call(origin, HEAD, b"", SOON)


async def test_a_slow_answer_times_out_and_its_connection_is_not_reused(serving: Serve) -> None:
    late = asyncio.Event()

    def answers(n: int) -> tuple[bytes, bool]:
        return answer(b'{"n":%d}' % n), False

    server = Server(answers)
    serve = server.serve

    async def slow_first(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if server.connections == 0:
            server.connections += 1
            await reader.readuntil(b"\r\n\r\n")
            await late.wait()
            writer.close()
            return
        await serve(reader, writer)

    server.serve = slow_first  # type: ignore[method-assign]
    await serving(server)
    connections = KeptAliveConnections(4)
    origin = ("http", "127.0.0.1", server.port)

    with pytest.raises(TimeoutError):
        await connections.call(origin, HEAD, b"", Timeouts(pool=1, connect=1, answer=0.2))
    late.set()
    assert await connections.call(origin, HEAD, b"", SOON) == (200, b'{"n":1}')
    assert server.connections == 2


async def test_past_the_limit_a_call_waits_for_a_free_connection_as_long_as_allowed(
    serving: Serve,
) -> None:
    release = asyncio.Event()
    server = Server(lambda n: (answer(), False))
    serve = server.serve

    async def held(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await release.wait()
        await serve(reader, writer)

    server.serve = held  # type: ignore[method-assign]
    await serving(server)
    connections = KeptAliveConnections(1)
    origin = ("http", "127.0.0.1", server.port)

    first = asyncio.create_task(connections.call(origin, HEAD, b"", SOON))
    await asyncio.sleep(0.05)
    with pytest.raises(TimeoutError):
        await connections.call(origin, HEAD, b"", Timeouts(pool=0.1, connect=1, answer=1))
    waiting = asyncio.create_task(connections.call(origin, HEAD, b"", SOON))
    release.set()
    assert await first == (200, OK) and await waiting == (200, OK)
    assert server.connections == 1


async def test_a_refused_connection_is_an_os_error() -> None:
    connections = KeptAliveConnections(1)
    with pytest.raises(OSError):
        await connections.call(("http", "127.0.0.1", 1), HEAD, b"", SOON)


async def test_https_checks_the_servers_certificate(serving: Serve, tmp_path: Path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    server = await serving(Server(lambda n: (answer(), False)), tls)
    origin = ("https", "localhost", server.port)

    trusting = KeptAliveConnections(1, ssl.create_default_context(cafile=str(cert)))
    assert await trusting.call(origin, HEAD, b"", SOON) == (200, OK)
    trusting.close()
    with pytest.raises(ssl.SSLCertVerificationError):
        await KeptAliveConnections(1).call(origin, HEAD, b"", SOON)

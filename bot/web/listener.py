"""How the bot's HTTP listeners (this server and the webhook's) hold their connections,
so that slow or many connections cannot tie the process up:

- a connection that has not sent a whole request head ``header_seconds`` after it opened
  (or after its last answer) is closed: aiohttp's own ``keepalive_timeout``, which it arms
  as a connection opens and which closes it while no request has arrived;
- a request's body must arrive within ``body_seconds`` (``body_deadline``), else 408 and
  the connection is closed after ``header_seconds`` of lingering (aiohttp's
  ``lingering_time``);
- one address holds at most ``connections_per_address`` connections at once; one more is
  closed as it opens (``AddressCap``). Trusted proxies carry everyone's connections and
  are not counted.

The body's deadline and the count per address are written here because aiohttp has no
setting for either.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web
from aiohttp.typedefs import Middleware

from bot.web.console.limits import IPNetwork

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: What ``web.AppRunner.server`` is: it makes a protocol for each connection.
ProtocolFactory = Callable[[], asyncio.BaseProtocol]


@dataclass(frozen=True, slots=True)
class ListenerLimits:
    """A listener's limits (see the module's docstring)."""

    header_seconds: float = 5.0
    body_seconds: float = 10.0
    connections_per_address: int = 32
    #: Peers not counted: the reverse proxies in front (``[web] trusted_proxies``).
    uncounted: tuple[IPNetwork, ...] = ()


DEFAULT_LIMITS = ListenerLimits()


def body_deadline(limits: ListenerLimits) -> Middleware:
    """A middleware that reads a request's body within ``limits.body_seconds`` before the
    handler runs (aiohttp keeps it: the handler's ``read``, ``post`` or ``json`` gets it)."""

    @web.middleware
    async def read_in_time(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.body_exists:
            try:
                async with asyncio.timeout(limits.body_seconds):
                    await request.read()
            except TimeoutError:
                response = web.Response(status=408, text="the request's body came too slowly")
                response.force_close()
                return response
        return await handler(request)

    return read_in_time


class _Counted(asyncio.Protocol):
    """One connection: counted under its peer's address while open, and refused (closed at
    once, before aiohttp sees it) when that address already holds its share."""

    def __init__(self, cap: AddressCap) -> None:
        self._cap = cap
        self._inner: asyncio.Protocol | None = None
        self._address = ""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if peer else ""
        if not self._cap.admit(address):
            transport.close()
            return
        self._address = address
        inner = self._cap.factory()
        assert isinstance(inner, asyncio.Protocol)
        self._inner = inner
        inner.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._inner is not None:
            self._cap.release(self._address)
            self._inner.connection_lost(exc)
            self._inner = None

    def data_received(self, data: bytes) -> None:
        if self._inner is not None:
            self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._inner is not None else None

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()


class AddressCap:
    """Makes the protocols of a listener: aiohttp's for each connection, within a cap per
    peer address (see the module's docstring)."""

    def __init__(self, factory: ProtocolFactory, limits: ListenerLimits) -> None:
        self.factory = factory
        self.limits = limits
        self.open: Counter[str] = Counter()
        self._refusals = 0

    def __call__(self) -> asyncio.Protocol:
        return _Counted(self)

    def _uncounted(self, address: str) -> bool:
        try:
            parsed = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(parsed in network for network in self.limits.uncounted)

    def admit(self, address: str) -> bool:
        """Count a connection from ``address``; ``False`` when it holds its share already."""
        if self._uncounted(address):
            address = ""
        elif self.open[address] >= self.limits.connections_per_address:
            self._refusals += 1
            if self._refusals == 1 or self._refusals % 1000 == 0:
                # Once per flood, not per connection: the log must not grow with it.
                log.warning(
                    "connections refused: %s holds %s already (%s refused so far)",
                    address,
                    self.limits.connections_per_address,
                    self._refusals,
                )
            return False
        self.open[address] += 1
        return True

    def release(self, address: str) -> None:
        """A connection from ``address`` has closed."""
        self.open[address] -= 1
        if self.open[address] <= 0:
            del self.open[address]


class LimitedSite(web.TCPSite):
    """aiohttp's TCP site with each connection's protocol made through an ``AddressCap``."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, limits: ListenerLimits):
        super().__init__(runner, host, port)
        self.limits = limits

    async def start(self) -> None:
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        self._server = await asyncio.get_running_loop().create_server(
            AddressCap(server, self.limits), self._host, self._port, backlog=self._backlog
        )
        self._bound_port = self._server.sockets[0].getsockname()[1]


async def start_listening(
    app: web.Application, host: str, port: int, limits: ListenerLimits
) -> web.AppRunner:
    """Serve ``app`` at ``host:port`` within ``limits``; the runner (its ``addresses``
    name the port when ``port`` is 0, its ``cleanup`` stops it). Adds ``body_deadline``
    to the app's middlewares, first, so it must not have started elsewhere."""
    app.middlewares.insert(0, body_deadline(limits))
    runner = web.AppRunner(
        app,
        access_log=None,
        keepalive_timeout=limits.header_seconds,
        lingering_time=limits.header_seconds,
    )
    await runner.setup()
    try:
        await LimitedSite(runner, host, port, limits).start()
    except BaseException:
        await runner.cleanup()
        raise
    return runner

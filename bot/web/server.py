"""The bot's own HTTP server: ``/healthz``, ``/readyz`` and ``/metrics``, and the mount
point of the operator console (``/console/``) and the Mini App (``/miniapp/``).

- ``GET /healthz``: 200 ``ok`` whenever the process answers at all (liveness: restart it
  if not).
- ``GET /readyz``: 200 ``ready`` when updates are coming in (the bot is running and
  polling, or Telegram was told of its webhook) and the database takes a write (one row
  of its own, written) within ``READINESS_TIMEOUT_SECONDS``; else 503 with the reason in
  a line of plain text (readiness: send it no traffic, page someone if it lasts). A read
  would pass on a full disk or a read-only server. The database's answer stands for
  ``PROBE_CACHE_SECONDS``, and probes asked for meanwhile share it, so that no rate of
  ``/readyz`` loads the database.
- ``GET /metrics``: Prometheus's text format, from the bot's own registry
  (``bot.web.metrics``).

aiohttp (already the webhook's server) serves it; the runner starts it before the bot
and stops it after, in polling and webhook mode alike.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from bot.web.listener import DEFAULT_LIMITS, ListenerLimits, start_listening
from bot.web.metrics import BotMetrics

log = logging.getLogger(__name__)

#: Where a console application is mounted (``build_web_app(console=...)``).
CONSOLE_PREFIX = "/console/"
#: Where the Mini App is mounted (``build_web_app(miniapp=...)``).
MINIAPP_PREFIX = "/miniapp/"
#: How long ``/readyz`` waits for the database before saying it is not ready.
READINESS_TIMEOUT_SECONDS = 2.0
#: How long the database's last answer to the probe stands.
PROBE_CACHE_SECONDS = 1.0

#: Writes to the database: why it refused the write (a short name), None when it took
#: it; raises if it cannot answer.
DatabaseCheck = Callable[[], Awaitable[str | None]]
#: Why updates are not coming in, or None when they are.
IntakeCheck = Callable[[], str | None]


class Readiness:
    """Whether the bot can do its work now: updates come in and the database takes
    writes."""

    def __init__(
        self,
        database_check: DatabaseCheck,
        not_receiving: IntakeCheck,
        *,
        timeout: float = READINESS_TIMEOUT_SECONDS,
        cache_seconds: float = PROBE_CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.database_check = database_check
        self.not_receiving = not_receiving
        self.timeout = timeout
        self.cache_seconds = cache_seconds
        self.clock = clock
        self._last_problem: str | None = None
        self._probe: asyncio.Future[str | None] | None = None
        self._probed_at = 0.0

    async def problem(self) -> str | None:
        """Why the bot is not ready (one short line), or None when it is. A change is
        logged once, not at every probe."""
        problem = self.not_receiving() or await self._database_problem()
        if problem != self._last_problem:
            if problem is None:
                log.info("ready again")
            else:
                log.warning("not ready: %s", problem)
            self._last_problem = problem
        return problem

    async def _database_problem(self) -> str | None:
        """The last probe's answer while it stands, else a new probe's; callers meanwhile
        wait for the same one (shielded: one caller going away cancels it for none)."""
        probe = self._probe
        stale = (
            probe is not None
            and probe.done()
            and (self.clock() - self._probed_at >= self.cache_seconds)
        )
        if probe is None or stale:
            probe = self._probe = asyncio.ensure_future(self._probe_database())
        return await asyncio.shield(probe)

    async def _probe_database(self) -> str | None:
        try:
            refusal = await asyncio.wait_for(self.database_check(), self.timeout)
        except TimeoutError:
            return f"the database did not answer within {self.timeout:g} s"
        except Exception as error:
            # The exception's type, not its text: a driver's message may name the server.
            return f"the database does not answer ({type(error).__name__})"
        finally:
            self._probed_at = self.clock()
        return None if refusal is None else f"the database refuses writes ({refusal})"


def build_web_app(
    metrics: BotMetrics,
    readiness: Readiness,
    *,
    console: web.Application | None = None,
    miniapp: web.Application | None = None,
) -> web.Application:
    """The server's application; ``console`` and ``miniapp`` (their routes relative to
    them) are mounted under ``CONSOLE_PREFIX`` and ``MINIAPP_PREFIX``."""

    async def healthz(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def readyz(request: web.Request) -> web.Response:
        problem = await readiness.problem()
        if problem is not None:
            return web.Response(status=503, text=problem)
        return web.Response(text="ready")

    async def metrics_page(request: web.Request) -> web.Response:
        await metrics.refresh()
        # Generating the text takes well under a millisecond for this many series.
        body = generate_latest(metrics.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics_page)
    if console is not None:
        app.add_subapp(CONSOLE_PREFIX, console)
    if miniapp is not None:
        app.add_subapp(MINIAPP_PREFIX, miniapp)
    return app


class WebListenFailed(OSError):
    """The web server cannot listen where ``[web] listen`` says (the port is taken, or not
    the process's to take): ``bot.startup_errors`` words it apart from the webhook's."""


class WebServer:
    """``app`` served over HTTP at ``host:port`` between ``start`` and ``stop``, within
    ``limits`` (``bot.web.listener``: slow requests and too many connections dropped)."""

    def __init__(
        self,
        app: web.Application,
        *,
        host: str,
        port: int,
        limits: ListenerLimits = DEFAULT_LIMITS,
    ) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.limits = limits
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        """Start listening; ``port`` 0 picks a free port (read it back from ``port``)."""
        try:
            runner = await start_listening(self.app, self.host, self.port, self.limits)
        except OSError as error:
            # asyncio's message repeats the address; the system's words for the errno do not.
            reason = os.strerror(error.errno) if error.errno else str(error)
            raise WebListenFailed(error.errno, reason) from error
        self._runner = runner
        self.port = runner.addresses[0][1]
        mounted = {resource.canonical.rstrip("/") for resource in self.app.router.resources()}
        pages = [prefix for prefix in (CONSOLE_PREFIX, MINIAPP_PREFIX) if prefix[:-1] in mounted]
        paths = ", ".join(["/healthz", "/readyz", "/metrics", *pages])
        log.info("web server on %s:%s (%s)", self.host, self.port, paths)

    async def stop(self) -> None:
        """Stop listening (requests under way get a moment to finish)."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

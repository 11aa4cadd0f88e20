"""Webhook mode: Telegram posts each update; the answer goes back only once it is handled.

python-telegram-bot's webhook server answers 200 as soon as an update is queued, so a
worker that dies before handling it loses it. This one handles the update first: if the
worker dies, Telegram gets no answer and delivers the update again, and the database's
record of processed update ids turns the repeat into a no-op.
"""

from __future__ import annotations

import hmac
import logging
from json import JSONDecodeError
from typing import Any

from aiohttp import web
from telegram import Update
from telegram.ext import Application

from bot.telegram.serving import handle_batch
from bot.web.listener import DEFAULT_LIMITS, ListenerLimits, start_listening

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
#: Update ids are recorded as 64-bit integers (``processed_updates`` in ``bot/store/models.py``).
UPDATE_ID_LIMIT = 2**63


class WebhookServer:
    """An HTTP endpoint for Telegram's updates in front of an ``Application``, within
    ``limits`` (``bot.web.listener``: slow requests and too many connections dropped)."""

    def __init__(
        self,
        application: Application[Any, Any, Any, Any, Any, Any],
        *,
        listen: str,
        port: int,
        path: str,
        secret_token: str,
        limits: ListenerLimits = DEFAULT_LIMITS,
    ) -> None:
        if not secret_token:
            raise ValueError("a webhook needs a secret token")
        self.application = application
        self.listen = listen
        self.port = port
        self.path = "/" + path.strip("/")
        self.secret_token = secret_token
        self.limits = limits
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        """Start listening; ``port`` 0 picks a free port (read it back from ``port``)."""
        app = web.Application()
        app.router.add_post(self.path, self._receive)
        self._runner = await start_listening(app, self.listen, self.port, self.limits)
        self.port = self._runner.addresses[0][1]
        log.info("webhook listening on %s:%s%s", self.listen, self.port, self.path)

    async def stop(self) -> None:
        """Stop listening."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _receive(self, request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, self.secret_token.encode()):
            return web.Response(status=403, text="wrong secret token")
        try:
            data = await request.json()
        except (JSONDecodeError, UnicodeDecodeError):
            return web.Response(status=400, text="not JSON")
        update = self._update(data)
        if update is None:
            return web.Response(status=400, text="not an update")
        await handle_batch(self.application, [update])
        return web.Response(status=200)

    def _update(self, data: object) -> Update | None:
        """The update a decoded body holds, or None when it is not one: an object with an
        ``update_id`` that the database can store, and fields PTB can read."""
        if not isinstance(data, dict):
            return None
        update_id = data.get("update_id")
        if not isinstance(update_id, int) or isinstance(update_id, bool):
            return None
        if not 0 <= update_id < UPDATE_ID_LIMIT:
            return None
        try:
            return Update.de_json(data, self.application.bot)
        except (TypeError, ValueError, KeyError, AttributeError):
            return None

"""Webhook mode: Telegram posts each update; the answer goes back only once it is handled.

python-telegram-bot's webhook server answers 200 as soon as an update is queued, so a
worker that dies before handling it loses it. This one handles the update first: if the
worker dies, Telegram gets no answer and delivers the update again, and the database's
record of processed update ids turns the repeat into a no-op.

Several bots in one process (``[telegram] tokens``) share the listener: each bot's
updates come to a path of its own (``webhook_paths``).
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Mapping, Sequence
from functools import partial
from json import JSONDecodeError
from typing import Any

from aiohttp import web
from telegram import Update
from telegram.ext import Application

from bot.telegram.http import lean_update
from bot.telegram.serving import handle_batch
from bot.telegram.update_objects import update_of
from bot.web.listener import DEFAULT_LIMITS, ListenerLimits, start_listening

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
#: Update ids are recorded as 64-bit integers (``processed_updates`` in ``bot/store/models.py``).
UPDATE_ID_LIMIT = 2**63
AnyApplication = Application[Any, Any, Any, Any, Any, Any]


def webhook_paths(path: str, bot_ids: Sequence[int]) -> list[str]:
    """Where each bot's updates come, in the order of ``bot_ids``: ``/path`` for one bot
    (as before there were several), ``/path/<bot id>`` for each of several."""
    base = "/" + path.strip("/")
    return [base] if len(bot_ids) == 1 else [f"{base}/{bot_id}" for bot_id in bot_ids]


class WebhookServer:
    """An HTTP endpoint for Telegram's updates in front of each bot's ``Application``
    (``routes``: path -> application), within ``limits`` (``bot.web.listener``: slow
    requests and too many connections dropped)."""

    def __init__(
        self,
        routes: Mapping[str, AnyApplication],
        *,
        listen: str,
        port: int,
        secret_token: str,
        limits: ListenerLimits = DEFAULT_LIMITS,
    ) -> None:
        if not secret_token:
            raise ValueError("a webhook needs a secret token")
        if not routes:
            raise ValueError("a webhook needs a bot to deliver to")
        self.routes = {"/" + path.strip("/"): app for path, app in routes.items()}
        self.listen = listen
        self.port = port
        self.secret_token = secret_token
        self.limits = limits
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        """Start listening; ``port`` 0 picks a free port (read it back from ``port``)."""
        app = web.Application()
        for path, application in self.routes.items():
            app.router.add_post(path, partial(self._receive, application))
        self._runner = await start_listening(app, self.listen, self.port, self.limits)
        self.port = self._runner.addresses[0][1]
        paths = ", ".join(self.routes)
        log.info("webhook listening on %s:%s at %s", self.listen, self.port, paths)

    async def stop(self) -> None:
        """Stop listening."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _receive(self, application: AnyApplication, request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, self.secret_token.encode()):
            return web.Response(status=403, text="wrong secret token")
        try:
            data = await request.json()
        except (JSONDecodeError, UnicodeDecodeError):
            return web.Response(status=400, text="not JSON")
        update = self._update(data, application)
        if update is None:
            return web.Response(status=400, text="not an update")
        await handle_batch(application, [update])
        return web.Response(status=200)

    def _update(self, data: object, application: AnyApplication) -> Update | None:
        """The update a decoded body holds, or None when it is not one: an object with an
        ``update_id`` that the database can store, and fields PTB can read."""
        if not isinstance(data, dict):
            return None
        update_id = data.get("update_id")
        if not isinstance(update_id, int) or isinstance(update_id, bool):
            return None
        if not 0 <= update_id < UPDATE_ID_LIMIT:
            return None
        lean_update(data)
        try:
            return update_of(data, application.bot)
        except (TypeError, ValueError, KeyError, AttributeError):
            return None

"""Ending console sessions from the console: an operator signs every session of a user
out (a lost phone, a shared computer, someone who is no longer an admin), from that
user's page. In the console rather than a command of the CLI: an operator who can sign in
can do it from anywhere, and the bot's host needs no shell for it."""

from __future__ import annotations

import logging

from aiohttp import web

from bot.web.console.app import console_root, parts_of, refuse, viewer_of
from bot.web.console.filters import path_number

log = logging.getLogger(__name__)


async def end_sessions(request: web.Request) -> web.StreamResponse:
    """End every session of the user in the path (operators only), then show their page."""
    parts, viewer = parts_of(request), viewer_of(request)
    if not viewer.is_operator:
        return refuse(
            request, 403, "Operators only", "Only an operator can end another user's sessions."
        )
    user_id = path_number(request, "user_id")
    ended = await parts.console.end_sessions(user_id, now_ms=parts.now() * 1000)
    log.info("operator %s ended %s console sessions of user %s", viewer.user_id, ended, user_id)
    raise web.HTTPSeeOther(f"{console_root(request)}/players/{user_id}?sessions=ended")


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_post("/players/{user_id}/sessions/end", end_sessions)

"""The console as an aiohttp application, to be mounted under ``/console/`` by the web
server (``app.add_subapp("/console/", build_console(...))``).

Every request but signing in needs the signed session cookie (``signin`` sets it) of a
session the database still holds (signing out deletes it); every POST carries the
session's CSRF token. This module holds the application, what its
handlers share (``ConsoleParts``) and that check; sign-in, pages and exports are in
``signin``, ``pages`` and ``exports``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import jinja2
from aiohttp import web

from bot.service.console import ConsoleService
from bot.service.game import GameService
from bot.web.console.access import Access, IsGroupAdmin, Viewer
from bot.web.console.headers import add_private_headers
from bot.web.console.limits import AttemptLimiter, IPNetwork
from bot.web.console.render import build_environment, render
from bot.web.signing import LinkSigner, Session, SessionSigner, SignatureRefused

COOKIE = "niuniu_console"
#: Paths (below the console's root) open without a session.
OPEN_PATHS = ("/login", "/login/telegram", "/static/console.css")
STATIC = Path(__file__).parent / "static"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True, slots=True)
class ConsoleParts:
    """What every handler of the console uses (``request.app[PARTS]``)."""

    console: ConsoleService
    access: Access
    links: LinkSigner
    sessions: SessionSigner
    limiter: AttemptLimiter
    #: Reverse proxies whose X-Forwarded-For names the client (``client_address``).
    trusted_proxies: tuple[IPNetwork, ...]
    templates: jinja2.Environment
    bot_token: str
    #: The bot's @username, for the Login Widget ("" until the bot has asked Telegram).
    bot_username: Callable[[], str]
    public_url: str
    clock: Callable[[], float]

    @property
    def https(self) -> bool:
        return self.public_url.startswith("https://")

    def now(self) -> int:
        """Seconds since the epoch."""
        return int(self.clock())

    def url(self, path: str) -> str:
        """A console address: ``path`` below the console's root."""
        return f"{self.public_url.rstrip('/')}/console{path}"


PARTS = web.AppKey("console_parts", ConsoleParts)
VIEWER = web.RequestKey("console_viewer", Viewer)
SESSION = web.RequestKey("console_session", Session)


def parts_of(request: web.Request) -> ConsoleParts:
    return request.app[PARTS]


def viewer_of(request: web.Request) -> Viewer:
    return request[VIEWER]


def page(
    request: web.Request, template: str, *, status: int = 200, **context: object
) -> web.Response:
    """A rendered page; the template gets the viewer (if signed in) and ``root``."""
    parts = parts_of(request)
    text = render(
        parts.templates,
        template,
        viewer=request.get(VIEWER),
        root=console_root(request),
        **context,
    )
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8")


def console_root(request: web.Request) -> str:
    """The path the console is mounted at, without its trailing slash (``/console``)."""
    return request.app.router["overview"].url_for().path.rstrip("/")


def refuse(request: web.Request, status: int, title: str, message: str) -> web.Response:
    """A clear page saying why a request is refused."""
    return page(request, "refused.html", status=status, title=title, message=message)


def not_yours(request: web.Request) -> web.Response:
    """The page for a group the viewer does not administer (403, showing nothing of it)."""
    return refuse(
        request,
        403,
        "Not your group",
        "You are not an admin of this group, so the console does not show it to you.",
    )


@web.middleware
async def session_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Reads the session cookie; a page without a valid one sends the browser to sign in,
    a POST without the session's CSRF token is refused (403)."""
    parts = parts_of(request)
    relative = request.path.removeprefix(console_root(request)) or "/"
    if relative in OPEN_PATHS:
        return await handler(request)
    session = await _live_session(request)
    if session is None:
        if request.method == "GET":
            raise web.HTTPSeeOther(f"{console_root(request)}/login")
        return refuse(request, 403, "Not signed in", "Sign in again, then retry.")
    request[SESSION] = session
    request[VIEWER] = Viewer(
        session.user_id,
        session.user_id in parts.access.operators,
        parts.sessions.csrf_token(session),
    )
    if request.method == "POST":
        form = await request.post()
        token = form.get("csrf")
        if not isinstance(token, str) or not parts.sessions.csrf_ok(session, token):
            return refuse(
                request,
                403,
                "Form expired",
                "This form's security token does not match your session. Reload the page "
                "and submit it again.",
            )
    return await _pages_for_errors(request, handler)


async def _live_session(request: web.Request) -> Session | None:
    """The session of the request's cookie: signed here, not expired, and not ended on the
    server (signed out, or ended by an operator)."""
    parts = parts_of(request)
    try:
        session = parts.sessions.check(request.cookies.get(COOKIE, ""), parts.now())
    except SignatureRefused:
        return None
    live = await parts.console.session_live(
        session.session_id, user_id=session.user_id, now_ms=parts.now() * 1000
    )
    return session if live else None


async def _pages_for_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A malformed request (400) or a missing thing (404) as a page, not a bare line."""
    try:
        return await handler(request)
    except (web.HTTPBadRequest, web.HTTPNotFound) as error:
        title = "Not found" if error.status == 404 else "Not understood"
        return refuse(request, error.status, title, error.text or error.reason)


def build_console(
    *,
    service: GameService,
    bot_token: str,
    operators: frozenset[int],
    public_url: str,
    is_group_admin: IsGroupAdmin,
    clock: Callable[[], float],
    bot_username: str | Callable[[], str] = "",
    trusted_proxies: tuple[IPNetwork, ...] = (),
) -> web.Application:
    """The console, to mount with ``app.add_subapp("/console/", console)``.

    ``service`` is the bot's; ``operators`` see every group; ``is_group_admin(chat_id,
    user_id)`` says whether anyone else administers a group (the bot's
    ``AdminCheck.is_admin``); ``public_url`` is the console's public address (without
    ``/console``), for links, the Login Widget and whether cookies are Secure;
    ``bot_username`` names the bot for the widget (or says it, once the bot knows it);
    ``clock`` gives seconds since the epoch; a request from one of ``trusted_proxies`` is
    limited under the client its ``X-Forwarded-For`` names.
    """
    from bot.web.console import exports, pages, sessions, signin

    console = ConsoleService(service)
    app = web.Application(middlewares=[session_middleware])
    app.on_response_prepare.append(add_private_headers)
    app[PARTS] = ConsoleParts(
        console=console,
        access=Access(console, operators, is_group_admin),
        links=LinkSigner(bot_token),
        sessions=SessionSigner(bot_token),
        limiter=AttemptLimiter(clock),
        trusted_proxies=trusted_proxies,
        templates=build_environment(),
        bot_token=bot_token,
        bot_username=bot_username if callable(bot_username) else lambda: bot_username,
        public_url=public_url,
        clock=clock,
    )
    signin.add_routes(app.router)
    pages.add_routes(app.router)
    exports.add_routes(app.router)
    sessions.add_routes(app.router)
    return app

"""The console as an aiohttp application, to be mounted under ``/console/`` by the web
server (``app.add_subapp("/console/", build_console(...))``).

Sign-in is by a one-time link the bot sends for ``/console`` in a private chat, or by
Telegram's Login Widget where the console has an https address. Both end in a signed
session cookie (HTTP-only, SameSite=Lax, Secure over https); every POST carries the
session's CSRF token. Sign-in attempts are limited per client address. Pages and exports
are in ``pages`` and ``exports``; this module holds the application and the sign-in.
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
from bot.web.console.limits import AttemptLimiter
from bot.web.console.render import build_environment, render
from bot.web.console.signing import (
    LinkSigner,
    SessionSigner,
    SignatureRefused,
    check_login_widget,
)

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
    templates: jinja2.Environment
    bot_token: str
    bot_username: str
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


@web.middleware
async def session_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Reads the session cookie; a page without a valid one sends the browser to sign in,
    a POST without the session's CSRF token is refused (403)."""
    parts = parts_of(request)
    relative = request.path.removeprefix(console_root(request)) or "/"
    if relative in OPEN_PATHS:
        return await handler(request)
    cookie = request.cookies.get(COOKIE, "")
    try:
        session = parts.sessions.check(cookie, parts.now())
    except SignatureRefused:
        if request.method == "GET":
            raise web.HTTPSeeOther(f"{console_root(request)}/login") from None
        return refuse(request, 403, "Not signed in", "Sign in again, then retry.")
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
    return await handler(request)


def _client(request: web.Request) -> str:
    return request.remote or "unknown"


def _signed_in(request: web.Request, user_id: int) -> web.HTTPSeeOther:
    """Start a session for ``user_id`` and go to the overview (raise the answer)."""
    parts = parts_of(request)
    _, cookie = parts.sessions.issue(user_id, parts.now())
    response = web.HTTPSeeOther(f"{console_root(request)}/")
    response.set_cookie(
        COOKIE,
        cookie,
        path=f"{console_root(request)}/",
        httponly=True,
        samesite="Lax",
        secure=parts.https,
        max_age=12 * 60 * 60,
    )
    return response


async def login_page(request: web.Request) -> web.StreamResponse:
    """The sign-in page; with ``?token=`` from a link, a button that signs in with it (a
    POST, so that a link preview fetching the address does not use the link up)."""
    parts = parts_of(request)
    token = request.query.get("token", "")
    return page(
        request,
        "login.html",
        token=token,
        widget=parts.https and bool(parts.bot_username),
        bot_username=parts.bot_username,
        auth_url=parts.url("/login/telegram"),
    )


async def login_with_link(request: web.Request) -> web.StreamResponse:
    """Redeem a one-time link: signed, not expired, never used before."""
    parts = parts_of(request)
    if not parts.limiter.allow(_client(request)):
        return refuse(request, 429, "Too many attempts", "Wait a minute, then try again.")
    form = await request.post()
    token = form.get("token")
    try:
        claim = parts.links.check(token if isinstance(token, str) else "", parts.now())
    except SignatureRefused as refused:
        message = {
            "expired": "This link has expired. Send /console to the bot for a new one.",
        }.get(refused.reason, "This link is not valid. Send /console to the bot for a new one.")
        return refuse(request, 403, "Sign-in refused", message)
    fresh = await parts.console.claim_link(
        claim.nonce,
        user_id=claim.user_id,
        now_ms=parts.now() * 1000,
        expires_at_ms=claim.expires_at * 1000,
    )
    if not fresh:
        return refuse(
            request,
            403,
            "Sign-in refused",
            "This link was used already. Send /console to the bot for a new one.",
        )
    raise _signed_in(request, claim.user_id)


async def login_with_widget(request: web.Request) -> web.StreamResponse:
    """Telegram's Login Widget sends the browser here with its signed data."""
    parts = parts_of(request)
    if not parts.limiter.allow(_client(request)):
        return refuse(request, 429, "Too many attempts", "Wait a minute, then try again.")
    try:
        user_id = check_login_widget(parts.bot_token, dict(request.query), parts.now())
    except SignatureRefused as refused:
        message = (
            "This sign-in is more than a day old; sign in again."
            if refused.reason == "expired"
            else "Telegram's sign-in data did not check out; sign in again."
        )
        return refuse(request, 403, "Sign-in refused", message)
    raise _signed_in(request, user_id)


async def logout(request: web.Request) -> web.StreamResponse:
    """Forget the session cookie."""
    response = web.HTTPSeeOther(f"{console_root(request)}/login")
    response.del_cookie(COOKIE, path=f"{console_root(request)}/")
    raise response


async def stylesheet(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(STATIC / "console.css")


def build_console(
    *,
    service: GameService,
    bot_token: str,
    operators: frozenset[int],
    public_url: str,
    is_group_admin: IsGroupAdmin,
    clock: Callable[[], float],
    bot_username: str = "",
) -> web.Application:
    """The console, to mount with ``app.add_subapp("/console/", console)``.

    ``service`` is the bot's; ``operators`` see every group; ``is_group_admin(chat_id,
    user_id)`` says whether anyone else administers a group (the bot's
    ``AdminCheck.is_admin``); ``public_url`` is the console's public address (without
    ``/console``), for links, the Login Widget and whether cookies are Secure;
    ``bot_username`` names the bot for the widget; ``clock`` gives seconds since the epoch.
    """
    from bot.web.console import exports, pages

    console = ConsoleService(service)
    app = web.Application(middlewares=[session_middleware])
    app[PARTS] = ConsoleParts(
        console=console,
        access=Access(console, operators, is_group_admin),
        links=LinkSigner(bot_token),
        sessions=SessionSigner(bot_token),
        limiter=AttemptLimiter(clock),
        templates=build_environment(),
        bot_token=bot_token,
        bot_username=bot_username,
        public_url=public_url,
        clock=clock,
    )
    app.router.add_get("/login", login_page)
    app.router.add_post("/login", login_with_link)
    app.router.add_get("/login/telegram", login_with_widget)
    app.router.add_post("/logout", logout)
    app.router.add_get("/static/console.css", stylesheet)
    pages.add_routes(app.router)
    exports.add_routes(app.router)
    return app

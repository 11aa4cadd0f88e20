"""Signing in and out: a one-time link the bot sends for ``/console`` in a private chat,
or Telegram's Login Widget where the console has an https address. Both end in a signed
session cookie (HTTP-only, SameSite=Lax, Secure over https, for the console's path only)
naming a session recorded in the database; signing out deletes it.
Attempts are limited per client address (behind a trusted proxy, the one it names)."""

from __future__ import annotations

import hmac
import secrets

from aiohttp import hdrs, web

from bot.web.console.app import (
    COOKIE,
    SESSION,
    STATIC,
    console_root,
    page,
    parts_of,
    refuse,
)
from bot.web.console.limits import client_address
from bot.web.signing import (
    SESSION_SECONDS,
    WIDGET_MAX_AGE_SECONDS,
    SignatureRefused,
    check_login_widget,
)

#: The cookie that ties a link's sign-in form to the browser that opened it. A form posted
#: from another site comes without it (SameSite=Strict), so no page can sign a visitor in
#: as its author with a link of the author's own (login CSRF).
FORM_COOKIE = "niuniu_sign_in"
#: How long an opened sign-in form may be sent: as long as its link lives.
FORM_SECONDS = 300


def _client(request: web.Request) -> str:
    return client_address(
        request.remote,
        request.headers.getall(hdrs.X_FORWARDED_FOR, []),
        parts_of(request).trusted_proxies,
    )


def _set_cookie(
    request: web.Request,
    response: web.StreamResponse,
    name: str,
    value: str,
    *,
    samesite: str,
    max_age: int,
) -> None:
    """A cookie of the console's: for its path only, out of scripts' reach, Secure over
    https."""
    response.set_cookie(
        name,
        value,
        path=f"{console_root(request)}/",
        httponly=True,
        samesite=samesite,
        secure=parts_of(request).https,
        max_age=max_age,
    )


async def _signed_in(request: web.Request, user_id: int) -> web.HTTPSeeOther:
    """Start a session for ``user_id`` and go to the overview (raise the answer)."""
    parts = parts_of(request)
    session, cookie = parts.sessions.issue(user_id, parts.now())
    await parts.console.start_session(
        session.session_id,
        user_id=user_id,
        now_ms=parts.now() * 1000,
        expires_at_ms=session.expires_at * 1000,
    )
    response = web.HTTPSeeOther(f"{console_root(request)}/")
    _set_cookie(request, response, COOKIE, cookie, samesite="Lax", max_age=SESSION_SECONDS)
    return response


async def login_page(request: web.Request) -> web.StreamResponse:
    """The sign-in page; with ``?token=`` from a link, a button that signs in with it (a
    POST, so that a link preview fetching the address does not use the link up)."""
    parts = parts_of(request)
    token = request.query.get("token", "")
    form = secrets.token_urlsafe(16) if token else ""
    response = page(
        request,
        "login.html",
        token=token,
        form=form,
        widget=parts.https and bool(parts.bot_username()),
        bot_username=parts.bot_username(),
        auth_url=parts.url("/login/telegram"),
    )
    if form:
        _set_cookie(request, response, FORM_COOKIE, form, samesite="Strict", max_age=FORM_SECONDS)
    return response


async def login_with_link(request: web.Request) -> web.StreamResponse:
    """Redeem a one-time link: signed, not expired, never used before."""
    parts = parts_of(request)
    if not parts.limiter.allow(_client(request)):
        return refuse(request, 429, "Too many attempts", "Wait a minute, then try again.")
    form = await request.post()
    opened, sent = request.cookies.get(FORM_COOKIE, ""), form.get("form")
    if (
        not opened
        or not isinstance(sent, str)
        or not hmac.compare_digest(opened.encode(), sent.encode())
    ):
        return refuse(
            request,
            403,
            "Sign-in refused",
            "This sign-in form was not opened in this browser. Open the link the bot sent "
            "you again, then press Sign in.",
        )
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
    response = await _signed_in(request, claim.user_id)
    response.del_cookie(FORM_COOKIE, path=f"{console_root(request)}/")
    raise response


async def login_with_widget(request: web.Request) -> web.StreamResponse:
    """Telegram's Login Widget sends the browser here with its signed data."""
    parts = parts_of(request)
    if not parts.limiter.allow(_client(request)):
        return refuse(request, 429, "Too many attempts", "Wait a minute, then try again.")
    try:
        user_id = check_login_widget(parts.bot_token, dict(request.query), parts.now())
    except SignatureRefused as refused:
        if refused.reason == "malformed":
            return refuse(request, 400, "Sign-in refused", "Telegram's sign-in data is malformed.")
        message = (
            "This sign-in is more than a day old; sign in again."
            if refused.reason == "expired"
            else "Telegram's sign-in data did not check out; sign in again."
        )
        return refuse(request, 403, "Sign-in refused", message)
    # Once only, as a link: the same data seen again (a proxy's log, the browser's
    # history) signs nobody in. Its hash is unique to it (the sign-in time is in it).
    fresh = await parts.console.claim_link(
        f"widget:{request.query.get('hash', '')[:24]}",
        user_id=user_id,
        now_ms=parts.now() * 1000,
        expires_at_ms=(parts.now() + WIDGET_MAX_AGE_SECONDS) * 1000,
    )
    if not fresh:
        return refuse(
            request, 403, "Sign-in refused", "This sign-in was used already; sign in again."
        )
    raise await _signed_in(request, user_id)


async def logout(request: web.Request) -> web.StreamResponse:
    """End the session on the server (a copy of its cookie signs nobody in after) and
    forget its cookie."""
    await parts_of(request).console.end_session(request[SESSION].session_id)
    response = web.HTTPSeeOther(f"{console_root(request)}/login")
    response.del_cookie(COOKIE, path=f"{console_root(request)}/")
    raise response


async def stylesheet(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(STATIC / "console.css")


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/login", login_page)
    router.add_post("/login", login_with_link)
    router.add_get("/login/telegram", login_with_widget)
    router.add_post("/logout", logout)
    router.add_get("/static/console.css", stylesheet)

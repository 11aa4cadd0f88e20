"""Signing in to the console over HTTP: a one-time link works once (recorded in the
database, so also across restarts and workers), a bad or old one is refused, attempts are
limited per address, and the session cookie is what it must be."""

from __future__ import annotations

import ipaddress
from typing import Any

from aiohttp import ClientSession, DummyCookieJar
from aiohttp.test_utils import TestClient
from sqlalchemy import func, select

from bot.service.game import GameService
from bot.store.db import Database
from bot.store.models import ConsoleSessionRow
from bot.web.console import LinkSigner
from bot.web.console.signin import FORM_COOKIE
from bot.web.signing import SESSION_SECONDS, SessionSigner, check_login_widget
from tests.helpers.console import OPERATOR, TOKEN, Console, post_link, start_console
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import ADMIN, PLAYERS, TEST_SETTINGS
from tests.helpers.signing import widget_data


async def test_a_link_signs_in_once(console: Console) -> None:
    token = LinkSigner(TOKEN).issue(ADMIN.id, console.clock.now_ms // 1000)
    page = await console.text(f"/console/login?token={token}")
    assert 'id="sign-in"' in page  # a button: a link preview's GET uses nothing up
    first = await post_link(console.client, token)
    assert first.status == 200 and str(first.url).endswith("/console/")
    console.client.session.cookie_jar.clear()
    again = await post_link(console.client, token)
    assert again.status == 403
    assert "used already" in await again.text()


async def test_a_link_posted_from_a_form_this_browser_did_not_open_is_refused_and_unused(
    console: Console,
) -> None:
    token = LinkSigner(TOKEN).issue(ADMIN.id, console.clock.now_ms // 1000)
    forged = await console.client.post("/console/login", data={"token": token, "form": "x"})
    assert forged.status == 403 and "not opened in this browser" in await forged.text()
    assert "niuniu_console" not in forged.cookies
    response = await post_link(console.client, token)  # the link is still good
    assert response.status == 200 and str(response.url).endswith("/console/")


async def test_a_used_link_stays_used_for_another_console_on_the_same_database(
    console: Console,
) -> None:
    token = LinkSigner(TOKEN).issue(ADMIN.id, console.clock.now_ms // 1000)
    assert (await post_link(console.client, token)).status == 200
    async for other in start_console(console.service, console.clock):  # a restart, a worker
        response = await post_link(other, token)
        assert response.status == 403


async def test_an_expired_or_tampered_link_is_refused(console: Console) -> None:
    now = console.clock.now_ms // 1000
    expired = LinkSigner(TOKEN).issue(ADMIN.id, now - 301)
    response = await post_link(console.client, expired)
    assert response.status == 403 and "expired" in await response.text()
    forged = LinkSigner(TOKEN).issue(ADMIN.id, now).replace(f"{ADMIN.id}.", "7.", 1)
    response = await post_link(console.client, forged)
    assert response.status == 403 and "not valid" in await response.text()


async def test_the_session_cookie_is_http_only_and_lax(console: Console) -> None:
    token = LinkSigner(TOKEN).issue(ADMIN.id, console.clock.now_ms // 1000)
    response = await post_link(console.client, token, allow_redirects=False)
    assert response.status == 303
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/console/" in cookie
    assert "Secure" not in cookie  # http://console.test


async def test_a_tampered_session_cookie_signs_nobody_in(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    cookie = console.client.session.cookie_jar.filter_cookies(console.client.make_url("/console/"))
    value = cookie["niuniu_console"].value
    forged = "7." + value.split(".", 1)[1]  # the operator's id under the admin's signature
    console.client.session.cookie_jar.clear()
    console.client.session.cookie_jar.update_cookies(
        {"niuniu_console": forged}, console.client.make_url("/console/")
    )
    response = await console.client.get("/console/", allow_redirects=False)
    assert response.status == 303 and response.headers["Location"] == "/console/login"


async def test_sign_in_attempts_are_limited_to_ten_a_minute(console: Console) -> None:
    for _ in range(10):
        response = await console.client.post("/console/login", data={"token": "nonsense"})
        assert response.status == 403
    response = await console.client.post("/console/login", data={"token": "nonsense"})
    assert response.status == 429
    good = LinkSigner(TOKEN).issue(ADMIN.id, console.clock.now_ms // 1000)
    assert (await post_link(console.client, good)).status == 429
    console.clock.advance(60)
    assert (await post_link(console.client, good)).status == 200


async def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_limit(
    db: Database, clock: Clock, seeds: Seeds
) -> None:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    proxy = (ipaddress.ip_network("127.0.0.1/32"),)
    async for client in start_console(service, clock, trusted_proxies=proxy):

        async def attempt(forwarded_for: str, through: TestClient[Any, Any] = client) -> int:
            headers = {"X-Forwarded-For": forwarded_for}
            response = await through.post("/console/login", data={"token": "x"}, headers=headers)
            return response.status

        assert [await attempt("198.51.100.7") for _ in range(11)] == [403] * 10 + [429]
        # Another client through the same proxy is not held back by the first one...
        assert await attempt("203.0.113.9") == 403
        # ...and the first cannot escape its limit by writing an address of its own.
        assert await attempt("192.0.2.1, 198.51.100.7") == 429


async def test_a_trusted_client_rotating_garbage_forwarded_for_keeps_its_own_limit(
    db: Database, clock: Clock, seeds: Seeds
) -> None:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    proxy = (ipaddress.ip_network("127.0.0.1/32"),)
    async for client in start_console(service, clock, trusted_proxies=proxy):
        statuses = []
        for n in range(11):
            headers = {"X-Forwarded-For": f"client-{n}, 1.2.3.{n}:80, {n}"}
            response = await client.post("/console/login", data={"token": "x"}, headers=headers)
            statuses.append(response.status)
        assert statuses == [403] * 10 + [429]
        # The limit was its own address's: a client elsewhere behind it is not held back.
        headers = {"X-Forwarded-For": "203.0.113.9"}
        response = await client.post("/console/login", data={"token": "x"}, headers=headers)
        assert response.status == 403


async def test_the_login_widget_signs_in_with_telegrams_data(console: Console) -> None:
    data = widget_data(TOKEN, auth_date=console.clock.now_ms // 1000, id=str(ADMIN.id))
    assert check_login_widget(TOKEN, data, console.clock.now_ms // 1000) == ADMIN.id
    response = await console.client.get("/console/login/telegram", params=data)
    assert response.status == 200 and str(response.url).endswith("/console/")
    console.client.session.cookie_jar.clear()
    replayed = await console.client.get("/console/login/telegram", params=data)
    assert replayed.status == 403 and "used already" in await replayed.text()
    data["first_name"] = "Mallory"
    response = await console.client.get("/console/login/telegram", params=data)
    assert response.status == 403


async def test_widget_data_signed_for_a_user_id_beyond_52_bits_is_a_clear_400(
    console: Console,
) -> None:
    now = console.clock.now_ms // 1000
    for user_id in ("9" * 20, str(2**52), "0"):
        data = widget_data(TOKEN, auth_date=now, id=user_id)
        response = await console.client.get("/console/login/telegram", params=data)
        assert response.status == 400
        assert "sign-in data is malformed" in await response.text()
        assert "niuniu_console" not in response.cookies
    # The largest id there can be still signs in.
    data = widget_data(TOKEN, auth_date=now, id=str(2**52 - 1))
    response = await console.client.get("/console/login/telegram", params=data)
    assert response.status == 200 and str(response.url).endswith("/console/")


def _session_cookie(console: Console) -> str:
    cookies = console.client.session.cookie_jar.filter_cookies(console.client.make_url("/console/"))
    return cookies["niuniu_console"].value


async def _with_cookie(console: Console, value: str, path: str = "/console/") -> int:
    """The status of a GET of ``path`` with only this session cookie (a copied one), from a
    client of its own (the console's client keeps its own cookies)."""
    async with ClientSession(cookie_jar=DummyCookieJar()) as other:
        response = await other.get(
            console.client.make_url(path),
            headers={"Cookie": f"niuniu_console={value}"},
            allow_redirects=False,
        )
        return response.status


async def test_signing_out_ends_the_session_for_every_copy_of_its_cookie(
    console: Console,
) -> None:
    await console.sign_in(ADMIN.id)
    copied = _session_cookie(console)
    assert await _with_cookie(console, copied) == 200
    csrf = await console.csrf()
    response = await console.client.post("/console/logout", data={"csrf": csrf})
    assert str(response.url).endswith("/console/login")
    response = await console.client.get("/console/", allow_redirects=False)
    assert response.status == 303
    # The copy is still signed and within its 12 hours, but its session has ended.
    console.client.session.cookie_jar.clear()
    assert await _with_cookie(console, copied) == 303
    forms = await console.client.post(
        "/console/logout", data={"csrf": csrf}, headers={"Cookie": f"niuniu_console={copied}"}
    )
    assert forms.status == 403


async def test_signing_out_ends_only_that_session(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    first = _session_cookie(console)
    console.client.session.cookie_jar.clear()
    await console.sign_in(ADMIN.id)
    second = _session_cookie(console)
    await console.client.post("/console/logout", data={"csrf": await console.csrf()})
    assert await _with_cookie(console, second) == 303
    assert await _with_cookie(console, first) == 200


async def test_a_session_ends_for_every_worker_on_the_same_database(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    copied = _session_cookie(console)
    async for other in start_console(console.service, console.clock):  # another worker
        response = await other.get(
            "/console/", headers={"Cookie": f"niuniu_console={copied}"}, allow_redirects=False
        )
        assert response.status == 200
        await console.client.post("/console/logout", data={"csrf": await console.csrf()})
        response = await other.get(
            "/console/", headers={"Cookie": f"niuniu_console={copied}"}, allow_redirects=False
        )
        assert response.status == 303


async def test_a_signed_cookie_for_a_session_never_started_signs_nobody_in(
    console: Console,
) -> None:
    # What the cookies of the previous version were: signed, unexpired, no session row.
    _, cookie = SessionSigner(TOKEN).issue(OPERATOR, console.clock.now_ms // 1000)
    assert await _with_cookie(console, cookie) == 303


async def test_an_operator_ends_every_session_of_a_user(console: Console) -> None:
    admin_cookies = []
    for _ in range(2):
        await console.sign_in(ADMIN.id)
        admin_cookies.append(_session_cookie(console))
        console.client.session.cookie_jar.clear()
    await console.sign_in(OPERATOR)
    page = await console.text(f"/console/players/{ADMIN.id}")
    assert '<p id="live-sessions">2 signed in now.</p>' in page
    response = await console.client.post(
        f"/console/players/{ADMIN.id}/sessions/end", data={"csrf": await console.csrf()}
    )
    assert response.status == 200 and "?sessions=ended" in str(response.url)
    page = await response.text()
    assert 'id="sessions-ended"' in page and "0 signed in now." in page
    assert [await _with_cookie(console, c) for c in admin_cookies] == [303, 303]
    assert await _with_cookie(console, _session_cookie(console)) == 200  # the operator's own


async def test_only_an_operator_ends_a_users_sessions(console: Console) -> None:
    await console.sign_in(OPERATOR)
    operator_cookie = _session_cookie(console)
    console.client.session.cookie_jar.clear()
    await console.sign_in(ADMIN.id)
    assert "live-sessions" not in await console.text(f"/console/players/{PLAYERS[0].id}")
    response = await console.client.post(
        f"/console/players/{OPERATOR}/sessions/end", data={"csrf": await console.csrf()}
    )
    assert response.status == 403 and "Operators only" in await response.text()
    assert await _with_cookie(console, operator_cookie) == 200


async def test_expired_sessions_are_deleted_as_sessions_start(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    await console.sign_in(OPERATOR)
    assert await _session_rows(console) == 2
    console.clock.advance(SESSION_SECONDS)
    await console.sign_in(OPERATOR)
    assert await _session_rows(console) == 1


async def _session_rows(console: Console) -> int:
    async with console.db.reading() as session:
        count = await session.scalar(select(func.count()).select_from(ConsoleSessionRow))
    return int(count or 0)


async def test_over_https_the_widget_is_offered_and_the_cookie_is_secure(console: Console) -> None:
    async for client in start_console(
        console.service, console.clock, public_url="https://bot.example.com"
    ):
        page = await (await client.get("/console/login")).text()
        assert 'src="https://telegram.org/js/telegram-widget.js?22"' in page
        assert 'data-telegram-login="niuniu_test_bot"' in page
        assert 'data-auth-url="https://bot.example.com/console/login/telegram"' in page
        token = LinkSigner(TOKEN).issue(ADMIN.id, console.clock.now_ms // 1000)
        opened = await client.get("/console/login", params={"token": token})
        form_cookie = opened.headers["Set-Cookie"]
        assert "Secure" in form_cookie and "SameSite=Strict" in form_cookie
        # The test client speaks plain http, so it keeps Secure cookies to itself: the
        # browser's part (sending the form's cookie back) is played here.
        form = opened.cookies[FORM_COOKIE].value
        response = await client.post(
            "/console/login",
            data={"token": token, "form": form},
            headers={"Cookie": f"{FORM_COOKIE}={form}"},
            allow_redirects=False,
        )
        session_cookie = response.headers.getall("Set-Cookie")
        assert any("niuniu_console=" in c and "Secure" in c for c in session_cookie)

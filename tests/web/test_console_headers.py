"""Every kind of response of the console carries the headers that keep private data out
of caches, frames, type guessing and Referers (``bot/web/console/headers.py``)."""

from __future__ import annotations

import pytest
from aiohttp import ClientResponse

from bot.service.console import ConsoleService
from bot.web.console import LinkSigner
from tests.helpers.console import GROUP, OTHER, TOKEN, Console
from tests.helpers.game import ADMIN

EXPECTED = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def missing(response: ClientResponse) -> dict[str, str | None]:
    """The expected headers this response lacks or has otherwise (with what it has)."""
    return {
        name: response.headers.get(name)
        for name, value in EXPECTED.items()
        if response.headers.get(name) != value
    }


async def test_every_kind_of_console_response_carries_the_private_headers(
    console: Console,
) -> None:
    get = console.client.get
    token = LinkSigner(TOKEN).issue(ADMIN.id, console.clock.now_ms // 1000)
    signed_out = {
        "sign-in page": await get("/console/login"),
        "sign-in page with a link": await get("/console/login", params={"token": token}),
        "redirect to sign in": await get("/console/", allow_redirects=False),
        "refused form": await console.client.post("/console/logout", data={"csrf": "x"}),
        "malformed widget data": await get("/console/login/telegram", params={"id": "1"}),
        "stylesheet": await get("/console/static/console.css"),
    }
    await console.sign_in(ADMIN.id)
    signed_in = {
        "overview page": await get("/console/"),
        "group page": await get(f"/console/groups/{GROUP}"),
        "rounds CSV": await get("/console/export/rounds.csv"),
        "ledger CSV": await get(f"/console/export/groups/{GROUP}/ledger.csv"),
        "another group's page (403)": await get(f"/console/groups/{OTHER}"),
        "no such round (404 page)": await get("/console/rounds/999999"),
        "malformed number (400 page)": await get("/console/rounds?before=x"),
        "no such path (aiohttp's 404)": await get("/console/no/such/page"),
        "wrong method (aiohttp's 405)": await get("/console/logout"),
    }
    statuses = {kind: r.status for kind, r in {**signed_out, **signed_in}.items()}
    assert statuses == {
        "sign-in page": 200,
        "sign-in page with a link": 200,
        "redirect to sign in": 303,
        "refused form": 403,
        "malformed widget data": 400,
        "stylesheet": 200,
        "overview page": 200,
        "group page": 200,
        "rounds CSV": 200,
        "ledger CSV": 200,
        "another group's page (403)": 403,
        "no such round (404 page)": 404,
        "malformed number (400 page)": 400,
        "no such path (aiohttp's 404)": 404,
        "wrong method (aiohttp's 405)": 405,
    }
    assert signed_in["rounds CSV"].headers["Content-Type"].startswith("text/csv")
    lacking = {kind: missing(r) for kind, r in {**signed_out, **signed_in}.items()}
    assert lacking == {kind: {} for kind in lacking}


async def test_an_unexpected_error_of_the_console_carries_them_too(
    console: Console, monkeypatch: pytest.MonkeyPatch
) -> None:
    await console.sign_in(ADMIN.id)

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(ConsoleService, "overview", broken)
    response = await console.client.get("/console/")
    assert response.status == 500
    assert "a bug" not in await response.text()
    assert missing(response) == {}

"""What people type into the console's addresses and forms, and what a stranger might: ids
beyond what the database stores, tokens with characters no signature has, a group the bot
does not know. Each gets a clear page (400, 403 or the sign-in), never a server error, and
Telegram is not asked about groups the bot does not have."""

from __future__ import annotations

import pytest

from tests.helpers import console as console_helpers
from tests.helpers.console import GROUP, Console
from tests.helpers.game import ADMIN

BEYOND_64_BITS = "9999999999999999999"


@pytest.mark.parametrize(
    "path",
    [
        f"/console/rounds/{BEYOND_64_BITS}",
        f"/console/players/{BEYOND_64_BITS}",
        f"/console/rounds?before={BEYOND_64_BITS}",
        f"/console/rounds?group={BEYOND_64_BITS}",
        f"/console/rounds?player={BEYOND_64_BITS}",
        f"/console/groups/{GROUP}?audit_before={BEYOND_64_BITS}",
        f"/console/export/rounds.csv?before={BEYOND_64_BITS}",
        f"/console/export/groups/{BEYOND_64_BITS}/ledger.csv",
    ],
)
async def test_an_id_beyond_what_the_database_stores_is_a_clear_400(
    console: Console, path: str
) -> None:
    await console.sign_in(ADMIN.id)
    response = await console.client.get(path)
    assert response.status == 400, await response.text()
    assert "must be a whole number" in await response.text()


async def test_a_session_cookie_with_characters_no_signature_has_asks_to_sign_in(
    console: Console,
) -> None:
    console.client.session.cookie_jar.update_cookies(
        {"niuniu_console": "1.2.3.é"}, console.client.make_url("/console/")
    )
    response = await console.client.get("/console/", allow_redirects=False)
    assert response.status == 303 and response.headers["Location"] == "/console/login"


async def test_a_csrf_token_with_characters_no_token_has_is_refused(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    response = await console.client.post(
        f"/console/groups/{GROUP}/settings", data={"csrf": "é", "key": "rake", "value": "1%"}
    )
    assert response.status == 403 and "Form expired" in await response.text()


async def test_sign_in_data_with_characters_no_signature_has_is_refused(console: Console) -> None:
    widget = await console.client.get(
        "/console/login/telegram", params={"hash": "é", "id": "1", "auth_date": "1"}
    )
    assert widget.status == 403
    console.client.session.cookie_jar.update_cookies(
        {"niuniu_sign_in": "abc"}, console.client.make_url("/console/")
    )
    link = await console.client.post("/console/login", data={"form": "é", "token": "x"})
    assert link.status == 403


async def test_telegram_is_not_asked_about_a_group_the_bot_does_not_have(
    console: Console, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[int] = []

    def is_admin_of(chat_id: int, user_id: int) -> bool:
        asked.append(chat_id)
        return False

    monkeypatch.setattr(console_helpers, "is_admin_of", is_admin_of)
    await console.sign_in(ADMIN.id)
    asked.clear()

    response = await console.client.get("/console/groups/-424242")

    assert response.status == 403
    assert asked == []


async def test_an_admin_who_never_played_nor_acted_in_their_group_sees_its_rounds(
    console: Console, monkeypatch: pytest.MonkeyPatch
) -> None:
    newcomer = 4242  # administers GROUP, holds no chips there, never used an admin command
    admin_of = console_helpers.is_admin_of
    monkeypatch.setattr(
        console_helpers,
        "is_admin_of",
        lambda chat_id, user_id: (
            admin_of(chat_id, user_id) or (chat_id, user_id) == (GROUP, newcomer)
        ),
    )
    await console.sign_in(newcomer)

    page = await console.text(f"/console/rounds?group={GROUP}")

    assert "No round matches" not in page
    assert f">{console.history.settled[0]}<" in page

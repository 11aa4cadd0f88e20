"""The Mini App's API over real HTTP on each database, with the bot's own shell behind it
(``GameShell``: the real ``MemberCheck`` and ``MiniAppMoves`` over a fake Bot).

A round of ``GROUP`` is taking bets. What the page may be sent and what a stranger might
send: forged, stale and missing sign-ins and tokens, a non-member, a group the bot does
not know, chat ids and amounts that are no such thing, a bet after the window closed.
Each is answered with a clear status and ``{"error": ...}`` (for a bet, the bot's own
catalogue message) and changes nothing; a good bet is taken, answered as ``/bet`` is.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from telegram import ChatMember

from bot.engine.round import Phase
from bot.service.game import GameService
from bot.store.db import Database
from bot.telegram.i18n import translate
from bot.telegram.messenger import plain_text
from bot.web.miniapp.init_data import MAX_AGE_SECONDS
from bot.web.miniapp.sessions import SESSION_SECONDS
from bot.web.miniapp.start_param import NoGroup, decode_group, encode_group
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import DEALER, GROUP, PLAYERS, TEST_SETTINGS
from tests.helpers.miniapp import TOKEN, betting_round, serve_miniapp
from tests.helpers.signing import init_data
from tests.helpers.telegram_shells import GameShell

PLAYER, OTHER = PLAYERS[0], PLAYERS[1]
#: A group the bot has no record of.
STRANGE_GROUP = -1_009_999


@dataclass
class MiniApp:
    client: TestClient[web.Request, web.Application]
    service: GameService
    shell: GameShell
    clock: Clock
    round_id: int

    async def sign_in(self, user_id: int = PLAYER.id, **extra: str) -> str:
        person = {"id": user_id, "first_name": f"User{user_id}"}
        data = init_data(TOKEN, self.clock.now_ms // 1000, user=person, **extra)
        response = await self.client.post("/miniapp/api/session", json={"initData": data})
        assert response.status == 200, await response.text()
        token: str = (await response.json())["token"]
        return token

    async def table(self, token: str, chat: object = GROUP) -> tuple[int, Any]:
        response = await self.client.get(
            "/miniapp/api/table", params={"chat": str(chat)}, headers=bearer(token)
        )
        return response.status, await response.json()

    async def bet(self, token: str, amount: object, chat: object = GROUP) -> tuple[int, Any]:
        body = {"chat": chat, "amount": amount}
        response = await self.client.post("/miniapp/api/bet", json=body, headers=bearer(token))
        return response.status, await response.json()

    async def state(self) -> tuple[object, ...]:
        """What a refused request must leave alone: the players' chips and the round."""
        current = await self.service.current_round(GROUP)
        assert current is not None
        balances = [await self.service.balance(GROUP, p.id) for p in (PLAYER, OTHER)]
        return (*balances, current.version, current.phase, current.bets)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def bot_text(key: str, **params: Any) -> str:
    """A catalogue message as the page gets it: the group's (English), as plain text."""
    return plain_text(translate("en", key, TEST_SETTINGS.currency, **params))


@pytest.fixture
async def miniapp(db: Database, clock: Clock, seeds: Seeds) -> AsyncIterator[MiniApp]:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    round_id = await betting_round(service, clock, [PLAYER, OTHER])
    shell = GameShell(service)
    client = await serve_miniapp(service, shell, clock)
    try:
        yield MiniApp(client, service, shell, clock, round_id)
    finally:
        await client.close()


async def test_a_member_signs_in_and_sees_the_table_without_its_seed(miniapp: MiniApp) -> None:
    person = {"id": PLAYER.id, "first_name": "Ann"}
    data = init_data(TOKEN, miniapp.clock.now_ms // 1000, user=person, start_param=str(GROUP))
    response = await miniapp.client.post("/miniapp/api/session", json={"initData": data})
    assert response.status == 200
    signed = await response.json()
    assert signed["chat"] == GROUP and signed["user"]["id"] == PLAYER.id
    await miniapp.service.bet(GROUP, OTHER, 700)

    status, table = await miniapp.table(signed["token"])
    assert status == 200, table
    current = await miniapp.service.current_round(GROUP)
    assert current is not None and current.phase is Phase.BETTING
    shown = table["round"]
    assert shown["phase"] == "betting" and shown["deadline_ms"] == current.deadline_ms
    assert table["now_ms"] == miniapp.clock.now_ms
    assert shown["dealer"] == {"house": False, "name": DEALER.first_name}
    assert shown["pool"] == {"cents": current.pool, "text": f"RM{current.pool // 100}.00"}
    assert shown["bets"] == [
        {"name": OTHER.first_name, "mine": False, "standing": False, "cents": 700, "text": "RM7.00"}
    ]
    assert table["chips"]["available"]["cents"] == 100_000
    assert table["chips"]["held"]["cents"] == 0
    # The open round's seed is nowhere in what the page gets.
    body = json.dumps(table)
    assert current.seed.hex() not in body and "seed" not in body


async def test_a_bet_is_taken_as_bet_is_and_answered_with_the_bots_words(
    miniapp: MiniApp,
) -> None:
    token = await miniapp.sign_in()
    status, answer = await miniapp.bet(token, "12.50")
    assert status == 200, answer
    assert answer["text"] == bot_text("answer.bet_placed", amount=1250)
    mine = [bet for bet in answer["table"]["round"]["bets"] if bet["mine"]]
    assert [bet["cents"] for bet in mine] == [1250]
    balance = await miniapp.service.balance(GROUP, PLAYER.id)
    assert answer["table"]["chips"]["held"]["cents"] == balance.held > 0
    assert answer["table"]["chips"]["available"]["cents"] == balance.available
    current = await miniapp.service.current_round(GROUP)
    assert current is not None
    assert [(b.user_id, b.amount) for b in current.bets] == [(PLAYER.id, 1250)]
    status, answer = await miniapp.bet(token, "0")
    assert status == 200 and answer["text"] == bot_text("answer.bet_cancelled", amount=1250)


@pytest.mark.parametrize(
    ("initdata", "reason"),
    [
        ("forged", "Telegram's signature does not match"),
        ("stale", "too old"),
        ("garbage", "not Telegram's initData"),
    ],
)
async def test_a_forged_stale_or_garbled_sign_in_is_refused(
    miniapp: MiniApp, initdata: str, reason: str
) -> None:
    now = miniapp.clock.now_ms // 1000
    data = {
        "forged": init_data("654321:another-bot", now),
        "stale": init_data(TOKEN, now - MAX_AGE_SECONDS - 1),
        "garbage": "user=%7B%7D&hash=zz",
    }[initdata]
    response = await miniapp.client.post("/miniapp/api/session", json={"initData": data})
    assert response.status == 401
    assert reason in (await response.json())["error"]


async def test_a_sign_in_that_is_not_json_is_a_clear_400(miniapp: MiniApp) -> None:
    response = await miniapp.client.post("/miniapp/api/session", data=b"initData=x")
    assert response.status == 400
    assert (await response.json()) == {"error": "The request's body is not JSON."}


@pytest.mark.parametrize("token", ["", "forged", "expired"])
async def test_no_forged_or_expired_token_reads_or_bets(miniapp: MiniApp, token: str) -> None:
    good = await miniapp.sign_in()
    before = await miniapp.state()
    if token == "forged":
        token = good[:-1] + ("0" if good[-1] != "0" else "1")
    elif token == "expired":
        token = good
        miniapp.clock.advance(SESSION_SECONDS)
    headers = bearer(token) if token else {}
    response = await miniapp.client.get("/miniapp/api/table", params={"chat": str(GROUP)})
    assert response.status == 401
    for path, method in (("/miniapp/api/table", "GET"), ("/miniapp/api/bet", "POST")):
        response = await miniapp.client.request(
            method,
            path,
            params={"chat": str(GROUP)},
            json={"chat": GROUP, "amount": "5"},
            headers=headers,
        )
        assert response.status == 401, await response.text()
        error = (await response.json())["error"]
        expected = "session ended" if token == good else "Not signed in"
        assert expected in error, error
    assert await miniapp.state() == before


@pytest.mark.parametrize("status", [ChatMember.LEFT, ChatMember.BANNED])
async def test_a_non_member_sees_nothing_of_the_group_and_cannot_bet(
    miniapp: MiniApp, status: str
) -> None:
    miniapp.shell.bot.statuses[(GROUP, OTHER.id)] = status
    token = await miniapp.sign_in(OTHER.id)
    before = await miniapp.state()
    refused = {
        "error": "You are not in this group, so its table is not shown to you.",
        "reason": "not_member",
    }
    assert await miniapp.table(token) == (403, refused)
    assert await miniapp.bet(token, "5") == (403, refused)
    assert await miniapp.state() == before


async def test_a_group_the_bot_does_not_know_is_refused_without_asking_telegram(
    miniapp: MiniApp,
) -> None:
    token = await miniapp.sign_in()
    status, answer = await miniapp.table(token, STRANGE_GROUP)
    assert status == 403 and set(answer) == {"error", "reason"}
    assert not [call for call in miniapp.shell.bot.calls if call.method == "get_chat_member"]


@pytest.mark.parametrize(
    "chat", ["abc", "", "12", "-", "-٣٣", "- 5", "-1.5", "-9999999999999999", "-1" + "0" * 20]
)
async def test_a_chat_that_is_no_groups_id_is_a_clear_400(miniapp: MiniApp, chat: str) -> None:
    token = await miniapp.sign_in()
    before = await miniapp.state()
    status, answer = await miniapp.table(token, chat)
    assert status == 400 and "chat" in answer["error"], answer
    status, answer = await miniapp.bet(token, "5", chat)
    assert status == 400 and "chat" in answer["error"], answer
    assert await miniapp.state() == before


@pytest.mark.parametrize(
    ("amount", "key", "params"),
    [
        ("ten", "error.bad_amount.not_amount", {"typed": "ten"}),
        ("-5", "error.bad_amount.negative", {"typed": "-5"}),
        ("١٢", "error.bad_amount.digits", {"typed": "١٢"}),
        ("", "error.bad_amount.missing", {"typed": ""}),
        ("99999999999", "error.bet_too_large", {"maximum": TEST_SETTINGS.max_bet}),
        ("0.50", "error.bet_too_small", {"minimum": TEST_SETTINGS.min_bet}),
    ],
)
async def test_an_amount_that_is_no_bet_is_refused_in_the_bots_words(
    miniapp: MiniApp, amount: str, key: str, params: dict[str, Any]
) -> None:
    token = await miniapp.sign_in()
    before = await miniapp.state()
    status, answer = await miniapp.bet(token, amount)
    assert (status, answer) == (409, {"error": bot_text(key, **params)})
    assert await miniapp.state() == before


@pytest.mark.parametrize("amount", [5, 5.5, None, ["5"]])
async def test_an_amount_that_is_not_text_is_a_clear_400(miniapp: MiniApp, amount: object) -> None:
    token = await miniapp.sign_in()
    before = await miniapp.state()
    status, answer = await miniapp.bet(token, amount)
    assert (status, answer) == (400, {"error": 'amount must be text, like "12.50".'})
    assert await miniapp.state() == before


async def test_a_bet_after_the_window_closed_is_refused_and_changes_nothing(
    miniapp: MiniApp,
) -> None:
    token = await miniapp.sign_in()
    miniapp.clock.advance(TEST_SETTINGS.bet_seconds)
    before = await miniapp.state()
    status, answer = await miniapp.bet(token, "5")
    assert (status, answer) == (409, {"error": bot_text("error.window_closed")})
    assert await miniapp.state() == before


async def test_the_page_and_its_files_are_served_with_their_headers(miniapp: MiniApp) -> None:
    response = await miniapp.client.get("/miniapp/")
    assert response.status == 200
    page = await response.text()
    assert "https://telegram.org/js/telegram-web-app.js" in page
    assert response.headers["Cache-Control"] == "no-store"
    assert "frame-ancestors https://web.telegram.org" in response.headers["Content-Security-Policy"]
    for name in ("app.js", "miniapp.css"):
        response = await miniapp.client.get(f"/miniapp/static/{name}")
        assert response.status == 200, name


async def test_the_boards_link_names_the_group_as_start_param(miniapp: MiniApp) -> None:
    person = {"id": PLAYER.id, "first_name": "Ann"}
    start = encode_group(GROUP)
    assert start == f"g{-GROUP}"
    data = init_data(TOKEN, miniapp.clock.now_ms // 1000, user=person, start_param=start)
    response = await miniapp.client.post("/miniapp/api/session", json={"initData": data})
    assert response.status == 200
    assert (await response.json())["chat"] == GROUP


@pytest.mark.parametrize(
    "start", ["g", "g0", "g012", "g-5", "G5", "g٣٣", "5", "-0", "x" * 64, "g" + "9" * 17, "-1 "]
)
async def test_a_start_param_naming_no_group_is_refused_and_nothing_is_noted(
    miniapp: MiniApp, start: str
) -> None:
    stranger = 4_242
    person = {"id": stranger, "first_name": "Stranger"}
    data = init_data(TOKEN, miniapp.clock.now_ms // 1000, user=person, start_param=start)
    response = await miniapp.client.post("/miniapp/api/session", json={"initData": data})
    assert response.status == 400
    assert (await response.json()) == {
        "error": "This link names no group: open the table from your group's board.",
        "reason": "no_group",
    }
    assert await miniapp.service.names([stranger]) == {}


@pytest.mark.parametrize("chat_id", [-1, -1_001_234_567_890, -(2**52) + 1])
def test_a_groups_start_param_reads_back_as_the_group(chat_id: int) -> None:
    assert decode_group(encode_group(chat_id)) == chat_id
    assert decode_group(str(chat_id)) == chat_id  # the id itself, as links pinned by hand


@pytest.mark.parametrize("chat_id", [0, 5, -(2**52)])
def test_no_start_param_is_made_for_what_is_no_group(chat_id: int) -> None:
    with pytest.raises(ValueError, match="no group"):
        encode_group(chat_id)
    with pytest.raises(NoGroup):
        decode_group(str(chat_id))

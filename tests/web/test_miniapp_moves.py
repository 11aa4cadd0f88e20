"""The Mini App's moves beside the bet, over real HTTP on each database, with the bot's own
shell behind them: a bid, a grab, a bet changed and cancelled, the standing bet set and
stopped, and "same again". Each goes through the service call its command or button
makes and is answered in the bot's words; each refusal (an amount that is no amount, a
move after its window closed, a round that is not the group's open one, another group's
round) is answered with the bot's refusal and changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from bot.engine.round import Phase
from bot.service.game import GameService
from bot.store.db import Database
from bot.telegram.i18n import translate
from bot.telegram.messenger import plain_text
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import DEALER, GROUP, PLAYERS, TEST_SETTINGS, check_ledger, fund
from tests.helpers.game import open_table as open_group
from tests.helpers.miniapp import TOKEN, serve_miniapp
from tests.helpers.signing import init_data
from tests.helpers.telegram_shells import GameShell

PLAYER, OTHER = PLAYERS[0], PLAYERS[1]
#: A second group, where the player plays too.
ELSEWHERE = -1_002


def bot_text(key: str, **params: Any) -> str:
    return plain_text(translate("en", key, TEST_SETTINGS.currency, **params))


@dataclass
class Table:
    client: TestClient[web.Request, web.Application]
    service: GameService
    clock: Clock
    db: Database
    token: str = ""

    async def move(self, path: str, **body: Any) -> tuple[int, Any]:
        body.setdefault("chat", GROUP)
        headers = {"Authorization": f"Bearer {self.token}"}
        response = await self.client.post(f"/miniapp/api/{path}", json=body, headers=headers)
        return response.status, await response.json()

    async def start(self, chat_id: int = GROUP) -> int:
        """A round of ``chat_id`` just started (bidding); its id."""
        started = await self.service.start_round(chat_id, actor=DEALER)
        assert started.round is not None
        return started.round.id

    async def to_betting(self, round_id: int, chat_id: int = GROUP) -> None:
        await self.service.bid(chat_id, DEALER, 10_000)
        self.clock.advance(TEST_SETTINGS.bid_seconds)
        await self.service.advance(round_id)

    async def to_grabbing(self, round_id: int) -> None:
        self.clock.advance(TEST_SETTINGS.bet_seconds)
        await self.service.advance(round_id)

    async def state(self) -> tuple[object, ...]:
        """What a refused move must leave alone."""
        current = await self.service.current_round(GROUP)
        balances = [await self.service.balance(GROUP, p.id) for p in (PLAYER, OTHER, DEALER)]
        standing = await self.service.autobet(GROUP, PLAYER.id)
        shown = None if current is None else (current.version, current.phase, current.bets)
        return (*balances, shown, standing)


@pytest.fixture
async def table(db: Database, clock: Clock, seeds: Seeds) -> AsyncIterator[Table]:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    for chat_id in (GROUP, ELSEWHERE):
        await open_group(service, chat_id)
        for person in (DEALER, PLAYER, OTHER):
            await fund(service, person, 100_000, chat_id)
    client = await serve_miniapp(service, GameShell(service), clock)
    signed = init_data(
        TOKEN, clock.now_ms // 1000, user={"id": PLAYER.id, "first_name": PLAYER.first_name}
    )
    response = await client.post("/miniapp/api/session", json={"initData": signed})
    found = Table(client, service, clock, db, (await response.json())["token"])
    try:
        yield found
    finally:
        await client.close()


async def test_a_bid_is_taken_as_bid_is(table: Table) -> None:
    round_id = await table.start()
    status, answer = await table.move("bid", amount="20", round=round_id)
    assert (status, answer["text"]) == (200, bot_text("answer.bid_placed", amount=2_000))
    current = await table.service.current_round(GROUP)
    assert current is not None and (current.high_bidder, current.high_bid) == (PLAYER.id, 2_000)
    shown = answer["table"]
    # The page's quick bids: the least the next bid may be, and one step more.
    steps = [step["cents"] for step in shown["round"]["bid_steps"]]
    assert steps == [3_000, 4_000]
    assert shown["round"]["high_bid"] == {
        "name": PLAYER.first_name,
        "cents": 2_000,
        "text": "RM20.00",
    }
    balance = await table.service.balance(GROUP, PLAYER.id)
    assert shown["chips"]["held"]["cents"] == balance.held == 2_000
    await check_ledger(table.db)


#: What a player may type where an amount goes and is no amount: (typed, refusal, its
#: parameters).
NO_AMOUNTS: list[tuple[str, str, dict[str, Any]]] = [
    ("ten", "error.bad_amount.not_amount", {"typed": "ten"}),
    ("-5", "error.bad_amount.negative", {"typed": "-5"}),
    ("١٢", "error.bad_amount.digits", {"typed": "١٢"}),
]


@pytest.mark.parametrize(
    ("amount", "key", "params"),
    [
        *NO_AMOUNTS,
        ("5", "error.bid_too_low", {"minimum": TEST_SETTINGS.min_bid}),
    ],
)
async def test_a_bid_that_is_no_amount_is_refused_in_the_bots_words(
    table: Table, amount: str, key: str, params: dict[str, Any]
) -> None:
    round_id = await table.start()
    before = await table.state()
    assert await table.move("bid", amount=amount, round=round_id) == (
        409,
        {"error": bot_text(key, **params)},
    )
    assert await table.state() == before


async def test_a_bid_after_bidding_closed_is_refused(table: Table) -> None:
    round_id = await table.start()
    table.clock.advance(TEST_SETTINGS.bid_seconds)
    before = await table.state()
    status, answer = await table.move("bid", amount="20", round=round_id)
    assert (status, answer) == (409, {"error": bot_text("error.window_closed")})
    assert await table.state() == before


async def test_a_bid_while_betting_is_refused(table: Table) -> None:
    round_id = await table.start()
    await table.to_betting(round_id)
    before = await table.state()
    status, answer = await table.move("bid", amount="20", round=round_id)
    assert (status, answer) == (409, {"error": bot_text("error.not_bidding")})
    assert await table.state() == before


@pytest.mark.parametrize("path", ["bid", "bet", "grab"])
async def test_a_move_for_an_old_round_or_another_groups_round_is_refused(
    table: Table, path: str
) -> None:
    old = await table.start()
    await table.service.bid(GROUP, DEALER, 10_000)
    table.clock.advance(TEST_SETTINGS.bid_seconds)
    await table.service.advance(old)
    table.clock.advance(TEST_SETTINGS.bet_seconds)
    await table.service.advance(old)  # no bets: the round ends
    current = await table.start()
    if path != "bid":
        await table.to_betting(current)
    if path == "grab":
        await table.service.bet(GROUP, OTHER, 500)
        await table.to_grabbing(current)
    theirs = await table.start(ELSEWHERE)
    before = await table.state()
    amount = {"grab": {}, "bid": {"amount": "20"}, "bet": {"amount": "5"}}[path]
    for stale in (old, theirs, current + 1_000):
        status, answer = await table.move(path, round=stale, **amount)
        assert (status, answer) == (409, {"error": bot_text("error.stale_button")}), stale
    assert await table.state() == before


async def test_a_bet_is_changed_then_cancelled_in_the_round_shown(table: Table) -> None:
    round_id = await table.start()
    await table.to_betting(round_id)
    status, answer = await table.move("bet", amount="5", round=round_id)
    assert (status, answer["text"]) == (200, bot_text("answer.bet_placed", amount=500))
    status, answer = await table.move("bet", amount="7.50", round=round_id)
    assert (status, answer["text"]) == (200, bot_text("answer.bet_changed", amount=750))
    current = await table.service.current_round(GROUP)
    assert current is not None
    assert [(bet.user_id, bet.amount) for bet in current.bets] == [(PLAYER.id, 750)]
    status, answer = await table.move("bet", amount="0", round=round_id)
    assert (status, answer["text"]) == (200, bot_text("answer.bet_cancelled", amount=750))
    assert answer["table"]["round"]["bets"] == []
    assert answer["table"]["chips"]["held"]["cents"] == 0
    await check_ledger(table.db)


async def test_a_grab_is_taken_as_the_grab_button_is(table: Table) -> None:
    round_id = await table.start()
    await table.to_betting(round_id)
    await table.service.bet(GROUP, PLAYER, 500)
    await table.to_grabbing(round_id)
    status, answer = await table.move("grab", round=round_id)
    assert status == 200, answer
    current = await table.service.current_round(GROUP)
    assert current is not None and current.phase is Phase.GRABBING
    (grab,) = current.grabs
    assert grab.user_id == PLAYER.id
    assert answer["text"] == bot_text("answer.grabbed", share=grab.amount)
    assert answer["table"]["round"]["grabbed"] == [PLAYER.first_name]
    assert answer["table"]["round"]["me"] == {"plays": True, "grabbed": True}
    before = await table.state()
    status, answer = await table.move("grab", round=round_id)  # a second grab
    assert status == 409 and set(answer) == {"error"}
    assert await table.state() == before


async def test_a_grab_after_its_window_closed_is_refused(table: Table) -> None:
    round_id = await table.start()
    await table.to_betting(round_id)
    await table.service.bet(GROUP, PLAYER, 500)
    await table.to_grabbing(round_id)
    table.clock.advance(TEST_SETTINGS.grab_seconds)
    before = await table.state()
    status, answer = await table.move("grab", round=round_id)
    assert (status, answer) == (409, {"error": bot_text("error.window_closed")})
    assert await table.state() == before


async def test_the_standing_bet_is_set_placed_at_once_and_stopped(table: Table) -> None:
    round_id = await table.start()
    await table.to_betting(round_id)
    status, answer = await table.move("autobet", amount="20")
    assert (status, answer["text"]) == (200, bot_text("answer.autobet_on_now", amount=2_000))
    assert answer["table"]["standing"] == {"once": False, "cents": 2_000, "text": "RM20.00"}
    mine = [bet for bet in answer["table"]["round"]["bets"] if bet["mine"]]
    assert [(bet["cents"], bet["standing"]) for bet in mine] == [(2_000, True)]
    status, answer = await table.move("autobet", amount="off")
    assert (status, answer["text"]) == (200, bot_text("answer.autobet_off", amount=2_000))
    assert answer["table"]["standing"] is None
    assert await table.service.autobet(GROUP, PLAYER.id) is None
    await check_ledger(table.db)


@pytest.mark.parametrize(
    ("amount", "key", "params"),
    [
        *NO_AMOUNTS,
        ("99999999999", "error.bet_too_large", {"maximum": TEST_SETTINGS.max_bet}),
    ],
)
async def test_a_standing_bet_that_is_no_amount_is_refused(
    table: Table, amount: str, key: str, params: dict[str, Any]
) -> None:
    before = await table.state()
    assert await table.move("autobet", amount=amount) == (409, {"error": bot_text(key, **params)})
    assert await table.state() == before


async def settled_round(table: Table, stake: int | None) -> int:
    """A round of ``GROUP`` played through, the player betting ``stake`` (or not); its id."""
    round_id = await table.start()
    await table.to_betting(round_id)
    await table.service.bet(GROUP, OTHER, 500)
    if stake is not None:
        await table.service.bet(GROUP, PLAYER, stake)
    await table.to_grabbing(round_id)
    for person in ([PLAYER] if stake is not None else []) + [OTHER, DEALER]:
        await table.service.grab(GROUP, person, round_id=round_id)
    assert await table.service.current_round(GROUP) is None
    return round_id


async def test_same_again_keeps_the_last_rounds_bet_for_the_next_betting(table: Table) -> None:
    round_id = await settled_round(table, 700)
    headers = {"Authorization": f"Bearer {table.token}"}
    response = await table.client.get(
        "/miniapp/api/table", params={"chat": str(GROUP)}, headers=headers
    )
    shown = await response.json()
    assert shown["round"] is None and shown["last_round"] == round_id
    status, answer = await table.move("again", round=round_id)
    assert (status, answer["text"]) == (200, bot_text("answer.same_again_next", amount=700))
    assert answer["table"]["standing"] == {"once": True, "cents": 700, "text": "RM7.00"}
    # Placed as the next round's betting opens, as the results' button's is.
    next_id = await table.start()
    await table.to_betting(next_id)
    current = await table.service.current_round(GROUP)
    assert current is not None
    assert (PLAYER.id, 700) in [(bet.user_id, bet.amount) for bet in current.bets]
    await check_ledger(table.db)


async def test_same_again_without_a_bet_or_of_an_old_round_is_refused(table: Table) -> None:
    old = await settled_round(table, 700)
    last = await settled_round(table, None)
    before = await table.state()
    status, answer = await table.move("again", round=last)
    assert (status, answer) == (409, {"error": bot_text("error.again_without_bet")})
    status, answer = await table.move("again", round=old)
    assert (status, answer) == (409, {"error": bot_text("error.stale_button")})
    assert await table.state() == before


@pytest.mark.parametrize("path", ["bid", "grab", "again"])
@pytest.mark.parametrize("shown", ["abc", "", "-1", "0", "07", "٣", "1.5", 1.5, None, [1]])
async def test_a_round_that_is_no_rounds_number_is_a_clear_400(
    table: Table, path: str, shown: object
) -> None:
    round_id = await table.start()
    before = await table.state()
    status, answer = await table.move(path, amount="20", round=shown)
    assert (status, answer) == (
        400,
        {"error": "round must be the number of the round shown, like 412."},
    ), round_id
    assert await table.state() == before


async def test_a_move_in_a_group_the_player_is_not_in_is_refused(table: Table) -> None:
    round_id = await table.start()
    before = await table.state()
    status, answer = await table.move("bid", chat=-1_009_999, amount="20", round=round_id)
    assert status == 403 and set(answer) == {"error", "reason"}
    assert await table.state() == before

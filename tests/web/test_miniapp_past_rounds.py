"""What the Mini App shows besides the live round, over real HTTP on each database, with
the bot's own shell behind it: a settled round's results (the group's text, the same
picture, the dealer's cards), the player's own history and ``/stats``, the table's rules
and odds, and ``/verify`` of a past round.

``GROUP`` plays Bull Bull: round one is settled (the player and another bet in it), the
round after it is taking bets. Every refusal (a stranger, another group's round, an open
round, a round that is no round's number) is a clear status and ``{"error": ...}``,
changes nothing, and no answer ever carries the open round's seed.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from telegram import ChatMember

from bot.engine.round import Phase, Round, RoundSettled
from bot.money import format_signed
from bot.pictures.results import render_results
from bot.service.game import GameService
from bot.store.db import Database
from bot.telegram.handlers.stats import stats_text
from bot.telegram.messenger import plain_text
from bot.telegram.pictures import RoundPictures, cards_of
from bot.telegram.views import Views
from bot.web.miniapp.past_rounds import HISTORY_PAGE
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import ADMIN, DEALER, GROUP, PLAYERS, TEST_SETTINGS, fund
from tests.helpers.miniapp import TOKEN, serve_miniapp
from tests.helpers.signing import init_data
from tests.helpers.telegram_shells import GameShell

PLAYER, OTHER, STRANGER = PLAYERS[0], PLAYERS[1], PLAYERS[2]
#: A second group, with a settled round of its own.
ELSEWHERE = -1_002
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PATHS = ("results", "history", "stats", "rules", "verify")


@dataclass
class Past:
    client: TestClient[web.Request, web.Application]
    service: GameService
    shell: GameShell
    clock: Clock
    settled: Round
    open_round: Round
    elsewhere: Round
    #: Every body the app answered in the test, to look for secrets in.
    bodies: list[str]

    async def sign_in(self, person: Any = PLAYER) -> str:
        user = {"id": person.id, "first_name": person.first_name}
        data = init_data(TOKEN, self.clock.now_ms // 1000, user=user)
        response = await self.client.post("/miniapp/api/session", json={"initData": data})
        assert response.status == 200
        token: str = (await response.json())["token"]
        return token

    async def get(self, path: str, token: str, **params: object) -> tuple[int, Any]:
        params.setdefault("chat", GROUP)
        query = {key: str(value) for key, value in params.items()}
        response = await self.client.get(
            f"/miniapp/api/{path}", params=query, headers={"Authorization": f"Bearer {token}"}
        )
        self.bodies.append(await response.text())
        return response.status, await response.json()

    async def state(self) -> tuple[object, ...]:
        """What a request must leave alone: the chips and the open round."""
        current = await self.service.current_round(GROUP)
        assert current is not None
        balances = [await self.service.balance(GROUP, p.id) for p in (PLAYER, OTHER, DEALER)]
        return (*balances, current.version, current.phase, current.bets)


async def bull_bull_round(
    service: GameService, clock: Clock, chat_id: int, bets: list[tuple[Any, int]]
) -> Round:
    """A Bull Bull round of ``chat_id`` taking ``bets``, then settled (the cards are dealt
    as betting closes); the round as stored."""
    started = await service.start_round(chat_id, actor=ADMIN)
    assert started.round is not None
    round_id = started.round.id
    await service.bid(chat_id, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(round_id)
    for person, amount in bets:
        await service.bet(chat_id, person, amount)
    clock.advance(TEST_SETTINGS.bet_seconds)
    await service.advance(round_id)
    clock.advance(TEST_SETTINGS.pause_seconds)
    state = await service.round(round_id)
    assert state is not None and state.phase is Phase.SETTLED
    return state


@pytest.fixture
async def past(db: Database, clock: Clock, seeds: Seeds) -> AsyncIterator[Past]:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    for chat_id in (GROUP, ELSEWHERE):
        await service.set_open(chat_id, ADMIN, True)
        await service.change_setting(chat_id, ADMIN, "ruleset", "bullbull")
        for person in (DEALER, PLAYER, OTHER):
            await fund(service, person, 100_000, chat_id)
    settled = await bull_bull_round(service, clock, GROUP, [(PLAYER, 1_200), (OTHER, 500)])
    elsewhere = await bull_bull_round(service, clock, ELSEWHERE, [(PLAYER, 300)])
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    await service.bid(GROUP, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(started.round.id)
    await service.bet(GROUP, OTHER, 700)
    open_round = await service.round(started.round.id)
    assert open_round is not None and open_round.phase is Phase.BETTING
    shell = GameShell(service)
    client = await serve_miniapp(service, shell, clock)
    try:
        yield Past(client, service, shell, clock, settled, open_round, elsewhere, [])
    finally:
        await client.close()


async def test_a_settled_rounds_results_are_the_groups_text_picture_and_dealers_cards(
    past: Past,
) -> None:
    token = await past.sign_in()
    status, shown = await past.get("results", token, round=past.settled.id)
    assert status == 200, shown

    state = past.settled
    ended = await past.service.ending(state)
    assert isinstance(ended, RoundSettled)
    people = await past.service.names(state.participants)
    assert shown["round"] == state.id and shown["settled"] is True
    assert shown["text"] == plain_text(Views(state.settings).results(state, ended, people))
    # The picture is the one the group's results are drawn as, by the same code.
    prefix = "data:image/png;base64,"
    assert shown["picture"].startswith(prefix)
    picture = base64.b64decode(shown["picture"][len(prefix) :])
    assert picture.startswith(PNG_SIGNATURE)
    pictures = RoundPictures(state, ended, people)
    assert picture == render_results(pictures.results())
    # The dealer's cards, in the order they turn over, with the group's caption.
    dealer = state.dealer_hand()
    assert dealer is not None
    cards = cards_of(state.ruleset.show(dealer))
    reveal = pictures.reveal()
    assert reveal is not None
    assert shown["reveal"] == {
        "caption": reveal.caption,
        "bull": list(cards.bull),
        "rest": list(cards.rest),
    }
    assert len(cards.all) == 5


async def test_a_rounds_results_are_drawn_once_and_then_kept(
    past: Past, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = past.shell.game.miniapp_rounds
    drawn: list[int] = []
    draw = texts.results

    async def counted(state: Round, ended: Any) -> Any:
        drawn.append(state.id)
        return await draw(state, ended)

    monkeypatch.setattr(texts, "results", counted)
    token = await past.sign_in()
    first = await past.get("results", token, round=past.settled.id)
    other = await past.sign_in(OTHER)
    again = await past.get("results", other, round=past.settled.id)
    assert first == again and first[0] == 200
    assert drawn == [past.settled.id]


async def test_the_history_lists_the_players_own_rounds_only(past: Past) -> None:
    token = await past.sign_in()
    status, shown = await past.get("history", token)
    assert status == 200, shown
    results = await past.service.results(past.settled.id)
    mine = next(line for line in results if line.user_id == PLAYER.id)
    currency = TEST_SETTINGS.currency
    summary = next(s for s in await past.service.history(GROUP) if s.id == past.settled.id)
    assert summary.ended_at_ms is not None
    # The round played elsewhere and the round still open are not this group's history.
    assert shown == {
        "rounds": [
            {
                "round": past.settled.id,
                "ended_at_ms": summary.ended_at_ms,
                "game": "🃏 Bull Bull",
                "role": "player",
                "role_text": "",
                "stake": {"cents": 1_200, "text": "RM12.00"},
                "pool": {"cents": past.settled.pool, "text": f"RM{past.settled.pool // 100}.00"},
                "multiplier": mine.multiplier,
                "result": mine.result,
                "result_text": mine.result,  # the English catalogue's word is the code's
                "net": {"cents": mine.net, "text": format_signed(mine.net, currency)},
            }
        ],
        "more": None,
    }
    # The dealer's history says whose the round was.
    dealer = await past.sign_in(DEALER)
    status, theirs = await past.get("history", dealer)
    assert status == 200 and [line["role"] for line in theirs["rounds"]] == ["dealer"]
    assert theirs["rounds"][0]["role_text"] == "Dealer"


async def test_a_long_history_comes_a_page_at_a_time(past: Past) -> None:
    # The open round ends without bets from PLAYER, then more rounds are played.
    past.clock.advance(TEST_SETTINGS.bet_seconds)
    await past.service.advance(past.open_round.id)
    past.clock.advance(TEST_SETTINGS.pause_seconds)
    played = [past.settled.id]
    for _ in range(HISTORY_PAGE):
        state = await bull_bull_round(past.service, past.clock, GROUP, [(PLAYER, 100)])
        played.append(state.id)
    token = await past.sign_in()
    status, first = await past.get("history", token)
    assert status == 200
    assert [line["round"] for line in first["rounds"]] == played[::-1][:HISTORY_PAGE]
    assert first["more"] == played[1]
    status, rest = await past.get("history", token, before=first["more"])
    assert status == 200
    assert [line["round"] for line in rest["rounds"]] == [played[0]]
    assert rest["more"] is None


async def test_stats_rules_and_odds_are_the_commands_answers(past: Past) -> None:
    token = await past.sign_in()
    status, stats = await past.get("stats", token)
    assert status == 200
    person = (await past.service.names([PLAYER.id]))[PLAYER.id]
    assert stats == {"text": plain_text(await stats_text(past.shell.game.parts, GROUP, person))}
    mine = next(
        line for line in await past.service.results(past.settled.id) if line.user_id == PLAYER.id
    )
    assert "Rounds: 1" in stats["text"]
    assert format_signed(mine.net, TEST_SETTINGS.currency) in stats["text"]

    status, rules = await past.get("rules", token)
    assert status == 200
    views = Views(await past.service.settings(GROUP))
    assert rules["rules"] == plain_text(views.rules())
    assert rules["rules"].startswith("Bull Bull")
    assert rules["odds"].startswith("Odds of one bet at this table")
    assert "Player's bet:" in rules["odds"]


async def test_verify_of_a_past_round_says_it_checks_out(past: Past) -> None:
    token = await past.sign_in()
    status, checked = await past.get("verify", token, round=past.settled.id)
    assert status == 200, checked
    assert checked["round"] == past.settled.id
    assert checked["verified"] is True and checked["kind"] == "verified"
    assert "matches the published hash" in checked["text"]
    assert past.settled.seed.hex() in checked["text"]


@pytest.mark.parametrize("status", [ChatMember.LEFT, ChatMember.BANNED])
async def test_a_stranger_sees_nothing_of_the_groups_rounds(past: Past, status: str) -> None:
    past.shell.bot.statuses[(GROUP, STRANGER.id)] = status
    token = await past.sign_in(STRANGER)
    before = await past.state()
    refused = {
        "error": "You are not in this group, so its table is not shown to you.",
        "reason": "not_member",
    }
    for path in PATHS:
        assert await past.get(path, token, round=past.settled.id) == (403, refused), path
    assert await past.state() == before


async def test_another_groups_round_and_no_round_are_not_found(past: Past) -> None:
    token = await past.sign_in()
    before = await past.state()
    for path in ("results", "verify"):
        for absent in (past.elsewhere.id, past.open_round.id + 1_000):
            answer = await past.get(path, token, round=absent)
            expected = {"error": f"There is no round {absent} in this group."}
            assert answer == (404, expected), (path, absent)
    assert await past.state() == before


async def test_an_open_rounds_results_and_verify_are_refused_and_its_seed_never_sent(
    past: Past,
) -> None:
    token = await past.sign_in()
    before = await past.state()
    open_id = past.open_round.id
    refused = {"error": f"Round {open_id} is still being played: it is shown once it ends."}
    assert await past.get("results", token, round=open_id) == (400, refused)
    assert await past.get("verify", token, round=open_id) == (400, refused)
    # Every answer the app gives, none with the open round's seed.
    for path in PATHS:
        status, _ = await past.get(path, token, round=past.settled.id)
        assert status == 200, path
    await past.get("table", token)
    assert past.open_round.seed.hex() not in "".join(past.bodies)
    assert past.settled.seed.hex() in "".join(past.bodies)  # what the search would find
    assert await past.state() == before


@pytest.mark.parametrize("value", ["abc", "", "0", "-3", "٣", "1.5", " 1", "9" * 20, str(2**63)])
@pytest.mark.parametrize("path", ["results", "verify"])
async def test_a_round_that_is_no_rounds_number_is_a_clear_400(
    past: Past, path: str, value: str
) -> None:
    token = await past.sign_in()
    before = await past.state()
    expected = {"error": "round must be the number of the round shown, like 412."}
    assert await past.get(path, token, round=value) == (400, expected)
    assert await past.state() == before


async def test_a_missing_round_or_a_bad_before_is_a_clear_400(past: Past) -> None:
    token = await past.sign_in()
    missing = {"error": "round is missing: the number of a round, like 412."}
    assert await past.get("results", token) == (400, missing)
    assert await past.get("verify", token) == (400, missing)
    bad = {"error": "before must be the number of a round, like 412."}
    assert await past.get("history", token, before="x") == (400, bad)


@pytest.mark.parametrize("path", PATHS)
async def test_no_token_reads_nothing(past: Past, path: str) -> None:
    response = await past.client.get(f"/miniapp/api/{path}", params={"chat": str(GROUP)})
    assert response.status == 401
    assert (await response.json())["reason"] == "signed_out"

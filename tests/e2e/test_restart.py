"""SIGKILL of the bot mid-round: after a restart the round goes on and settles exactly once,
and its board and results reach the group even when Telegram refuses them at first."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from sqlalchemy import func, select

from bot.engine.round import Phase
from bot.fakegram import FaultMix
from bot.store.models import LedgerTransaction
from tests.e2e.harness import (
    CREDIT_CENTS,
    E2E,
    FAST_GAME,
    STEP_SECONDS,
    eventually,
    grab_all,
    grab_toasts,
    open_table,
    running_bot,
    start_round,
    user,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: Betting stays open long enough for the bot to come back and take more bets: a kill and
#: a new process's start took over 8 s on a loaded 2-core machine.
GAME = {**FAST_GAME, "bet_seconds": 14}
GROUP = -1_001_000_000_201
#: How long Telegram refuses every message after the restart: longer than the bot's
#: first retries.
REFUSED_SECONDS = 4.0
#: Bidding that outlasts the refusals and a slow restart; betting no longer than needed.
LONG_BIDDING = {"bid_seconds": "16", "bet_seconds": "3"}
#: A killed bot's claim on sending the board runs out soon, so that the restarted bot
#: tries (and is refused) while Telegram still refuses.
SHORT_LEASE_SECONDS = 1.0
ADMIN = user(201, "Ada", "ada_admin")
DEALER = user(202, "Bao", "bao")
BETTORS = [user(203, "Chen"), user(204, "Dewi"), user(205, "Eko"), user(206, "Fay")]


@pytest_asyncio.fixture(loop_scope="module")
async def e2e(tmp_path, request) -> AsyncIterator[E2E]:  # a fresh bot process: it gets killed
    """The bot, with the delivery lease of ``request.param`` if the test gives one."""
    lease = getattr(request, "param", None)
    async with running_bot(tmp_path, game=GAME, delivery_lease_seconds=lease) as session:
        yield session


async def ledger_kinds(e2e: E2E, round_id: int) -> dict[str, int]:
    async with e2e.database.transaction() as session:
        rows = await session.execute(
            select(LedgerTransaction.kind, func.count())
            .where(LedgerTransaction.round_id == round_id)
            .group_by(LedgerTransaction.kind)
        )
        return {kind: count for kind, count in rows.tuples()}


async def test_killed_bot_resumes_the_round_and_settles_it_once(e2e: E2E) -> None:
    people = [DEALER, *BETTORS]
    await open_table(e2e, GROUP, ADMIN, people)
    credited = CREDIT_CENTS * len(people)
    state = await start_round(e2e, GROUP, DEALER)
    round_id = state.id
    e2e.say(GROUP, DEALER, "/bid 100")
    state = await e2e.wait_phase(GROUP, Phase.BETTING, round_id)

    # Two bets are in; SIGKILL. (Their updates may not be confirmed to Telegram yet: the
    # new process may get them again and must not count them twice.)
    e2e.say(GROUP, BETTORS[0], "/bet 5")
    e2e.say(GROUP, BETTORS[1], "10")
    await e2e.wait_bets(GROUP, 2)
    await e2e.bot.kill()
    # A bet sent while the bot is down waits at Telegram.
    e2e.say(GROUP, BETTORS[2], "/bet 20")
    await e2e.bot.start()
    e2e.say(GROUP, BETTORS[3], "/bet 7.50")
    state = await e2e.wait_bets(GROUP, 4)
    assert state.phase is Phase.BETTING and state.id == round_id
    assert [(b.user_id, b.amount) for b in state.bets] == [
        (BETTORS[0]["id"], 500),
        (BETTORS[1]["id"], 1_000),
        (BETTORS[2]["id"], 2_000),
        (BETTORS[3]["id"], 750),
    ]

    # The restarted bot applies the betting deadline it never scheduled before the kill.
    state = await e2e.wait_phase(GROUP, Phase.GRABBING, round_id)
    toasts = await grab_all(e2e, GROUP, state, [DEALER, BETTORS[0]])
    # Killed again while grabbing, and down until the grab deadline has passed: the next
    # start grabs the rest for their owners and settles.
    await e2e.bot.kill()
    await eventually(lambda: time.time() * 1000 > state.deadline_ms + 200, what="the deadline")
    await e2e.bot.start()
    ended = await e2e.wait_ended(round_id)
    texts = await e2e.texts(GROUP)
    assert toasts == grab_toasts(texts, ended, [DEALER, BETTORS[0]])

    kinds = await ledger_kinds(e2e, round_id)
    assert kinds.get("settle", 0) + kinds.get("void", 0) == 1, kinds
    assert kinds["bid"] == 1 and kinds["bet"] == 4, kinds
    assert [(g.user_id, g.auto) for g in ended.grabs] == [
        (DEALER["id"], False),
        (BETTORS[0]["id"], False),
        (BETTORS[1]["id"], True),
        (BETTORS[2]["id"], True),
        (BETTORS[3]["id"], True),
    ]
    # One closing message for the round (results, or a re-deal), found by the line that
    # reveals the seed. The results go out after the round ended in the database.
    seed = texts.message("results.seed", seed=ended.seed.hex(), round_id=round_id)
    await eventually(
        lambda: any(seed in e["plain_text"] for e in e2e.sends(GROUP)),
        what="the results message",
    )
    closing = [e for e in e2e.sends(GROUP) if seed in e["plain_text"]]
    assert len(closing) == 1, [e["plain_text"] for e in e2e.sends(GROUP)]

    # No chip lost: players' chips and the house add up to what was credited.
    total = 0
    for person in people:
        balance = await e2e.service.balance(GROUP, person["id"])
        assert balance.held == 0, person
        total += balance.total
    house = await e2e.service.house_balance(GROUP)
    assert total + house == credited
    if ended.phase is Phase.SETTLED:
        results = {line.user_id: line.net for line in await e2e.service.results(round_id)}
        for person in people:
            balance = await e2e.service.balance(GROUP, person["id"])
            assert balance.available == CREDIT_CENTS + results[person["id"]]


async def test_command_in_flight_when_killed_is_not_lost(e2e: E2E) -> None:
    group = -1_001_000_000_202
    player = BETTORS[0]
    hellos = await open_table(e2e, group, ADMIN, [player])
    # Hold SQLite's write lock so that the bot cannot finish handling the next command.
    path = e2e.database_url.split(":///", 1)[1]
    blocker = sqlite3.connect(path, isolation_level=None, timeout=10)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        posted_at = time.time()
        credit = e2e.say(group, ADMIN, "/credit 5", reply_to=hellos[player["id"]])

        def fetched() -> bool:
            # The long poll that returned the credit has completed: the bot holds the update.
            return any(
                call["method"] == "getUpdates" and call["time"] >= posted_at
                for call in e2e.fake.calls
            )

        await eventually(fetched, what="the credit to be fetched")
        # A poller that confirms before handling asks again at once (that request's offset
        # confirms the credit to Telegram); give it the chance before the kill.
        with contextlib.suppress(AssertionError):
            await eventually(lambda: e2e.fake.is_polling, what="a next poll", timeout=1.0)
        await e2e.bot.kill()
    finally:
        blocker.rollback()
        blocker.close()
    await e2e.bot.start()
    await e2e.barrier(group, ADMIN)
    balance = await e2e.service.balance(group, player["id"])
    assert balance.available == CREDIT_CENTS + 500, "the credit was lost"
    assert e2e.reply_of(group, credit["message"]["message_id"]) is not None


@pytest.mark.parametrize("e2e", [SHORT_LEASE_SECONDS], indirect=True)
async def test_board_and_results_reach_the_group_when_telegram_refuses_them_after_a_restart(
    e2e: E2E,
) -> None:
    """Telegram refuses the round's board (a 502 for every send, edit and toast; start-up
    calls and the long poll pass), the bot is killed before it got through, and Telegram
    goes on refusing for ``REFUSED_SECONDS`` after the restart: the board still reaches
    the group (bidding is long enough to wait for it), the round plays, and its results
    reach the group once."""
    group = -1_001_000_000_203
    await open_table(e2e, group, ADMIN, [DEALER, BETTORS[0]], settings=LONG_BIDDING)
    e2e.fake.set_faults(FaultMix(bad_gateway=1))
    e2e.say(group, DEALER, "/newround")
    state = await e2e.wait_phase(group, Phase.BIDDING)
    await eventually(
        lambda: e2e.fake.faults_injected["bad_gateway"].get("sendMessage"),
        what="the board refused",
    )
    await e2e.bot.kill()
    before = e2e.fake.faults_injected["bad_gateway"].get("sendMessage", 0)
    restarted = time.time()
    await e2e.bot.start()
    await asyncio.sleep(REFUSED_SECONDS)
    after = e2e.fake.faults_injected["bad_gateway"].get("sendMessage", 0)
    sent_meanwhile = [entry for entry in e2e.sends(group) if entry["time"] >= restarted]
    e2e.fake.set_faults(None)
    print(f"sendMessage refused: {before} before the kill, {after - before} after the restart")
    assert after > before
    assert sent_meanwhile == []
    assert e2e.button_message(group, f"{state.id}:bid:{state.settings.min_bid}") is None

    await e2e.wait_button(group, f"{state.id}:bid:{state.settings.min_bid}")
    e2e.say(group, DEALER, "/bid 100")
    # Bidding opened when its board reached the group (docs/rules.md §1): a whole window.
    window = int(LONG_BIDDING["bid_seconds"])
    state = await e2e.wait_phase(group, Phase.BETTING, state.id, timeout=window + STEP_SECONDS)
    e2e.say(group, BETTORS[0], "/bet 5")
    await e2e.wait_bets(group, 1)
    state = await e2e.wait_phase(group, Phase.GRABBING, state.id)
    await grab_all(e2e, group, state, [DEALER, BETTORS[0]])
    ended = await e2e.wait_ended(state.id)
    texts = await e2e.texts(group)
    seed = texts.message("results.seed", seed=ended.seed.hex(), round_id=state.id)
    await eventually(
        lambda: any(seed in entry["plain_text"] for entry in e2e.sends(group)),
        what="the results message",
    )
    closing = [entry for entry in e2e.sends(group) if seed in entry["plain_text"]]
    assert len(closing) == 1, [entry["plain_text"] for entry in e2e.sends(group)]

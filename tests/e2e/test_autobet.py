"""The bet that stays in the box (seed 001), through the real bot process: ``/autobet``
with the same bad-input replies as ``/bet``, a standing bet placed round after round as
the house opens betting, the results' "same again" (and its stale button on older
results), a SIGKILL and restart that the standing bet survives, and the notice naming
the player when the table changes game."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from sqlalchemy import func, select

from bot.engine.round import Phase, Round
from bot.rules.ruleset import get_ruleset
from bot.service.game import Person
from bot.store.models import BetRow, LedgerTransaction, RoundRow
from tests.e2e.harness import (
    CREDIT_CENTS,
    E2E,
    FAST_GAME,
    change_setting,
    eventually,
    running_bot,
    shown,
    user,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: The house deals, so rounds follow each other by themselves; windows long enough for a
#: press between two rounds on a loaded machine.
GAME = {**FAST_GAME, "bet_seconds": 3, "pause_seconds": 2}
GROUP = -1_001_000_000_901
ADMIN = user(901, "Ada", "ada_admin")
ALICE = user(902, "Alice", "alice")
BOB = user(903, "Bob <b>", "bob")


@pytest_asyncio.fixture(loop_scope="module")
async def e2e(tmp_path) -> AsyncIterator[E2E]:  # a fresh bot process: it gets killed
    async with running_bot(tmp_path, game=GAME) as session:
        yield session


async def ended_round_with(e2e: E2E, after: int, user_id: int) -> Round:
    """The first round after round ``after`` that settled with a bet of ``user_id``."""

    async def found() -> Round | None:
        async with e2e.database.transaction() as session:
            ids = await session.scalars(
                select(RoundRow.id)
                .where(RoundRow.chat_id == GROUP, RoundRow.id > after, RoundRow.phase == "settled")
                .order_by(RoundRow.id)
            )
            round_ids = list(ids)
        for round_id in round_ids:
            state = await e2e.service.round(round_id)
            if state is not None and state.bet_of(user_id) is not None:
                return state
        return None

    return await eventually(found, what=f"a settled round after {after} with {user_id}'s bet")


async def test_a_standing_bet_plays_round_after_round_survives_a_restart_and_stops(
    e2e: E2E,
) -> None:
    # The table is set up through the service (tests/e2e/test_full_round.py does it by
    # command): the group's twenty messages a minute are the play's, which spends them.
    admin = Person(ADMIN["id"], ADMIN["first_name"])
    e2e.fake.set_chat_member(GROUP, ADMIN["id"], "administrator")
    await e2e.service.set_open(GROUP, admin, True)
    for key, value in {"ruleset": "bullbull", "dealer": "house"}.items():
        await e2e.service.change_setting(GROUP, admin, key, value)
    for player in (ALICE, BOB):
        await e2e.service.credit(GROUP, admin, player["id"], CREDIT_CENTS)
    await e2e.service.fund(GROUP, admin, 30_000)
    # The amount is read as /bet reads it: the same replies for what is not an amount.
    for typed in ("five", "-5", "٣"):
        assert await e2e.ask(GROUP, ALICE, f"/autobet {typed}") == await e2e.ask(
            GROUP, ALICE, f"/bet {typed}"
        )
    await e2e.expect_reply(GROUP, ALICE, "/autobet", "answer.autobet_none")
    await e2e.expect_reply(GROUP, ALICE, "/autobet 5", "answer.autobet_on", amount=500)
    await e2e.expect_reply(GROUP, ALICE, "/autobet", "answer.autobet_is", amount=500)

    # The house opens betting with Alice's bet in it; Bob bets himself.
    e2e.say(GROUP, ADMIN, "/newround")
    state = await e2e.wait_bets(GROUP, 1)
    first = state.id
    assert [(bet.user_id, bet.amount) for bet in state.bets] == [(ALICE["id"], 500)]
    e2e.say(GROUP, BOB, "/bet 10")
    await ended_round_with(e2e, first - 1, BOB["id"])

    # "Same again" on round 1's results: Bob's 10 in the next round, once.
    again = f"{first}:again:0"
    results = await e2e.wait_button(GROUP, again)
    press = e2e.press(GROUP, results, BOB, again)
    toast = str((await e2e.wait_answer(press))["text"])
    assert toast in (
        await e2e.message(GROUP, "answer.same_again_next", amount=1_000),
        await e2e.message(GROUP, "answer.bet_placed", amount=1_000),
    )
    second = await ended_round_with(e2e, first, BOB["id"])
    assert {bet.user_id: bet.amount for bet in second.bets} == {ALICE["id"]: 500, BOB["id"]: 1_000}
    # Round 1's results are not the latest any more: the button is refused, nothing changes.
    stale = e2e.press(GROUP, results, BOB, again)
    await e2e.expect_toast(GROUP, stale, "error.stale_button")

    # Killed and started again: the standing bet is in the database and goes on.
    await e2e.bot.kill()
    await e2e.bot.start()
    third = await ended_round_with(e2e, second.id, ALICE["id"])
    assert third.bet_of(BOB["id"]) is None  # "same again" was for one round
    # Each bet was placed once, as its own ledger transaction.
    bets = await e2e.scalar(
        select(func.count()).where(
            LedgerTransaction.round_id == third.id, LedgerTransaction.kind == "bet"
        )
    )
    assert (
        bets
        == len(third.bets)
        == await e2e.scalar(select(func.count()).where(BetRow.round_id == third.id))
    )

    # The table changes game: Alice's standing bet stops, and the group is told. (With the
    # house dealing, Niu-Niu Poker's losses at 1x would drain the bank: confirmed.)
    await change_setting(e2e, GROUP, ADMIN, "ruleset", "poker29 confirm")
    texts = await e2e.texts(GROUP)
    game = texts.html(f"game.{get_ruleset('poker29').name}")
    notice = texts.message("autobet.stopped_game", name=shown(ALICE), amount=500, game=game)
    await eventually(
        lambda: any(notice in entry["plain_text"] for entry in e2e.sends(GROUP)),
        what="the notice that Alice's autobet stopped",
    )
    await e2e.expect_reply(GROUP, ALICE, "/autobet", "answer.autobet_none")
    state = await e2e.current_round(GROUP)
    assert state is None or state.phase is not Phase.BETTING or state.bet_of(ALICE["id"]) is None

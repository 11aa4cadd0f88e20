"""Telegram may deliver an update twice, and people press buttons of old boards."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from bot.engine.round import Phase
from bot.store.models import AuditEntry, BetRow, LedgerTransaction
from tests.e2e.harness import (
    CREDIT_CENTS,
    E2E,
    grab_all,
    grab_toasts,
    open_table,
    shown,
    start_round,
    user,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

BET_GROUP = -1_001_000_000_301
CREDIT_GROUP = -1_001_000_000_302
ADMIN = user(301, "Ada", "ada_admin")
DEALER = user(302, "Bao", "bao")
PLAYER = user(303, "Chen", "chen")


async def ledger_count(e2e: E2E, chat_id: int, kind: str, round_id: int | None = None) -> int:
    query = (
        select(func.count())
        .select_from(LedgerTransaction)
        .where(LedgerTransaction.chat_id == chat_id, LedgerTransaction.kind == kind)
    )
    if round_id is not None:
        query = query.where(LedgerTransaction.round_id == round_id)
    return int(await e2e.scalar(query))


async def test_redelivered_bet_and_stale_buttons_have_no_effect(e2e: E2E) -> None:
    # Bidding long enough for the old buttons to be pressed while the next round bids.
    await open_table(e2e, BET_GROUP, ADMIN, [DEALER, PLAYER], settings={"bid_seconds": "4"})
    texts = await e2e.texts(BET_GROUP)
    state = await start_round(e2e, BET_GROUP, DEALER)
    e2e.say(BET_GROUP, DEALER, "/bid 100")
    state = await e2e.wait_phase(BET_GROUP, Phase.BETTING, state.id)

    # The same /bet update twice: one bet, one hold of 18 x 10.00, one ledger transaction.
    bet = e2e.say(BET_GROUP, PLAYER, "/bet 10")
    await e2e.wait_bets(BET_GROUP, 1)
    again = e2e.fake.redeliver(bet["update_id"])
    assert again == bet
    await e2e.barrier(BET_GROUP, PLAYER)
    rows = await e2e.scalar(
        select(func.count()).select_from(BetRow).where(BetRow.round_id == state.id)
    )
    assert rows == 1
    current = await e2e.current_round(BET_GROUP)
    assert current is not None
    assert [(b.user_id, b.amount, b.hold) for b in current.bets] == [(PLAYER["id"], 1_000, 18_000)]
    balance = await e2e.service.balance(BET_GROUP, PLAYER["id"])
    assert (balance.available, balance.held) == (CREDIT_CENTS - 18_000, 18_000)
    assert await ledger_count(e2e, BET_GROUP, "bet", state.id) == 1

    # The bet is confirmed once; the duplicate is answered "Already done." (it comes again
    # only if the first handling was not confirmed, whose answer may be lost), not "your
    # bet is already 10.00".
    def replies() -> list[str]:
        return [
            entry["plain_text"]
            for entry in e2e.sends(BET_GROUP)
            if entry["reply_to_message_id"] == bet["message"]["message_id"]
        ]

    await e2e.fake.wait_for(lambda: len(replies()) >= 2)
    assert replies() == [
        texts.message("answer.bet_placed", amount=1_000),
        texts.message("answer.duplicate"),
    ]

    state = await e2e.wait_phase(BET_GROUP, Phase.GRABBING, state.id)
    board = await e2e.wait_button(BET_GROUP, f"{state.id}:grab:0")
    toasts = await grab_all(e2e, BET_GROUP, state, [PLAYER, DEALER])
    ended = await e2e.wait_ended(state.id)
    assert ended.phase in (Phase.SETTLED, Phase.VOID)
    assert toasts == grab_toasts(texts, ended, [PLAYER, DEALER])

    # Buttons of the finished round: a bid while the next round is bidding, a bet, a cancel
    # and a grab. Each is refused with a toast and changes nothing.
    following = await e2e.wait_phase(BET_GROUP, Phase.BIDDING)
    assert following.id != state.id
    people = [ADMIN["id"], DEALER["id"], PLAYER["id"]]
    before = await e2e.snapshot(BET_GROUP, people)
    presses = [
        e2e.press(BET_GROUP, board, DEALER, f"{state.id}:bid:{following.settings.min_bid}"),
        e2e.press(BET_GROUP, board, PLAYER, f"{state.id}:bet:500"),
        e2e.press(BET_GROUP, board, PLAYER, f"{state.id}:cancel:0"),
        e2e.press(BET_GROUP, board, DEALER, f"{state.id}:grab:0"),
    ]
    for press in presses:
        await e2e.expect_toast(BET_GROUP, press, "error.stale_button")
    assert await e2e.snapshot(BET_GROUP, people) == before

    # The next round ends without bids; old buttons are still refused with no round open.
    await e2e.wait_ended(following.id)
    before = await e2e.snapshot(BET_GROUP, people)
    press = e2e.press(BET_GROUP, board, PLAYER, f"{state.id}:bet:1000")
    await e2e.expect_toast(BET_GROUP, press, "error.stale_button")
    press = e2e.press(BET_GROUP, board, PLAYER, f"{following.id}:grab:0")
    await e2e.expect_toast(BET_GROUP, press, "error.stale_button")
    assert await e2e.snapshot(BET_GROUP, people) == before


async def test_redelivered_grab_press_grabs_once(e2e: E2E) -> None:
    group = -1_001_000_000_303
    await open_table(e2e, group, ADMIN, [DEALER, PLAYER])
    state = await start_round(e2e, group, DEALER)
    e2e.say(group, DEALER, "/bid 100")
    await e2e.wait_phase(group, Phase.BETTING, state.id)
    e2e.say(group, PLAYER, "/bet 5")
    state = await e2e.wait_phase(group, Phase.GRABBING, state.id)
    data = f"{state.id}:grab:0"
    board = await e2e.wait_button(group, data)
    press = e2e.press(group, board, PLAYER, data)
    toast = str((await e2e.wait_answer(press))["text"])
    e2e.fake.redeliver(press["update_id"])
    await e2e.barrier(group, DEALER)
    current = await e2e.service.round(state.id)
    assert current is not None and current.phase is Phase.GRABBING
    assert [(g.user_id, g.auto) for g in current.grabs] == [(PLAYER["id"], False)]
    assert [toast] == grab_toasts(await e2e.texts(group), current, [PLAYER])
    ended = await e2e.wait_ended(state.id)
    assert [g.user_id for g in ended.grabs] == [PLAYER["id"], DEALER["id"]]


async def test_redelivered_credit_credits_once(e2e: E2E) -> None:
    hellos = await open_table(e2e, CREDIT_GROUP, ADMIN, [PLAYER])
    credit = e2e.say(CREDIT_GROUP, ADMIN, "/credit 5", reply_to=hellos[PLAYER["id"]])
    await e2e.wait_reply(CREDIT_GROUP, credit)
    e2e.fake.redeliver(credit["update_id"])
    await e2e.barrier(CREDIT_GROUP, ADMIN)
    balance = await e2e.service.balance(CREDIT_GROUP, PLAYER["id"])
    assert balance.available == CREDIT_CENTS + 500
    assert await ledger_count(e2e, CREDIT_GROUP, "credit") == 2
    assert await audit_count(e2e, CREDIT_GROUP, "credit") == 2


async def audit_count(e2e: E2E, chat_id: int, action: str) -> int:
    return int(
        await e2e.scalar(
            select(func.count())
            .select_from(AuditEntry)
            .where(AuditEntry.chat_id == chat_id, AuditEntry.action == action)
        )
    )


async def test_redelivered_credit_is_not_announced_twice(e2e: E2E) -> None:
    group = -1_001_000_000_304
    hellos = await open_table(e2e, group, ADMIN, [PLAYER])
    credit = e2e.say(group, ADMIN, "/credit 5", reply_to=hellos[PLAYER["id"]])
    await e2e.wait_reply(group, credit)
    e2e.fake.redeliver(credit["update_id"])
    await e2e.barrier(group, ADMIN)
    assert (await e2e.service.balance(group, PLAYER["id"])).available == CREDIT_CENTS + 500

    def announced() -> list[str]:
        return [
            e["plain_text"]
            for e in e2e.sends(group)
            if e["reply_to_message_id"] == credit["message"]["message_id"]
        ]

    # Credited once, and said once; the repeat is answered "Already done."
    await e2e.fake.wait_for(lambda: len(announced()) >= 2)
    assert announced() == [
        await e2e.message(
            group, "credit.done", amount=500, name=shown(PLAYER), available=CREDIT_CENTS + 500
        ),
        await e2e.message(group, "answer.duplicate"),
    ]


async def test_redelivered_set_is_applied_once(e2e: E2E) -> None:
    group = -1_001_000_000_305
    await open_table(e2e, group, ADMIN, [])
    change = e2e.say(group, ADMIN, "/set min_bet 2")
    assert (await e2e.wait_reply(group, change))["plain_text"] == await e2e.message(
        group, "set.done", name="min_bet", old="1.00", new="2.00"
    )
    e2e.fake.redeliver(change["update_id"])
    await e2e.barrier(group, ADMIN)
    assert (await e2e.service.settings(group)).min_bet == 200
    assert await audit_count(e2e, group, "set") == 1

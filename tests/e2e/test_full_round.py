"""A whole round through the real bot process: open, credit, bid, bet, grab, settle, verify."""

from __future__ import annotations

import html

import pytest

from bot.engine.round import Phase, Round, VoidReason
from bot.engine.settlement import Stake, settle
from bot.money import format_amount, format_signed
from tests.e2e.harness import (
    CREDIT_CENTS,
    E2E,
    eventually,
    grab_all,
    open_table,
    start_round,
    user,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

GROUP = -1_001_000_000_001
ADMIN = user(101, "Ada", "ada_admin")
DEALER = user(102, "Bao", "bao")
BETTORS = [
    user(103, "Chen", "chen"),
    user(104, "Dewi & Sons"),
    user(105, "Eko", "eko"),
    user(106, "Fay <3", "fay"),
]
#: Four bets, as commands and as bare numbers: (text, stake in cents).
BETS = [("/bet 5", 500), ("10", 1_000), ("/bet 20", 2_000), ("7.50", 750)]


async def play(e2e: E2E) -> Round:
    """One round: the dealer bids, four bettors bet, everyone grabs. Returns it ended."""
    state = await start_round(e2e, GROUP, DEALER)
    e2e.say(GROUP, DEALER, "/bid 100")
    state = await e2e.wait_phase(GROUP, Phase.BETTING, state.id)
    assert state.dealer_id == DEALER["id"] and state.pool == 10_000
    for bettor, (text, _) in zip(BETTORS, BETS, strict=True):
        e2e.say(GROUP, bettor, text)
    state = await e2e.wait_bets(GROUP, len(BETTORS))
    assert [(bet.user_id, bet.amount, bet.hold) for bet in state.bets] == [
        (bettor["id"], stake, stake * 18) for bettor, (_, stake) in zip(BETTORS, BETS, strict=True)
    ]
    state = await e2e.wait_phase(GROUP, Phase.GRABBING, state.id)
    toasts = await grab_all(e2e, GROUP, state, [*BETTORS, DEALER])
    assert all(toast.startswith("You grabbed RM") for toast in toasts), toasts
    return await e2e.wait_ended(state.id)


async def test_full_round_settles_as_the_settlement_rules_say(e2e: E2E) -> None:
    await open_table(e2e, GROUP, ADMIN, [DEALER, *BETTORS])
    ended = await play(e2e)
    for _ in range(3):  # the dealer grabbed 0.01: a re-deal; play the new round
        if ended.void_reason is not VoidReason.REDEAL:
            break
        ended = await play(e2e)
    assert ended.phase is Phase.SETTLED, ended
    assert [grab.auto for grab in ended.grabs] == [False] * 5

    # What the bot stored for each participant ...
    results = {line.user_id: line for line in await e2e.service.results(ended.id)}
    assert set(results) == {DEALER["id"], *(b["id"] for b in BETTORS)}
    assert results[DEALER["id"]].role == "dealer"
    envelopes = {grab.user_id: grab.amount for grab in ended.grabs}
    assert {uid: line.envelope for uid, line in results.items()} == envelopes
    assert sum(envelopes.values()) == len(envelopes) * ended.settings.envelope_mean_share

    # ... is what the settlement rules compute from the stored envelopes, stakes and pool
    # with the group's settings ...
    settings = await e2e.service.settings(GROUP)
    assert settings == ended.settings
    expected = settle(
        dealer_outcome=results[DEALER["id"]].envelope,
        pool=ended.pool,
        stakes=[Stake(b["id"], results[b["id"]].stake, results[b["id"]].envelope) for b in BETTORS],
        rake_bps=settings.rake_bps,
        rebate_bps=settings.rebate_bps,
        dealer_fees=settings.dealer_fees,
        ruleset=ended.ruleset,
    )
    assert [results[b["id"]].stake for b in BETTORS] == [stake for _, stake in BETS]
    for bettor in BETTORS:
        outcome, line = expected.outcomes[bettor["id"]], results[bettor["id"]]
        assert (line.result, line.gross, line.rake, line.rebate, line.net) == (
            outcome.result.value,
            outcome.gross,
            outcome.rake,
            outcome.rebate,
            outcome.net,
        ), bettor
    assert results[DEALER["id"]].net == expected.dealer_net

    # ... and every balance is what was credited plus that net, nothing held.
    for person in [DEALER, *BETTORS]:
        balance = await e2e.service.balance(GROUP, person["id"])
        assert balance.held == 0, person
        assert balance.available == CREDIT_CENTS + results[person["id"]].net, person
    assert await e2e.service.house_balance(GROUP) == expected.platform_net
    assert sum(line.net for line in results.values()) + expected.platform_net == 0

    # The results message names everyone (escaped), with their net, and reveals the seed.
    await eventually(
        lambda: any(f"Round #{ended.id} results" in e["plain_text"] for e in e2e.sends(GROUP)),
        what="the results message",
    )
    sent = [e for e in e2e.sends(GROUP) if f"Round #{ended.id} results" in e["plain_text"]]
    assert len(sent) == 1, [e["plain_text"] for e in e2e.sends(GROUP)]
    message = sent[0]
    lines = message["plain_text"].splitlines()
    for person in [DEALER, *BETTORS]:
        name = person["first_name"]
        assert html.escape(name) in message["text"]
        net = format_signed(results[person["id"]].net, "RM")
        prefix = f"Dealer {name}:" if person is DEALER else f"{name}:"
        assert any(line.startswith(prefix) and line.endswith(net) for line in lines), (
            name,
            lines,
        )
    assert ended.seed.hex() in message["plain_text"]
    assert f"<code>{ended.seed.hex()}</code>" in message["text"]

    # /verify recomputes the split from the revealed seed.
    verified = await e2e.ask(GROUP, BETTORS[0], f"/verify {ended.id}")
    assert verified.startswith(f"Round #{ended.id}: SHA-256 of the seed matches"), verified
    assert "✅" in verified
    assert "Split (5 shares, total" in verified  # the plural form for five participants
    assert ended.seed.hex() in verified
    for person in [DEALER, *BETTORS]:
        assert person["first_name"] in verified

    # The board of the round ends showing the result, without buttons.
    board_id = await e2e.service.board_message(ended.id)
    assert board_id is not None
    board = await e2e.fake.wait_for(
        lambda: (m := e2e.fake.messages(GROUP)[board_id])["reply_markup"] is None and m,
        timeout=10,
    )
    assert "Settled" in board["plain_text"]


async def test_private_chats_answer_in_the_language_of_the_users_app(e2e: E2E) -> None:
    group = -1_001_000_000_002
    gao = {**user(107, "Gao", "gao"), "language_code": "zh-hans"}
    hana = {**user(108, "Hana", "hana"), "language_code": "de"}
    await open_table(e2e, group, ADMIN, [gao])

    async def in_private(who: dict, text: str) -> str:
        update = e2e.fake.post_message(who["id"], who, text, chat_type="private")
        return str((await e2e.wait_reply(who["id"], update))["plain_text"])

    assert (await in_private(gao, "/start")).startswith("你好！我在群里主持 68 牛牛红包游戏。")
    credit = format_amount(CREDIT_CENTS, "RM")
    assert await in_private(gao, "/balance") == (
        f"你的筹码：\n• E2E {group}：可用 {credit}，冻结 RM0.00"
    )
    assert (await in_private(hana, "/start")).startswith("Hi! I host 68 NiuNiu")
    assert await in_private(hana, "/balance") == "You have no chips in any group yet."

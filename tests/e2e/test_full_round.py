"""A whole round through the real bot process: open, credit, bid, bet, grab, settle, verify.

The round is played in a group of each language (English, Simplified and Traditional
Chinese, Vietnamese, Malay): every message it checks comes from that group's catalogue,
and the results read in that language."""

from __future__ import annotations

import html
import json

import pytest

from bot.engine.round import Phase, Round, VoidReason
from bot.engine.settlement import Stake, settle
from bot.money import format_amount, format_signed
from tests.e2e.harness import (
    CREDIT_CENTS,
    E2E,
    LANGUAGES,
    STEP_SECONDS,
    Texts,
    eventually,
    grab_all,
    grab_toasts,
    group_in,
    open_table,
    plain_text,
    results_title,
    shown,
    start_round,
    user,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: The window over which Telegram counts a group's messages.
GROUP_MINUTE_SECONDS = 60.0

GROUP = -1_001_000_000_001
ADMIN = user(101, "Ada", "ada_admin")
DEALER = user(102, "Bao", "bao")
BETTORS = [
    user(103, "Chen", "chen"),
    user(104, "Dewi & Sons"),
    user(105, "Eko", "eko"),
    user(106, "Fay <3", "fay"),
]
#: Words the results of a round begin with in each language, as its players read them
#: (written here, not taken from the catalogues: a catalogue left in English fails).
RESULTS_WORDS = {
    "en": "Round #",
    "zh": "局结果",
    "zh-Hant": "局結果",
    "vi": "Kết quả ván #",
    "ms": "Keputusan pusingan #",
}
#: A settled round's board, in each language.
SETTLED_WORDS = {
    "en": "Settled",
    "zh": "已结算",
    "zh-Hant": "已結算",
    "vi": "Đã kết toán",
    "ms": "Selesai",
}
#: Four bets, as commands and as bare numbers: (text, stake in cents).
BETS = [("/bet 5", 500), ("10", 1_000), ("/bet 20", 2_000), ("7.50", 750)]


async def play(e2e: E2E, group: int, texts: Texts) -> Round:
    """One round: the dealer bids, four bettors bet, everyone grabs. Returns it ended."""
    state = await start_round(e2e, group, DEALER)
    e2e.say(group, DEALER, "/bid 100")
    state = await e2e.wait_phase(group, Phase.BETTING, state.id)
    assert state.dealer_id == DEALER["id"] and state.pool == 10_000
    for bettor, (text, _) in zip(BETTORS, BETS, strict=True):
        e2e.say(group, bettor, text)
    state = await e2e.wait_bets(group, len(BETTORS))
    assert [(bet.user_id, bet.amount, bet.hold) for bet in state.bets] == [
        (bettor["id"], stake, stake * 18) for bettor, (_, stake) in zip(BETTORS, BETS, strict=True)
    ]
    state = await e2e.wait_phase(group, Phase.GRABBING, state.id)
    grabbers = [*BETTORS, DEALER]
    toasts = await grab_all(e2e, group, state, grabbers)
    ended = await e2e.wait_ended(state.id)
    assert toasts == grab_toasts(texts, ended, grabbers)
    return ended


@pytest.mark.parametrize("language", LANGUAGES)
async def test_full_round_settles_as_the_settlement_rules_say(e2e: E2E, language: str) -> None:
    group = group_in(language, GROUP)
    await open_table(e2e, group, ADMIN, [DEALER, *BETTORS], language=language)
    texts = await e2e.texts(group)
    ended = await play(e2e, group, texts)
    replays = 0
    for _ in range(3):  # the dealer grabbed 0.01: a re-deal; play the new round
        if ended.void_reason is not VoidReason.REDEAL:
            break
        ended = await play(e2e, group, texts)
        replays += 1
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
    settings = await e2e.service.settings(group)
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
        balance = await e2e.service.balance(group, person["id"])
        assert balance.held == 0, person
        assert balance.available == CREDIT_CENTS + results[person["id"]].net, person
    assert await e2e.service.house_balance(group) == expected.platform_net
    assert sum(line.net for line in results.values()) + expected.platform_net == 0

    # The results message names everyone (escaped), with their envelope, result and net,
    # gives the totals and reveals the seed.
    title = results_title(texts, ended)
    await eventually(
        lambda: any(e["plain_text"].startswith(title) for e in e2e.sends(group)),
        what="the results message",
    )
    sent = [e for e in e2e.sends(group) if e["plain_text"].splitlines()[0] == title]
    assert len(sent) == 1, [e["plain_text"] for e in e2e.sends(group)]
    assert RESULTS_WORDS[language] in title, title
    message = sent[0]
    lines = message["plain_text"].splitlines()

    def money(cents: int) -> str:
        return format_amount(cents, texts.currency)

    for person in [DEALER, *BETTORS]:
        name, line = shown(person), results[person["id"]]
        assert name in message["text"]
        shown_as = {"name": name, "envelope": money(line.envelope)}
        shown_as["net"] = format_signed(line.net, texts.currency)
        if person is DEALER:
            key = "results.dealer"
        else:
            key = "results.player"
            shown_as["result"] = texts.html(f"result.{line.result}")
        found = [row for row in lines if texts.match(row, key, **shown_as)]
        assert len(found) == 1, (key, shown_as, lines)
    fees = settings.dealer_fees
    totals = texts.message(
        "results.totals", rake=expected.rake_total, rebate=expected.rebate_total, fees=fees
    )
    assert totals in lines, (totals, lines)
    seed = ended.seed.hex()
    assert lines[-1] == texts.message("results.seed", seed=seed, round_id=ended.id), lines
    assert texts.html("results.seed", seed=seed, round_id=ended.id) in message["text"]

    # /verify recomputes the split from the revealed seed: the plural form for five shares.
    # A round played again after a re-deal spent the rest of the group's ~20 messages a
    # minute (its board, the stake confirmations, the results): the answer waits for a slot.
    patience = STEP_SECONDS + (GROUP_MINUTE_SECONDS if replays else 0)
    verified = await e2e.ask(group, BETTORS[0], f"/verify {ended.id}", timeout=patience)
    shares = list(ended.shares)
    assert len(shares) == 5 and sorted(shares) == sorted(envelopes.values())
    total = sum(shares)
    checked = texts.match(
        verified,
        "verify.ok",
        len(shares),
        round_id=ended.id,
        seed=seed,
        count=len(shares),
        total=total,
        total_plain=format_amount(total),
        shares=" ".join(money(share) for share in shares),
    )
    assert checked is not None, verified
    grabbed = checked["grabbed"].splitlines()
    for person in [DEALER, *BETTORS]:
        share = money(envelopes[person["id"]])
        rows = [row for row in grabbed if person["first_name"] in row and share in row]
        assert len(rows) == 1, (person["first_name"], share, grabbed)

    # The board of the round ends showing the result, without buttons.
    board_id = await e2e.service.board_message(ended.id)
    assert board_id is not None
    board = await e2e.fake.wait_for(
        lambda: (m := e2e.fake.messages(group)[board_id])["reply_markup"] is None and m,
        timeout=10,
    )
    assert texts.message("board.phase.settled") in board["plain_text"].splitlines(), board
    assert SETTLED_WORDS[language] in board["plain_text"].splitlines(), board


async def test_private_chats_answer_in_the_language_of_the_users_app(e2e: E2E) -> None:
    group = -1_001_000_000_002
    gao = {**user(107, "Gao", "gao"), "language_code": "zh-hans"}
    hana = {**user(108, "Hana", "hana"), "language_code": "de"}
    lin = {**user(109, "Lin", "lin"), "language_code": "zh-TW"}
    linh = {**user(110, "Linh", "linh"), "language_code": "vi"}
    aminah = {**user(111, "Aminah", "aminah"), "language_code": "ms"}
    await open_table(e2e, group, ADMIN, [gao])
    currency = (await e2e.texts(group)).currency
    chinese, english = Texts("zh", currency), Texts("en", currency)

    async def in_private(who: dict, text: str) -> str:
        update = e2e.fake.post_message(who["id"], who, text, chat_type="private")
        return str((await e2e.wait_reply(who["id"], update))["plain_text"])

    assert await in_private(gao, "/start") == chinese.message("private.start")
    chips = [
        chinese.html("balance.private_header"),
        chinese.html(
            "balance.private_line",
            title=html.escape(f"E2E {group}"),
            available=CREDIT_CENTS,
            held=0,
        ),
    ]
    assert await in_private(gao, "/balance") == plain_text("\n".join(chips))
    assert await in_private(hana, "/start") == english.message("private.start")
    assert await in_private(hana, "/balance") == english.message("balance.private_none")
    for who, language, words in [
        (lin, "zh-Hant", "你在任何群都還沒有籌碼"),
        (linh, "vi", "Bạn chưa có chip ở nhóm nào"),
        (aminah, "ms", "Anda belum ada cip dalam mana-mana kumpulan"),
    ]:
        answer = await in_private(who, "/balance")
        assert answer == Texts(language, currency).message("balance.private_none")
        assert words in answer, (language, answer)


async def test_the_command_menus_are_set_in_each_language_telegram_takes(e2e: E2E) -> None:
    await eventually(
        lambda: len([c for c in e2e.fake.calls if c["method"] == "setMyCommands"]) >= 15,
        what="the command menus",
    )
    menus = [call for call in e2e.fake.calls if call["method"] == "setMyCommands"]
    assert all(call["ok"] for call in menus), [c.get("description") for c in menus]
    languages = {call["params"].get("language_code") or "" for call in menus}
    # Telegram keys menus by two-letter codes: Traditional Chinese readers see zh's.
    assert languages == {"", "en", "zh", "vi", "ms"}
    group_menus = {
        call["params"].get("language_code") or "": json.loads(call["params"]["commands"])
        for call in menus
        if json.loads(call["params"]["scope"])["type"] == "all_group_chats"
    }
    bet = {
        code: next(c for c in menu if c["command"] == "bet") for code, menu in group_menus.items()
    }
    assert bet["vi"]["description"].startswith("đặt cược: /bet 20"), bet["vi"]
    assert bet["ms"]["description"].startswith("bertaruh: /bet 20"), bet["ms"]
    assert bet["zh"]["description"].startswith("下注：/bet 20"), bet["zh"]

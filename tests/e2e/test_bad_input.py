"""Refused commands: non-admins, bad amounts, rule breaks, odd names, very long messages.

Each refusal is a short, clear reply and changes nothing. The bot answers at most 10
commands per group per minute (``REPLIES_PER_MINUTE``), so the checks are spread over
groups that each stay within that budget. Replies are checked against the catalogue by
message key; the tests marked ``in_every_language`` run once per language, each in a group
of its own that an admin switched to it first.
"""

from __future__ import annotations

import html

import pytest
from sqlalchemy import select

from bot.engine.round import Phase
from bot.money import MAX_AMOUNT_CENTS
from bot.store.models import Account, AuditEntry, User
from bot.telegram.i18n import DEFAULT_LANGUAGE
from tests.e2e.harness import (
    CREDIT_CENTS,
    E2E,
    LANGUAGES,
    change_setting,
    choose_language,
    eventually,
    grab_all,
    group_in,
    open_table,
    shown,
    start_round,
    user,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")
in_every_language = pytest.mark.parametrize("language", LANGUAGES)

ADMIN = user(401, "Ada", "ada_admin")
DEALER = user(402, "Bao", "bao")
MALLORY = user(403, "Mallory", "mallory")
BO = user(404, "Bo", "bo")
ODD = user(405, "<b>&", "odd_name")
SHORT = 300
LONG_WINDOW = {"bet_seconds": "60"}


async def refused(
    e2e: E2E, chat_id: int, who: dict, text: str, people: list[int], key: str, /, **params
) -> str:
    """``text`` gets exactly message ``key`` (short) and changes nothing; the reply."""
    before = await e2e.snapshot(chat_id, people)
    answer = await e2e.expect_reply(chat_id, who, text, key, **params)
    assert len(answer) < SHORT
    assert await e2e.snapshot(chat_id, people) == before, text[:40]
    return answer


def not_an_amount(typed: str, reason: str) -> tuple[str, dict[str, str]]:
    """The message for ``typed``, refused as not an amount for ``reason``, and its
    parameters: what was typed, escaped as the bot escapes it."""
    return f"error.bad_amount.{reason}", {"typed": html.escape(typed)}


@in_every_language
async def test_non_admins_cannot_open_set_or_credit(e2e: E2E, language: str) -> None:
    group = group_in(language, -1_001_000_000_401)
    people = [ADMIN["id"], MALLORY["id"]]
    e2e.fake.set_chat_member(group, ADMIN["id"], "creator")
    await choose_language(e2e, group, ADMIN, language)
    chosen = await e2e.snapshot(group, people)
    assert chosen.settings == ({} if language == DEFAULT_LANGUAGE else {"language": language})
    hello = e2e.say(group, MALLORY, "hello")
    own = hello["message"]["message_id"]

    await refused(e2e, group, MALLORY, "/open", people, "error.not_admin")
    assert not (await e2e.snapshot(group, people)).is_open
    await e2e.expect_reply(group, ADMIN, "/open", "table.opened")
    await e2e.expect_reply(
        group,
        ADMIN,
        "/credit 20",
        "credit.done",
        reply_to=own,
        amount=2_000,
        name=shown(MALLORY),
        available=2_000,
    )

    before = await e2e.snapshot(group, people)
    assert before.is_open and before.audit_count == chosen.audit_count + 2
    await refused(e2e, group, MALLORY, "/set min_bet 0.01", people, "error.not_admin")
    await refused(e2e, group, MALLORY, "/set rake 0%", people, "error.not_admin")
    await refused(e2e, group, MALLORY, "/close", people, "error.not_admin")
    await e2e.expect_reply(group, MALLORY, "/credit 1000", "error.not_admin", reply_to=own)
    await refused(e2e, group, MALLORY, f"/credit {MALLORY['id']} 1000", people, "error.not_admin")
    await refused(e2e, group, MALLORY, "/debit @ada_admin 1", people, "error.not_admin")
    after = await e2e.snapshot(group, people)
    assert after == before
    assert after.balances[MALLORY["id"]].available == 2_000
    assert after.settings == chosen.settings


async def test_bad_amounts_are_refused_and_change_nothing(e2e: E2E) -> None:
    group = -1_001_000_000_402
    people = [DEALER["id"], BO["id"]]
    await open_table(e2e, group, ADMIN, [DEALER, BO], settings=LONG_WINDOW)
    state = await start_round(e2e, group, DEALER)
    # Each confirmation is awaited: an answer still waiting to be sent when the next one
    # comes is sent with it, as one message that replies to neither.
    await e2e.expect_reply(group, DEALER, "/bid 100", "answer.bid_placed", amount=10_000)
    await e2e.wait_phase(group, Phase.BETTING, state.id)
    await e2e.expect_reply(group, BO, "/bet 5", "answer.bet_placed", amount=500)

    for typed, reason in [
        ("abc", "not_amount"),
        ("-5", "negative"),
        ("1e9", "not_amount"),
        ("12.345", "decimals"),
    ]:
        key, params = not_an_amount(typed, reason)
        await refused(e2e, group, BO, f"/bet {typed}", people, key, **params)
    # Above what anyone may type: the table's largest bet, not the parser's cap.
    await refused(
        e2e, group, BO, "/bet " + "9" * 3_995, people, "error.bet_too_large", maximum=5_000
    )

    # Plain chat is not a command: no reply, no change, even 4,000 characters of it.
    before = await e2e.snapshot(group, people)
    chatter = [e2e.say(group, BO, text) for text in ("x" * 4_000, "-5", "1e9", "12.345")]
    await e2e.barrier(group, BO)
    for update in chatter:
        assert e2e.reply_of(group, update["message"]["message_id"]) is None
    assert await e2e.snapshot(group, people) == before
    current = await e2e.current_round(group)
    assert current is not None and [(b.user_id, b.amount) for b in current.bets] == [
        (BO["id"], 500)
    ]
    balance = await e2e.service.balance(group, BO["id"])
    assert (balance.available, balance.held) == (CREDIT_CENTS - 9_000, 9_000)


@in_every_language
async def test_rule_breaks_are_refused_and_change_nothing(e2e: E2E, language: str) -> None:
    group = group_in(language, -1_001_000_000_403)
    poor = user(406, "Cy", "cy")
    people = [DEALER["id"], BO["id"], poor["id"]]
    # Bidding long enough for two refusals to be answered before it ends.
    await open_table(
        e2e,
        group,
        ADMIN,
        [DEALER, BO],
        settings={**LONG_WINDOW, "bid_seconds": "4"},
        language=language,
    )
    hello = e2e.say(group, poor, "hi")
    await e2e.expect_reply(
        group,
        ADMIN,
        "/credit 500",
        "credit.done",
        reply_to=hello["message"]["message_id"],
        amount=50_000,
        name=shown(poor),
        available=50_000,
    )

    state = await start_round(e2e, group, DEALER)
    await refused(e2e, group, DEALER, "/bid 50", people, "error.bid_too_low", minimum=10_000)
    await refused(e2e, group, BO, "/bet 5", people, "error.not_betting")
    e2e.say(group, DEALER, "/bid 100")
    await e2e.wait_phase(group, Phase.BETTING, state.id)
    await refused(
        e2e,
        group,
        poor,
        "/bet 40",
        people,
        "error.not_enough_chips_to_bet",
        multiplier=18,
        needed=72_000,
        available=50_000,
    )
    await refused(e2e, group, BO, "/bet 100", people, "error.bet_too_large", maximum=5_000)
    await refused(e2e, group, DEALER, "/bet 5", people, "error.dealer_cannot_bet")
    current = await e2e.current_round(group)
    assert current is not None and current.bets == ()
    for uid in (BO["id"], poor["id"]):
        assert (await e2e.service.balance(group, uid)).held == 0


async def test_odd_name_is_escaped_on_board_and_results(e2e: E2E) -> None:
    group = -1_001_000_000_404
    escaped = html.escape(ODD["first_name"])
    await open_table(e2e, group, ADMIN, [DEALER, ODD])
    texts = await e2e.texts(group)
    state = await start_round(e2e, group, DEALER)
    e2e.say(group, DEALER, "/bid 100")
    await e2e.wait_phase(group, Phase.BETTING, state.id)
    e2e.say(group, ODD, "/bet 5")
    one_bet = texts.message("board.bets_header", count=1)

    def board_with_bet() -> dict | None:
        for entry in e2e.fake.transcript(group):
            if entry["kind"] == "edit" and one_bet in (entry["plain_text"] or "").splitlines():
                return entry
        return None

    board = await e2e.fake.wait_for(board_with_bet, timeout=10)
    bet_line = texts.message("board.bet_line", name=escaped, stake=500)
    assert bet_line in board["plain_text"].splitlines()
    assert texts.html("board.bet_line", name=escaped, stake=500) in board["text"]
    assert "<b>&" not in board["text"]

    state = await e2e.wait_phase(group, Phase.GRABBING, state.id)
    await grab_all(e2e, group, state, [ODD, DEALER])
    ended = await e2e.wait_ended(state.id)
    # The results go out after the round ended in the database: wait for them.
    await eventually(
        lambda: any(f"/verify {ended.id}" in e["plain_text"] for e in e2e.sends(group)),
        what="the results message",
    )
    closing = [e for e in e2e.sends(group) if f"/verify {ended.id}" in e["plain_text"]]
    assert len(closing) == 1
    if ended.phase is Phase.SETTLED:
        lines = closing[0]["plain_text"].splitlines()
        assert any(texts.match(line, "results.player", name=escaped) for line in lines), lines
        assert escaped in closing[0]["text"]
        assert "<b>&" not in closing[0]["text"]
    balance = await e2e.service.balance(group, ODD["id"])
    answer = await e2e.expect_reply(
        group,
        ODD,
        "/balance",
        "balance.group",
        name=escaped,
        available=balance.available,
        held=balance.held,
    )
    assert len(answer) < SHORT


@in_every_language
async def test_unknown_username_is_quoted_as_typed(e2e: E2E, language: str) -> None:
    group = group_in(language, -1_001_000_000_405)
    e2e.fake.set_chat_member(group, ADMIN["id"], "administrator")
    await choose_language(e2e, group, ADMIN, language)
    people = [ADMIN["id"]]
    typed = "@<b>&x"
    await refused(
        e2e,
        group,
        ADMIN,
        f"/credit {typed} 5",
        people,
        "error.unknown_user",
        who=html.escape(typed),
    )


@in_every_language
async def test_user_ids_no_telegram_user_has_are_refused(e2e: E2E, language: str) -> None:
    group = group_in(language, -1_001_000_000_406)
    e2e.fake.set_chat_member(group, ADMIN["id"], "administrator")
    await choose_language(e2e, group, ADMIN, language)
    largest = 2**52
    people = [ADMIN["id"], 0, largest]
    cases = [
        ("/credit 0 5", "0"),  # the bot's own accounts
        ("/credit 99999999999999999999 5", "99999999999999999999"),
        (f"/credit {largest + 1} 5", str(largest + 1)),
        ("/debit -5 5", "-5"),
        ("/credit ٣ 5", "٣"),  # not read as 3
        ("/ledger 0", "0"),
    ]
    for text, typed in cases:
        await refused(
            e2e, group, ADMIN, text, people, "error.bad_user_id", who=typed, maximum_id=largest
        )
    # Nothing of the group, and no such user, was written.
    async with e2e.database.transaction() as session:
        accounts = (await session.scalars(select(Account.id).where(Account.chat_id == group))).all()
        users = set((await session.scalars(select(User.id))).all())
    assert accounts == [] and not {0, largest + 1} & users, (accounts, users)

    # The largest id Telegram may give is a user like any other (named by its id).
    await e2e.expect_reply(
        group,
        ADMIN,
        f"/credit {largest} 5",
        "credit.done",
        amount=500,
        name=str(largest),
        available=500,
    )
    assert (await e2e.service.balance(group, largest)).available == 500


@in_every_language
async def test_garbage_buttons_and_non_ascii_or_huge_bets_are_refused(
    e2e: E2E, language: str
) -> None:
    group = group_in(language, -1_001_000_000_407)
    people = [DEALER["id"], BO["id"]]
    await open_table(e2e, group, ADMIN, [DEALER, BO], settings=LONG_WINDOW, language=language)
    await change_setting(e2e, group, ADMIN, "max_bet", "40")
    await change_setting(e2e, group, ADMIN, "currency", "MYR")
    state = await start_round(e2e, group, DEALER)
    e2e.say(group, DEALER, "/bid 100")
    await e2e.wait_phase(group, Phase.BETTING, state.id)
    board = await e2e.wait_button(group, f"{state.id}:cancel:0")

    before = await e2e.snapshot(group, people)
    for data in [
        f"{state.id}:bet:²",  # crashed the handler (isdigit, then int)
        f"{state.id}:bet:٣",  # was read as a bet of 0.03
        f"{state.id}:bet:05",
        f"{state.id}:bet:0",
        f"{state.id}:cancel:5",
        f"{state.id}:bet:99999999999999999999",
        "99999999999999999999:bet:5",
        "1:steal:5",
    ]:
        await e2e.expect_toast(group, e2e.press(group, board, BO, data), "error.bad_button")
    assert await e2e.snapshot(group, people) == before
    # A real button of this round still works, its amount in the group's currency.
    press = e2e.press(group, board, BO, f"{state.id}:bet:500")
    toast = await e2e.expect_toast(group, press, "answer.bet_placed", amount=500)
    assert "MYR5.00" in toast, toast
    await e2e.wait_bets(group, 1)

    key, params = not_an_amount("٣", "digits")
    await refused(e2e, group, BO, "/bet ٣", people, key, **params)
    # Above the parser's cap: the table's own largest bet, in its currency.
    await refused(
        e2e, group, BO, "/bet 99999999999999999999", people, "error.bet_too_large", maximum=4_000
    )
    await refused(
        e2e,
        group,
        ADMIN,
        "/fund 99999999999",
        people,
        "error.amount_too_large",
        maximum=MAX_AMOUNT_CENTS,
    )


@in_every_language
async def test_settings_are_strict_named_as_typed_and_audited_once(e2e: E2E, language: str) -> None:
    group = group_in(language, -1_001_000_000_408)
    e2e.fake.set_chat_member(group, ADMIN["id"], "administrator")
    await choose_language(e2e, group, ADMIN, language)
    people = [ADMIN["id"]]
    for typed in ("1,,2", "5,10,"):
        await refused(
            e2e,
            group,
            ADMIN,
            f"/set quick_bets {typed}",
            people,
            "error.bad_setting.quick_bets_empty_item",
            name="quick_bets",
            typed=typed,
        )
    await refused(
        e2e,
        group,
        ADMIN,
        "/set quick_bets 5,5",
        people,
        "error.bad_setting.quick_bets_duplicate",
        name="quick_bets",
        amount="5.00",
    )
    await refused(
        e2e,
        group,
        ADMIN,
        "/set rake_bps 200%",
        people,
        "error.bad_setting.above_100",
        name="rake",
        typed="200%",
    )
    await refused(
        e2e,
        group,
        ADMIN,
        "/set <b> 1",
        people,
        "error.bad_setting.unknown_setting",
        typed=html.escape("<b>"),
    )

    await change_setting(e2e, group, ADMIN, "rake", "4.5%")
    before = await e2e.snapshot(group, people)
    await e2e.expect_reply(
        group, ADMIN, "/set rake 4.5%", "set.unchanged", name="rake", value="4.5%"
    )
    assert await e2e.snapshot(group, people) == before
    async with e2e.database.transaction() as session:
        audit = (
            await session.scalars(
                select(AuditEntry.details)
                .where(AuditEntry.chat_id == group)
                .order_by(AuditEntry.id)
            )
        ).all()
    chosen = (
        []
        if language == DEFAULT_LANGUAGE
        else [{"setting": "language", "old": DEFAULT_LANGUAGE, "new": language}]
    )
    assert audit == [*chosen, {"setting": "rake", "old": "5%", "new": "4.5%"}]

    texts = await e2e.texts(group)
    config = (await e2e.ask(group, ADMIN, "/config")).splitlines()
    assert config[0] == texts.message("config.header"), config
    assert texts.message("config.line", name="rake", value="4.5%") in config, config
    assert texts.message("config.line", name="rebate", value="0.7%") in config, config
    assert not any("_bps" in line for line in config), config

"""Refused commands: non-admins, bad amounts, rule breaks, odd names, very long messages.

Each refusal is a short, clear reply and changes nothing. The bot answers at most 10
commands per group per minute (``REPLIES_PER_MINUTE``), so the checks are spread over
groups that each stay within that budget.
"""

from __future__ import annotations

import html

import pytest
from sqlalchemy import select

from bot.engine.round import Phase
from bot.store.models import Account, AuditEntry, User
from bot.telegram.i18n import translate
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

ADMIN = user(401, "Ada", "ada_admin")
DEALER = user(402, "Bao", "bao")
MALLORY = user(403, "Mallory", "mallory")
BO = user(404, "Bo", "bo")
ODD = user(405, "<b>&", "odd_name")
SHORT = 300
LONG_WINDOW = {"bet_seconds": "60"}


async def refused(e2e: E2E, chat_id: int, who: dict, text: str, expected: str, people: list[int]):
    """``text`` gets exactly the reply ``expected`` (short) and changes nothing."""
    before = await e2e.snapshot(chat_id, people)
    answer = await e2e.ask(chat_id, who, text)
    assert answer == expected, (text[:40], answer)
    assert len(answer) < SHORT
    assert await e2e.snapshot(chat_id, people) == before, text[:40]


async def test_non_admins_cannot_open_set_or_credit(e2e: E2E) -> None:
    group = -1_001_000_000_401
    people = [ADMIN["id"], MALLORY["id"]]
    not_admin = "Only group admins can do that."
    e2e.fake.set_chat_member(group, ADMIN["id"], "creator")
    hello = e2e.say(group, MALLORY, "hello")
    own = hello["message"]["message_id"]

    await refused(e2e, group, MALLORY, "/open", not_admin, people)
    assert not (await e2e.snapshot(group, people)).is_open
    assert await e2e.ask(group, ADMIN, "/open") == (
        "The table is open. Start a round with /newround."
    )
    answer = await e2e.ask(group, ADMIN, "/credit 20", reply_to=own)
    assert answer == "Credited RM20.00 to Mallory. Available now RM20.00."

    before = await e2e.snapshot(group, people)
    assert before.is_open and before.audit_count == 2
    await refused(e2e, group, MALLORY, "/set min_bet 0.01", not_admin, people)
    await refused(e2e, group, MALLORY, "/set rake 0%", not_admin, people)
    await refused(e2e, group, MALLORY, "/close", not_admin, people)
    answer = await e2e.ask(group, MALLORY, "/credit 1000", reply_to=own)
    assert answer == not_admin
    await refused(e2e, group, MALLORY, f"/credit {MALLORY['id']} 1000", not_admin, people)
    await refused(e2e, group, MALLORY, "/debit @ada_admin 1", not_admin, people)
    after = await e2e.snapshot(group, people)
    assert after == before
    assert after.balances[MALLORY["id"]].available == 2_000
    assert after.settings == {}


async def test_bad_amounts_are_refused_and_change_nothing(e2e: E2E) -> None:
    group = -1_001_000_000_402
    people = [DEALER["id"], BO["id"]]
    await open_table(e2e, group, ADMIN, [DEALER, BO], settings=LONG_WINDOW)
    state = await start_round(e2e, group, DEALER)
    e2e.say(group, DEALER, "/bid 100")
    await e2e.wait_phase(group, Phase.BETTING, state.id)
    e2e.say(group, BO, "/bet 5")
    await e2e.wait_bets(group, 1)

    cases = [
        ("/bet abc", "Not an amount: 'abc' is not an amount; write e.g. 20 or 12.50."),
        ("/bet -5", "Not an amount: '-5' is negative; amounts must be positive."),
        ("/bet 1e9", "Not an amount: '1e9' is not an amount; write e.g. 20 or 12.50."),
        ("/bet 12.345", "Not an amount: '12.345' has more than two decimals."),
        # Above what anyone may type: the table's largest bet, not the parser's cap.
        ("/bet " + "9" * 3_995, translate("en", "error.bet_too_large", "RM", maximum=5_000)),
    ]
    for text, expected in cases:
        await refused(e2e, group, BO, text, expected, people)
    await refused(e2e, group, DEALER, "/bet 5", "The dealer cannot bet.", people)

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


async def test_rule_breaks_are_refused_and_change_nothing(e2e: E2E) -> None:
    group = -1_001_000_000_403
    poor = user(406, "Cy", "cy")
    people = [DEALER["id"], BO["id"], poor["id"]]
    # Bidding long enough for two refusals to be answered before it ends.
    await open_table(e2e, group, ADMIN, [DEALER, BO], settings={**LONG_WINDOW, "bid_seconds": "4"})
    hello = e2e.say(group, poor, "hi")
    answer = await e2e.ask(group, ADMIN, "/credit 500", reply_to=hello["message"]["message_id"])
    assert answer == "Credited RM500.00 to Cy. Available now RM500.00."

    state = await start_round(e2e, group, DEALER)
    await refused(e2e, group, DEALER, "/bid 50", "A bid must be at least RM100.00.", people)
    await refused(e2e, group, BO, "/bet 5", "Betting is not open right now.", people)
    e2e.say(group, DEALER, "/bid 100")
    await e2e.wait_phase(group, Phase.BETTING, state.id)
    await refused(
        e2e,
        group,
        poor,
        "/bet 40",
        "Not enough chips: a bet holds 18× the stake (RM720.00); you have RM500.00.",
        people,
    )
    await refused(e2e, group, BO, "/bet 100", "The largest bet is RM50.00.", people)
    current = await e2e.current_round(group)
    assert current is not None and current.bets == ()
    for uid in (BO["id"], poor["id"]):
        assert (await e2e.service.balance(group, uid)).held == 0


async def test_odd_name_is_escaped_on_board_and_results(e2e: E2E) -> None:
    group = -1_001_000_000_404
    escaped = html.escape(ODD["first_name"])
    await open_table(e2e, group, ADMIN, [DEALER, ODD])
    state = await start_round(e2e, group, DEALER)
    e2e.say(group, DEALER, "/bid 100")
    await e2e.wait_phase(group, Phase.BETTING, state.id)
    e2e.say(group, ODD, "/bet 5")

    def board_with_bet() -> dict | None:
        for entry in e2e.fake.transcript(group):
            if entry["kind"] == "edit" and "Bets (1):" in (entry["plain_text"] or ""):
                return entry
        return None

    board = await e2e.fake.wait_for(board_with_bet, timeout=10)
    assert f"• {ODD['first_name']}: RM5.00" in board["plain_text"].splitlines()
    assert f"• {escaped}: RM5.00" in board["text"]
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
        assert any(line.startswith(f"{ODD['first_name']}: ") for line in lines), lines
        assert f"\n{escaped}: " in closing[0]["text"]
    balance = await e2e.ask(group, ODD, "/balance")
    assert balance.startswith(f"{ODD['first_name']}: available RM")
    assert len(balance) < SHORT


async def test_unknown_username_is_quoted_as_typed(e2e: E2E) -> None:
    group = -1_001_000_000_405
    e2e.fake.set_chat_member(group, ADMIN["id"], "administrator")
    people = [ADMIN["id"]]
    await refused(
        e2e,
        group,
        ADMIN,
        "/credit @<b>&x 5",
        "I have not seen @<b>&x yet; reply to one of their messages instead.",
        people,
    )


async def refused_saying(
    e2e: E2E, chat_id: int, who: dict, text: str, needles: list[str], people: list[int]
) -> str:
    """``text`` gets a short reply that contains every one of ``needles`` and changes
    nothing; the reply."""
    before = await e2e.snapshot(chat_id, people)
    answer = await e2e.ask(chat_id, who, text)
    assert all(needle in answer for needle in needles), (text[:40], answer)
    assert len(answer) < SHORT
    assert await e2e.snapshot(chat_id, people) == before, text[:40]
    return answer


async def test_user_ids_no_telegram_user_has_are_refused(e2e: E2E) -> None:
    group = -1_001_000_000_406
    e2e.fake.set_chat_member(group, ADMIN["id"], "administrator")
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
    for text, shown in cases:
        answer = await refused_saying(e2e, group, ADMIN, text, [str(largest)], people)
        assert answer.startswith(f"{shown} "), answer
    # Nothing of the group, and no such user, was written.
    async with e2e.database.transaction() as session:
        accounts = (await session.scalars(select(Account.id).where(Account.chat_id == group))).all()
        users = set((await session.scalars(select(User.id))).all())
    assert accounts == [] and not {0, largest + 1} & users, (accounts, users)

    # The largest id Telegram may give is a user like any other.
    answer = await e2e.ask(group, ADMIN, f"/credit {largest} 5")
    assert "RM5.00" in answer and str(largest) in answer, answer
    assert (await e2e.service.balance(group, largest)).available == 500


async def test_garbage_buttons_and_non_ascii_or_huge_bets_are_refused(e2e: E2E) -> None:
    group = -1_001_000_000_407
    people = [DEALER["id"], BO["id"]]
    await open_table(e2e, group, ADMIN, [DEALER, BO], settings=LONG_WINDOW)
    for setting in ("max_bet 40", "currency MYR"):
        assert (await e2e.ask(group, ADMIN, f"/set {setting}")).startswith(setting.split()[0])
    state = await start_round(e2e, group, DEALER)
    e2e.say(group, DEALER, "/bid 100")
    await e2e.wait_phase(group, Phase.BETTING, state.id)
    board = await e2e.wait_button(group, f"{state.id}:cancel:0")

    not_mine = translate("en", "error.bad_button")
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
        answer = await e2e.wait_answer(e2e.press(group, board, BO, data))
        assert answer["text"] == not_mine, (data, answer)
    assert await e2e.snapshot(group, people) == before
    # A real button of this round still works (the toast is not the refusal).
    answer = await e2e.wait_answer(e2e.press(group, board, BO, f"{state.id}:bet:500"))
    assert answer["text"] != not_mine and "MYR5.00" in answer["text"], answer
    await e2e.wait_bets(group, 1)

    await refused_saying(e2e, group, BO, "/bet ٣", ["'٣'", "0-9"], people)
    # Above the parser's cap: the table's own largest bet, in its currency.
    answer = await refused_saying(e2e, group, BO, "/bet 99999999999999999999", ["MYR40.00"], people)
    assert "10000000" not in answer, answer
    await refused_saying(e2e, group, ADMIN, "/fund 99999999999", ["MYR10000000.00"], people)


async def test_settings_are_strict_named_as_typed_and_audited_once(e2e: E2E) -> None:
    group = -1_001_000_000_408
    e2e.fake.set_chat_member(group, ADMIN["id"], "administrator")
    people = [ADMIN["id"]]
    for text in ("/set quick_bets 1,,2", "/set quick_bets 5,10,", "/set quick_bets 5,5"):
        await refused_saying(e2e, group, ADMIN, text, ["quick_bets"], people)
    answer = await refused_saying(e2e, group, ADMIN, "/set rake 200%", ["rake", "200%"], people)
    assert "_bps" not in answer, answer

    first = await e2e.ask(group, ADMIN, "/set rake 4.5%")
    assert first.startswith("rake: ") and "4.5%" in first, first
    before = await e2e.snapshot(group, people)
    again = await e2e.ask(group, ADMIN, "/set rake 4.5%")
    assert again == translate("en", "set.unchanged", name="rake", value="4.5%"), again
    assert await e2e.snapshot(group, people) == before
    async with e2e.database.transaction() as session:
        audit = (
            await session.scalars(select(AuditEntry.details).where(AuditEntry.chat_id == group))
        ).all()
    assert audit == [{"setting": "rake", "old": "5%", "new": "4.5%"}]

    config = (await e2e.ask(group, ADMIN, "/config")).splitlines()
    assert "• rake = 4.5%" in config and "• rebate = 0.7%" in config, config
    assert not any("_bps" in line for line in config), config

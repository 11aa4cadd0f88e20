"""SIGKILL of the bot at the one moment that used to lose a message: it has claimed a
round's results (or board) and is waiting for Telegram's answer (issue 9).

The fake Telegram holds that ``sendMessage`` (``hold_sends``) until the bot is dead: either
before the message exists (Telegram never got it: after a restart it goes out exactly
once) or after it is in the chat (Telegram had it, the bot never learnt so: it goes out
again, twice in all, the one duplicate at-least-once allows). The round's chips are left
alone either way. The results go out as a photo with the text as its caption
(``pictures on``): the photo is delivered as the text was.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy import func, select, update

from bot.engine.round import Phase
from bot.store.ledger import Balance
from bot.store.models import LedgerTransaction, RoundRow
from tests.e2e.harness import (
    CREDIT_CENTS,
    E2E,
    FAST_GAME,
    JsonDict,
    Texts,
    eventually,
    grab_all,
    open_table,
    results_title,
    running_bot,
    start_round,
    user,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: Short, so that the restarted bot takes over a dead one's job soon.
LEASE_SECONDS = 2.0
GROUP = -1_001_000_000_301
ADMIN = user(301, "Ada", "ada_admin")
DEALER = user(302, "Bao", "bao")
BETTORS = [user(303, "Chen"), user(304, "Dewi")]
PEOPLE = [DEALER, *BETTORS]
#: Only the results carry the seed (``results.seed``); only a board its hash (the group
#: speaks English).
RESULTS_TEXT = Texts().pattern("results.seed")
BOARD_TEXT = Texts().pattern("board.commitment")


@pytest_asyncio.fixture(loop_scope="module")
async def e2e(tmp_path: Path) -> AsyncIterator[E2E]:  # a fresh bot process: it gets killed
    async with running_bot(
        tmp_path, game={**FAST_GAME, "pictures": "on"}, delivery_lease_seconds=LEASE_SECONDS
    ) as session:
        yield session


async def round_row(e2e: E2E, round_id: int) -> RoundRow:
    async with e2e.database.transaction() as session:
        row = await session.get(RoundRow, round_id)
        assert row is not None
        session.expunge(row)
        return row


async def ledger_of(e2e: E2E, round_id: int) -> list[tuple[int, str]]:
    async with e2e.database.transaction() as session:
        rows = await session.execute(
            select(LedgerTransaction.id, LedgerTransaction.kind)
            .where(LedgerTransaction.round_id == round_id)
            .order_by(LedgerTransaction.id)
        )
        return [(transaction_id, kind) for transaction_id, kind in rows.tuples()]


async def ledger_size(e2e: E2E) -> int:
    async with e2e.database.transaction() as session:
        return int(await session.scalar(select(func.count()).select_from(LedgerTransaction)) or 0)


async def balances(e2e: E2E) -> dict[int, Balance]:
    return {p["id"]: await e2e.service.balance(GROUP, p["id"]) for p in PEOPLE}


def sent_matching(e2e: E2E, text: str) -> list[JsonDict]:
    return [entry for entry in e2e.sends(GROUP) if text in entry["plain_text"]]


async def seed_line(e2e: E2E, round_id: int) -> str:
    """The line of an ended round's results that reveals its seed (no other message has it)."""
    state = await e2e.service.round(round_id)
    assert state is not None and not state.phase.is_open
    return await e2e.message(GROUP, "results.seed", seed=state.seed.hex(), round_id=round_id)


async def kill_while_held(e2e: E2E) -> None:
    """SIGKILL the bot while the fake holds its send; the held request dies with it."""
    await e2e.bot.kill()
    await e2e.fake.wait_for(lambda: e2e.fake.held_sends == 0, timeout=15)
    e2e.fake.release_sends()


async def play_a_round_until_its_results_are_held(e2e: E2E) -> int:
    """A round with a dealer and two bets, grabbed and settled; returns its id once the
    bot is waiting for Telegram to answer the results' sendMessage."""
    state = await start_round(e2e, GROUP, DEALER)
    e2e.say(GROUP, DEALER, "/bid 100")
    await e2e.wait_phase(GROUP, Phase.BETTING, state.id)
    e2e.say(GROUP, BETTORS[0], "/bet 5")
    e2e.say(GROUP, BETTORS[1], "/bet 10")
    await e2e.wait_bets(GROUP, 2)
    state = await e2e.wait_phase(GROUP, Phase.GRABBING, state.id)
    await grab_all(e2e, GROUP, state, PEOPLE)
    await e2e.wait_ended(state.id)
    await e2e.fake.wait_for(lambda: e2e.fake.held_sends == 1, timeout=15)
    return state.id


@pytest.mark.parametrize(
    ("delivered_first", "results_in_all"),
    [(False, 1), (True, 2)],
    ids=["telegram-never-got-it", "telegram-had-it"],
)
async def test_results_claimed_when_the_bot_was_killed_reach_the_group_after_a_restart(
    e2e: E2E, delivered_first: bool, results_in_all: int
) -> None:
    await open_table(e2e, GROUP, ADMIN, PEOPLE)
    e2e.fake.hold_sends(RESULTS_TEXT, delivered_first=delivered_first)
    round_id = await play_a_round_until_its_results_are_held(e2e)
    verify = await seed_line(e2e, round_id)

    # The bot claimed the results and waits for Telegram: not marked as announced yet.
    row = await round_row(e2e, round_id)
    assert row.phase == Phase.SETTLED.value
    assert row.announcement_claimed_until_ms is not None
    assert row.announced_at_ms is None
    ledger = await ledger_of(e2e, round_id)
    assert [kind for _, kind in ledger].count("settle") == 1, ledger
    chips = await balances(e2e)
    transactions = await ledger_size(e2e)

    await kill_while_held(e2e)
    assert len(sent_matching(e2e, verify)) == results_in_all - 1
    await e2e.bot.start()

    async def announced() -> bool:
        return (await round_row(e2e, round_id)).announced_at_ms is not None

    await eventually(announced, what="the results to be marked sent", on_timeout=e2e.bot.log)
    # Marked only after Telegram answered, and never sent again after that: final.
    results = sent_matching(e2e, verify)
    assert len(results) == results_in_all, [e["plain_text"] for e in e2e.sends(GROUP)]
    assert all(entry["media"]["kind"] == "photo" for entry in results)
    ended = await e2e.service.round(round_id)
    assert ended is not None
    title = results_title(await e2e.texts(GROUP), ended)
    assert results[-1]["plain_text"].splitlines()[0] == title
    # Sending the results again touched no chip.
    assert await ledger_of(e2e, round_id) == ledger
    assert await ledger_size(e2e) == transactions
    assert await balances(e2e) == chips
    house = await e2e.service.house_balance(GROUP)
    assert sum(b.total for b in chips.values()) + house == CREDIT_CENTS * len(PEOPLE)


@pytest.mark.parametrize(
    ("delivered_first", "boards_in_all"),
    [(False, 1), (True, 2)],
    ids=["telegram-never-got-it", "telegram-had-it"],
)
async def test_a_board_claimed_when_the_bot_was_killed_is_posted_after_a_restart(
    e2e: E2E, delivered_first: bool, boards_in_all: int
) -> None:
    # Bidding stays open across the restart, so the round still needs its board.
    await open_table(e2e, GROUP, ADMIN, PEOPLE, settings={"bid_seconds": "120"})
    e2e.fake.hold_sends(BOARD_TEXT, delivered_first=delivered_first)
    e2e.say(GROUP, DEALER, "/newround")
    state = await e2e.wait_phase(GROUP, Phase.BIDDING)
    await e2e.fake.wait_for(lambda: e2e.fake.held_sends == 1, timeout=15)
    row = await round_row(e2e, state.id)
    assert row.board_claimed_until_ms is not None
    assert row.board_message_id is None
    transactions = await ledger_size(e2e)
    chips = await balances(e2e)
    board = await e2e.message(GROUP, "board.commitment", commitment=state.commitment)

    await kill_while_held(e2e)
    assert len(sent_matching(e2e, board)) == boards_in_all - 1
    await e2e.bot.start()

    async def posted() -> int | None:
        return (await round_row(e2e, state.id)).board_message_id

    message_id = await eventually(posted, what="the board to be recorded", on_timeout=e2e.bot.log)
    boards = sent_matching(e2e, board)
    assert len(boards) == boards_in_all, [e["plain_text"] for e in e2e.sends(GROUP)]
    assert boards[-1]["message_id"] == message_id
    # The board the bot knows is live: a bid on its button goes through.
    await e2e.wait_button(GROUP, f"{state.id}:bid:{state.settings.min_bid}")
    press = e2e.press(GROUP, message_id, DEALER, f"{state.id}:bid:{state.settings.min_bid}")
    await e2e.wait_answer(press)
    bid = await e2e.current_round(GROUP)
    assert bid is not None and bid.high_bidder == DEALER["id"]
    assert await ledger_size(e2e) == transactions + 1  # the bid, nothing else
    assert (await balances(e2e))[BETTORS[0]["id"]] == chips[BETTORS[0]["id"]]


async def test_a_running_bot_sends_the_results_another_worker_claimed_and_died_with(
    e2e: E2E,
) -> None:
    await open_table(e2e, GROUP, ADMIN, PEOPLE)
    e2e.fake.hold_sends(RESULTS_TEXT)
    round_id = await play_a_round_until_its_results_are_held(e2e)
    await kill_while_held(e2e)
    # Another worker takes the job over once the dead bot's lease ran out, for long.
    await eventually(
        lambda: e2e.service.claim_announcement(round_id, lease_ms=600_000),
        what="the dead bot's lease to run out",
    )
    await e2e.bot.start()
    await e2e.barrier(GROUP, ADMIN)
    # Started (start-up is over before the bot polls): it left the job to its holder.
    results = await seed_line(e2e, round_id)
    assert sent_matching(e2e, results) == []
    assert (await round_row(e2e, round_id)).announced_at_ms is None

    # That worker dies: its lease runs out (moved to now rather than waited for).
    async with e2e.database.transaction() as session:
        await session.execute(
            update(RoundRow)
            .where(RoundRow.id == round_id)
            .values(announcement_claimed_until_ms=e2e.service.clock())
        )

    async def announced() -> bool:
        return (await round_row(e2e, round_id)).announced_at_ms is not None

    # Only the running bot's sweep can send them now.
    await eventually(announced, what="the sweep to send the results", on_timeout=e2e.bot.log)
    assert len(sent_matching(e2e, results)) == 1

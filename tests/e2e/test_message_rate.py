"""Telegram allows a bot about 20 messages a minute in one group; the bot stays under that.

python-telegram-bot's ``AIORateLimiter`` in the bot holds back every Bot API request to a
group beyond 20 a minute (board edits and ``getChatMember`` included), so quick rounds
soon run into it: the players below act on what the group shows (a round's board), as
people do, and the run copes with rounds that end without play.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
import pytest_asyncio

from bot.engine.round import Phase, Round, VoidReason
from tests.e2e.harness import E2E, Texts, eventually, open_table, sliding_max, user

pytestmark = pytest.mark.asyncio(loop_scope="module")

GROUP = -1_001_000_000_501
ADMIN = user(501, "Ada", "ada_admin")
DEALER = user(502, "Bao", "bao")
BETTORS = [user(503, "Chen"), user(504, "Dewi"), user(505, "Eko")]
LIMIT = 20
#: The bot's default share of the group's messages for replies.
REPLIES_PER_MINUTE = 10
ROUNDS = 3
#: A throttled bot needs several seconds per Bot API request.
PATIENCE = 60.0
BAD = ["/bet abc", "/bid -1", "/newround", "/bet 12.345", "/verify x", "/bet 1e9"]
BID_BUTTON = re.compile(r"^(\d+):bid:")


@dataclass
class Run:
    """What happened over a run of quick rounds."""

    rounds: list[Round]
    #: Whether the dealer's bid, sent when the round's board appeared, was taken.
    bid_taken: list[bool]


def new_board(e2e: E2E, chat_id: int, seen: set[int]) -> int | None:
    """The round id of a board (a message with bid buttons) not seen before."""
    for entry in e2e.sends(chat_id):
        for row in (entry["reply_markup"] or {}).get("inline_keyboard", []):
            for button in row:
                match = BID_BUTTON.match(button.get("callback_data", ""))
                if match and int(match[1]) not in seen:
                    return int(match[1])
    return None


async def left_phase(e2e: E2E, round_id: int, phase: Phase) -> Round:
    """Wait until the round has left ``phase``."""

    async def check() -> Round | None:
        state = await e2e.service.round(round_id)
        return state if state is not None and state.phase is not phase else None

    return await eventually(check, timeout=PATIENCE, what=f"round {round_id} to leave {phase}")


def seed_line(texts: Texts, state: Round) -> str:
    """The line of an ended round's closing message that reveals its seed (results, or
    why it ended: no other message has it)."""
    return texts.message("results.seed", seed=state.seed.hex(), round_id=state.id)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def run(e2e: E2E) -> Run:
    """Three quick rounds (2 s windows, 1 s pause) with bad commands in between."""
    await open_table(e2e, GROUP, ADMIN, [DEALER, *BETTORS])
    e2e.say(GROUP, DEALER, "/newround")
    rounds: list[Round] = []
    taken: list[bool] = []
    seen: set[int] = set()
    noise = 0
    while len(rounds) < ROUNDS:
        round_id = await e2e.fake.wait_for(lambda: new_board(e2e, GROUP, seen), timeout=PATIENCE)
        seen.add(round_id)
        e2e.say(GROUP, DEALER, "/bid 100")
        for bettor in BETTORS:
            e2e.say(GROUP, bettor, BAD[noise % len(BAD)])
            noise += 1
        state = await left_phase(e2e, round_id, Phase.BIDDING)
        taken.append(state.dealer_id == DEALER["id"])
        if state.phase is Phase.BETTING:
            for i, bettor in enumerate(BETTORS):
                e2e.say(GROUP, bettor, f"/bet {i + 1}")
                e2e.say(GROUP, bettor, BAD[noise % len(BAD)])
                noise += 1
            state = await left_phase(e2e, round_id, Phase.BETTING)
        if state.phase is Phase.GRABBING:
            board = await e2e.service.board_message(round_id)
            assert board is not None
            for who in [*BETTORS, DEALER]:
                if who["id"] in state.participants:
                    e2e.press(GROUP, board, who, f"{round_id}:grab:0")
        state = await e2e.wait_ended(round_id, timeout=PATIENCE)
        rounds.append(state)
        ended_void = state.phase is Phase.VOID and state.void_reason is not VoidReason.REDEAL
        if ended_void and len(rounds) < ROUNDS:
            e2e.say(GROUP, DEALER, "/newround")  # no round follows a void one by itself
    # Everything the bot had to say about the last round has been said.
    last = seed_line(await e2e.texts(GROUP), rounds[-1])
    await e2e.fake.wait_for(
        lambda: any(last in e["plain_text"] for e in e2e.sends(GROUP)),
        timeout=PATIENCE,
    )
    await e2e.barrier(GROUP, ADMIN)
    return Run(rounds, taken)


async def test_never_more_than_20_messages_a_minute_in_a_group(e2e: E2E, run: Run) -> None:
    sends = e2e.sends(GROUP)
    most = sliding_max([entry["time"] for entry in sends])
    assert most <= LIMIT, f"{most} messages within 60 s:\n" + "\n".join(
        f"{e['time']:.1f} {e['plain_text'][:50]}" for e in sends
    )
    # Each round was closed by exactly one message (results, or why it ended).
    texts = await e2e.texts(GROUP)
    for state in run.rounds:
        closing = [e for e in sends if seed_line(texts, state) in e["plain_text"]]
        assert len(closing) == 1, state.id


async def test_quick_rounds_stay_playable(run: Run) -> None:
    assert run.bid_taken == [True] * ROUNDS
    assert all(
        state.phase is Phase.SETTLED or state.void_reason is VoidReason.REDEAL
        for state in run.rounds
    ), [(state.id, state.phase, state.void_reason) for state in run.rounds]

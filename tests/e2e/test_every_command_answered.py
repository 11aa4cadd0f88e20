"""No command goes unanswered, within Telegram's limits; and a new phase notifies.

The bot answers at most ``REPLIES_PER_MINUTE`` commands a minute in a group (its default,
10) and sends a group at most 20 messages a minute: answers past the budget wait for a
slot and go out together, a line per person (``<b>Name</b>: answer``). Ten players send
thirty commands within 20 s; every one is answered, once, visibly (a reply to it, or its
sender's line in a combined message) within a minute, and the group is never sent more
than 20 messages in 60 s. The run waits about a minute for the budget: that is the point.

When betting and when grabbing opens, the board is posted anew (a new message notifies
the group, an edit does not) and the old one is deleted; the new board shows the phase's
whole window as time left.
"""

from __future__ import annotations

import asyncio
import html
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from bot.engine.round import Phase
from bot.engine.settings import Settings
from bot.telegram.views import Views
from tests.e2e.harness import (
    E2E,
    FAST_GAME,
    STEP_SECONDS,
    JsonDict,
    grab_all,
    open_table,
    sliding_max,
    start_round,
    user,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: The bot's default share of a group's messages for replies: thirty commands run it out.
REPLIES_PER_MINUTE = 10
#: Windows long enough to read a new board's time left to the second.
GAME = {**FAST_GAME, "bid_seconds": 5, "bet_seconds": 5, "grab_seconds": 5}
#: Telegram's limit: messages a bot may send to one group in any 60 s.
LIMIT = 20
WINDOW = 60.0

STORM = -1_001_000_000_701
PLAYERS = [
    user(701 + index, name)
    for index, name in enumerate(
        ["Ana", "Ben", "Cai", "Dio", "Eva", "Fu", "Gus", "Hui", "Ivo", "Jia"]
    )
]
#: Commands go out in bursts of three, one burst every two seconds: thirty in 18 s.
BURST = 3
BURST_SECONDS = 2.0

BOARDS = -1_001_000_000_702
ADMIN = user(711, "Ada", "ada_admin")
DEALER = user(712, "Bao", "bao")
BETTOR = user(713, "Chen", "chen")


# -- answers --------------------------------------------------------------------------------

Expect = Callable[[str], bool]


@dataclass
class Asked:
    """A command sent: by whom, its message, when (Unix seconds), and what answers it."""

    who: JsonDict
    text: str
    message_id: int
    at: float
    expect: Expect


@dataclass
class Answer:
    """One answer as the group sees it: a reply to a message (``reply_to``), or a line of
    a combined message led by whom it answers (``name``, as shown: HTML-escaped)."""

    reply_to: int | None
    name: str | None
    text: str
    at: float


NAMED_LINE = re.compile(r"^<b>(.+?)</b>: ")


def answers_in(sends: list[JsonDict], names: set[str]) -> list[Answer]:
    """Every answer in the bot's messages to a group, oldest first. A line of a combined
    message that names nobody continues the answer before it (an answer may have several
    lines, and a combined message too long for one goes out in parts)."""
    answers: list[Answer] = []
    current: Answer | None = None
    for entry in sends:
        if entry["reply_to_message_id"] is not None:
            answers.append(Answer(entry["reply_to_message_id"], None, entry["text"], entry["time"]))
            current = None
            continue
        for line in entry["text"].split("\n"):
            named = NAMED_LINE.match(line)
            if named and named[1] in names:
                current = Answer(None, named[1], line[named.end() :], entry["time"])
                answers.append(current)
            elif current is not None:
                current.text += "\n" + line
    return answers


def answering(asked: Asked, answers: list[Answer]) -> list[Answer]:
    """The answers that answer ``asked``: a reply to it, or its sender's line, saying what
    it should."""
    name = html.escape(asked.who["first_name"])
    return [
        answer
        for answer in answers
        if (answer.reply_to == asked.message_id or answer.name == name)
        and asked.expect(answer.text)
    ]


def equals(expected: str) -> Expect:
    return lambda text: text == expected


def names_token(token: str) -> Expect:
    """An error answer about an amount quotes what was typed."""
    return lambda text: token in text


def commands_of(index: int, views: Views) -> list[tuple[str, Expect]]:
    """Three commands of player ``index``, each answered differently (so that a line of a
    combined message answers one of them only), nobody's answer like anybody else's."""
    name = html.escape(PLAYERS[index]["first_name"])
    balance = views.t("balance.group", name=name, available=0, held=0)
    bad_bet = f"q{index}z"
    third: tuple[str, Expect]
    match index % 5:
        case 0:
            round_id = 9_100 + index
            third = (
                f"/verify {round_id}",
                equals(views.t("error.round_not_found", round_id=round_id)),
            )
        case 1:
            third = ("/history", equals(views.t("history.none")))
        case 2:
            third = ("/bank", equals(views.t("bank.balance", balance=0)))
        case 3:
            third = ("/rules", equals(views.rules()))
        case _:
            bad_bid = f"w{index}k"
            third = (f"/bid {bad_bid}", names_token(bad_bid))
    return [("/balance", equals(balance)), (f"/bet {bad_bet}", names_token(bad_bet)), third]


async def test_thirty_commands_from_ten_players_are_all_answered_within_a_minute(
    e2e: E2E,
) -> None:
    views = Views(await e2e.service.settings(STORM))
    planned = [commands_of(index, views) for index in range(len(PLAYERS))]
    # Every player once, three times over, the kinds of command mixed in every burst.
    queue = [(PLAYERS[i], planned[i][(n + i) % 3]) for n in range(3) for i in range(len(PLAYERS))]
    asked: list[Asked] = []
    for start in range(0, len(queue), BURST):
        if start:
            await asyncio.sleep(BURST_SECONDS)  # the pace of a busy group, not a wait
        for who, (text, expect) in queue[start : start + BURST]:
            update = e2e.say(STORM, who, text)
            asked.append(Asked(who, text, update["message"]["message_id"], time.time(), expect))
    assert len(asked) == 30

    names = {html.escape(p["first_name"]) for p in PLAYERS}

    def unanswered() -> list[Asked]:
        answers = answers_in(e2e.sends(STORM), names)
        return [one for one in asked if not answering(one, answers)]

    patience = asked[-1].at + WINDOW + STEP_SECONDS - time.time()
    try:
        await e2e.fake.wait_for(lambda: not unanswered(), timeout=patience)
    except TimeoutError:
        missing = [(one.who["first_name"], one.text) for one in unanswered()]
        sent = "\n".join(f"{e['time']:.1f} {e['text'][:80]!r}" for e in e2e.sends(STORM))
        raise AssertionError(f"unanswered: {missing}\nthe group got:\n{sent}") from None

    sends = e2e.sends(STORM)
    answers = answers_in(sends, names)
    for one in asked:
        (answer,) = answering(one, answers)  # answered once, not twice
        late = answer.at - one.at
        assert late <= WINDOW, (one.who["first_name"], one.text, f"answered after {late:.1f} s")
    # Nothing but the answers was sent, and the budget did run out: some were combined.
    assert len(answers) == len(asked)
    assert any(answer.name is not None for answer in answers)
    most = sliding_max([entry["time"] for entry in sends])
    assert most <= LIMIT, f"{most} messages within 60 s"


# -- a new phase, a new board ---------------------------------------------------------------


def board_send(e2e: E2E, chat_id: int, round_id: int, action: str) -> JsonDict | None:
    """The message the bot sent (not edited into) with the round's ``action`` buttons."""
    prefix = f"{round_id}:{action}:"
    for entry in e2e.sends(chat_id):
        for row in (entry["reply_markup"] or {}).get("inline_keyboard", []):
            if any(button.get("callback_data", "").startswith(prefix) for button in row):
                return entry
    return None


def seconds_left(views: Views, phase: Phase, board: str) -> int:
    """The time left a board's phase line shows (read with the catalogue's own line)."""
    line = views.t(f"board.phase.{phase.value}", seconds=999_999)
    before, after = line.split("999999")
    found = re.search(re.escape(before) + r"(\d+)" + re.escape(after), board)
    assert found, (line, board)
    return int(found[1])


async def reposted(e2e: E2E, round_id: int, action: str, old: int, window: int) -> JsonDict:
    """Wait for the round's board with ``action`` buttons, sent as a new message once the
    current phase's ``window`` is over, and for the ``old`` board's deletion; the new
    board's first view (as sent)."""
    board = await e2e.fake.wait_for(
        lambda: board_send(e2e, BOARDS, round_id, action), timeout=window + STEP_SECONDS
    )
    assert board is not None and board["message_id"] != old

    def old_deleted() -> list[tuple[str, int]] | None:
        order = [(entry["kind"], entry["message_id"]) for entry in e2e.fake.transcript(BOARDS)]
        return order if ("delete", old) in order else None

    order = await e2e.fake.wait_for(old_deleted, timeout=STEP_SECONDS)
    assert order is not None
    # The new board goes out first, then the old one goes.
    assert order.index(("send", board["message_id"])) < order.index(("delete", old))
    assert old not in e2e.fake.messages(BOARDS)
    return board


async def test_betting_and_grabbing_open_on_a_new_board_showing_their_whole_window(
    e2e: E2E,
) -> None:
    await open_table(e2e, BOARDS, ADMIN, [DEALER, BETTOR])
    settings: Settings = await e2e.service.settings(BOARDS)
    views = Views(settings)
    state = await start_round(e2e, BOARDS, DEALER)
    bidding = board_send(e2e, BOARDS, state.id, "bid")
    assert bidding is not None

    e2e.say(BOARDS, DEALER, f"/bid {settings.min_bid // 100}")
    betting = await reposted(e2e, state.id, "bet", bidding["message_id"], settings.bid_seconds)
    left = seconds_left(views, Phase.BETTING, betting["plain_text"])
    assert abs(left - settings.bet_seconds) <= 1, (left, settings.bet_seconds)

    e2e.say(BOARDS, BETTOR, f"/bet {settings.min_bet // 100}")
    grabbing = await reposted(e2e, state.id, "grab", betting["message_id"], settings.bet_seconds)
    left = seconds_left(views, Phase.GRABBING, grabbing["plain_text"])
    assert abs(left - settings.grab_seconds) <= 1, (left, settings.grab_seconds)
    assert await e2e.service.board_message(state.id) == grabbing["message_id"]

    # The round plays on from the new board: both grab with its button.
    await grab_all(e2e, BOARDS, state, [BETTOR, DEALER])
    ended = await e2e.wait_ended(state.id)
    assert {grab.user_id for grab in ended.grabs if not grab.auto} == {BETTOR["id"], DEALER["id"]}

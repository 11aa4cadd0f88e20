"""Groups playing through Telegram's bad moments, and what the group saw of it.

``tests/e2e/test_faults.py`` and ``bench/bench_faults.py`` play the same scenario: tables
of 68 NiuNiu (and card tables) where a dealer bids, bettors bet by command and by button,
someone asks ``/balance`` and everyone grabs on the board, while the fake Telegram injects
a ``FaultMix`` and, once, an outage. The players act on what the group sees, as people
do (``tests/e2e/test_message_rate.py`` too): a board's buttons, in the fake's state of
the group's messages; a round whose board a group's minute held back until it was over
goes by without them. What the group saw is read afterwards from the fake's transcript,
state and toasts (:func:`audit`):

- a command without a visible answer: no reply to it, no line of a combined answer led by
  its sender, no toast (nor, for a toast Telegram did not take, its line in the group); a
  stake the bot took without confirming it is answered by a board listing it, or by the
  round's results naming its player
  (``Replies.confirm`` in bot/telegram/replies.py);
- a phase never shown: no board of the round showing that phase, unless it was the
  round's last and the results show how it ended;
- an ended round whose board still has live buttons (the fake's message state);
- results lost: an ended round with no message revealing its seed.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from bot.engine.round import MINT, Phase, Posting, Round, VoidReason, available
from bot.money import parse_amount
from bot.rules.ruleset import get_ruleset
from bot.service.game import Person, wall_clock_ms
from bot.store.ledger import Ledger
from bot.store.models import RoundRow
from tests.e2e.harness import E2E, JsonDict, Texts, plain_text, shown, user

#: How often a player looks at the round's phase (in the bot's database).
POLL_SECONDS = 0.1
#: How long a table without an open round waits, past its pause, before ``/newround``:
#: a settled round's next one starts by itself; a void one's does not.
IDLE_SECONDS = 2.0
#: What each player is credited: enough for every round of a long run.
CREDIT = "10000"
#: Callback actions of a live board (``Views.keyboard``); "again" is the results'.
BOARD_ACTIONS = ("bid", "bet", "cancel", "grab")
NAMED_LINE = re.compile(r"^<b>(.+?)</b>: ")


@dataclass(frozen=True)
class Table:
    """A group, its admin and players: the first player deals, the others bet."""

    chat_id: int
    admin: JsonDict
    players: tuple[JsonDict, ...]
    ruleset: str = "envelope68"

    @property
    def dealer(self) -> JsonDict:
        return self.players[0]

    @property
    def bettors(self) -> tuple[JsonDict, ...]:
        return self.players[1:]


def tables(groups: int, players: int, *, card_tables: int = 0, first_id: int = 0) -> list[Table]:
    """``groups`` tables of ``players`` each, the last ``card_tables`` of them Bull Bull;
    ids from ``first_id`` on keep apart from other tests' groups and users."""
    found = []
    for group in range(groups):
        base = first_id + 100 * group
        found.append(
            Table(
                chat_id=-1_001_000_000_000 - base,
                admin=user(base, f"Admin{group}", f"admin{group}"),
                players=tuple(user(base + 1 + i, f"G{group}P{i}") for i in range(players)),
                ruleset="bullbull" if group >= groups - card_tables else "envelope68",
            )
        )
    return found


async def open_tables(e2e: E2E, chosen: Iterable[Table]) -> None:
    """Open every table, set its game and credit its players through the service, as
    ``bench/bench_real_groups.py`` does: the groups' minutes of messages are all the
    play's (``tests/e2e/test_full_round.py`` checks opening and crediting by command)."""
    for table in chosen:
        admin = Person(table.admin["id"], table.admin["first_name"])
        e2e.fake.set_chat_member(table.chat_id, table.admin["id"], "administrator")
        await e2e.service.set_open(table.chat_id, admin, True)
        if table.ruleset != "envelope68":
            await e2e.service.change_setting(table.chat_id, admin, "ruleset", table.ruleset)
        credit = parse_amount(CREDIT)
        async with e2e.database.transaction() as session:
            await Ledger(session).post(
                chat_id=table.chat_id,
                kind="credit",
                postings=[Posting(MINT, -credit * len(table.players))]
                + [Posting(available(who["id"]), credit) for who in table.players],
                now_ms=wall_clock_ms(),
                actor_id=admin.id,
                memo="credit",
            )


# -- playing ------------------------------------------------------------------------------


@dataclass
class Asked:
    """A command or a button press: who, what (``kind``: bid, bet, balance, or a press of
    ``press-bid``, ``press-bet``, ``press-grab``), in which round, for how much (cents),
    when (Unix seconds), and its update."""

    chat_id: int
    who: JsonDict
    kind: str
    round_id: int | None
    amount: int
    at: float
    update: JsonDict

    @property
    def is_press(self) -> bool:
        return "callback_query" in self.update

    @property
    def message_id(self) -> int:
        return int(self.update["message"]["message_id"])

    @property
    def query_id(self) -> str:
        return str(self.update["callback_query"]["id"])


@dataclass
class Play:
    """Everything the players did."""

    asked: list[Asked] = field(default_factory=list)
    #: Every ``/newround`` sent (not counted as a command: the board answers it).
    new_rounds: int = 0


class Players:
    """The players of every table: each acts once on each phase of each round it sees."""

    def __init__(self, e2e: E2E, chosen: list[Table], *, seed: int) -> None:
        self.e2e = e2e
        self.tables = chosen
        self.play = Play()
        self.random = random.Random(seed)
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self, seconds: float) -> None:
        """Play every table for ``seconds``; then close the tables (a running round
        finishes) and wait for what the players were doing."""
        until = time.monotonic() + seconds
        await asyncio.gather(*(self._table(table, until) for table in self.tables))
        for table in self.tables:
            self.e2e.say(table.chat_id, table.admin, "/close")
        if self._tasks:
            await asyncio.gather(*self._tasks)

    def _ask(
        self, table: Table, who: JsonDict, kind: str, text: str, round_id: int | None, amount: int
    ) -> None:
        update = self.e2e.say(table.chat_id, who, text)
        self.play.asked.append(
            Asked(table.chat_id, who, kind, round_id, amount, time.time(), update)
        )

    def _press(self, table: Table, who: JsonDict, kind: str, message_id: int, data: str) -> None:
        round_id, _action, amount = data.split(":")
        update = self.e2e.press(table.chat_id, message_id, who, data)
        self.play.asked.append(
            Asked(table.chat_id, who, kind, int(round_id), int(amount), time.time(), update)
        )

    async def _table(self, table: Table, until: float) -> None:
        acted: set[tuple[int, str]] = set()
        pause = (await self.e2e.service.settings(table.chat_id)).pause_seconds
        idle_since = time.monotonic()
        self.e2e.say(table.chat_id, table.dealer, "/newround")
        self.play.new_rounds += 1
        while time.monotonic() < until:
            boards = live_boards(self.e2e.fake.messages(table.chat_id))
            now = time.monotonic()
            for (round_id, action), (message_id, data) in boards.items():
                if (round_id, action) not in acted:
                    acted.add((round_id, action))
                    self._spawn(self._act(table, round_id, action, message_id, data))
            if boards:
                idle_since = now
            elif now - idle_since > pause + IDLE_SECONDS:
                idle_since = now
                if await self.e2e.current_round(table.chat_id) is None:
                    self.e2e.say(table.chat_id, table.dealer, "/newround")
                    self.play.new_rounds += 1
            await asyncio.sleep(POLL_SECONDS)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _act(
        self, table: Table, round_id: int, action: str, message_id: int, data: str
    ) -> None:
        """What the players do when the group sees a board with ``action`` buttons (the
        first one's callback ``data``): as people do, they act on what they see."""
        if action == "bid":
            least = int(data.rsplit(":", 1)[1])
            if round_id % 2:
                self._press(table, table.dealer, "press-bid", message_id, data)
            else:
                self._ask(table, table.dealer, "bid", f"/bid {least // 100}", round_id, least)
        elif action == "bet":
            await self._bet(table, round_id, message_id, data)
        elif action == "grab":
            state = await self.e2e.service.round(round_id)
            for who in table.players:
                if state is not None and who["id"] in state.participants:
                    self._press(table, who, "press-grab", message_id, data)

    async def _bet(self, table: Table, round_id: int, message_id: int, quick: str) -> None:
        asker = self.random.randrange(len(table.bettors))
        order = list(enumerate(table.bettors))
        self.random.shuffle(order)
        for index, bettor in order:
            await asyncio.sleep(self.random.uniform(0, 0.3))
            if index == 0 and round_id % 2:
                self._press(table, bettor, "press-bet", message_id, quick)
            else:
                stake = 100 * (index + 1)
                self._ask(table, bettor, "bet", f"/bet {stake // 100}", round_id, stake)
            if index == asker:
                self._ask(table, bettor, "balance", "/balance", None, 0)


def live_boards(messages: dict[int, JsonDict]) -> dict[tuple[int, str], tuple[int, str]]:
    """The boards a group sees with live buttons: (round id, action) -> (the message, the
    callback data of its first button with that action)."""
    found: dict[tuple[int, str], tuple[int, str]] = {}
    for message_id, state in sorted(messages.items()):
        rows = (state.get("reply_markup") or {}).get("inline_keyboard", [])
        for button in (b for row in rows for b in row):
            data = str(button.get("callback_data", ""))
            round_id, _, rest = data.partition(":")
            action = rest.split(":")[0]
            if action in ("bid", "bet", "grab") and round_id.isdigit():
                found.setdefault((int(round_id), action), (message_id, data))
    return found


# -- what the group saw ----------------------------------------------------------------


@dataclass
class Figures:
    """What went wrong, as the group sees it (each zero when nothing did)."""

    commands: int
    rounds: int
    unanswered: list[Asked]
    phases_unshown: list[tuple[int, Phase]]
    live_after_end: list[tuple[int, int]]
    results_lost: list[int]
    still_open: list[int]
    #: Phases never shown on a board that the results showed instead (not a failure).
    shown_by_results: int = 0
    #: Answers in the groups that answered none of the commands (led by a player's name).
    stray_answers: int = 0
    #: What each message with live buttons went through, and the stray answers' lines:
    #: to tell what left them.
    live_histories: list[str] = field(default_factory=list)
    stray_lines: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (
            self.unanswered
            or self.phases_unshown
            or self.live_after_end
            or self.results_lost
            or self.still_open
        )

    def line(self) -> str:
        return (
            f"{self.commands} commands, {self.rounds} rounds: "
            f"{len(self.unanswered)} without a visible answer, "
            f"{len(self.phases_unshown)} phase boards never shown "
            f"({self.shown_by_results} last phases shown by the results), "
            f"{len(self.live_after_end)} ended rounds with live buttons, "
            f"{len(self.results_lost)} results lost, {len(self.still_open)} rounds still open, "
            f"{self.stray_answers} stray answers"
        )

    def details(self) -> str:
        asked = [
            (a.chat_id, a.who["first_name"], a.kind, a.round_id, round(a.at, 1))
            for a in self.unanswered
        ]
        return (
            f"unanswered: {asked[:20]}\nphases never shown: {self.phases_unshown[:20]}\n"
            f"live buttons (round, message): {self.live_after_end[:20]}\n"
            f"results lost: {self.results_lost[:20]}\nstill open: {self.still_open[:20]}\n"
            + "".join(f"  live: {history}\n" for history in self.live_histories[:10])
            + "".join(f"  stray: {line}\n" for line in self.stray_lines[:10])
        )


def reached(state: Round) -> list[Phase]:
    """The open phases an ended round went through."""
    grabs = get_ruleset(state.settings.ruleset).uses_grabs
    full = [Phase.BIDDING, Phase.BETTING] + ([Phase.GRABBING] if grabs else [])
    if state.phase is Phase.SETTLED or state.void_reason is VoidReason.REDEAL:
        return full
    if state.void_reason is VoidReason.NO_BETS:
        return full[:2]
    return full[:1]


@dataclass
class _Line:
    """A line of a combined answer: whom it names (as shown), what it says, when."""

    name: str
    text: str
    at: float
    used: bool = False


def _named_lines(sends: list[JsonDict]) -> list[_Line]:
    lines = []
    for entry in sends:
        if entry["reply_to_message_id"] is not None:
            continue
        for line in (entry["text"] or "").split("\n"):
            named = NAMED_LINE.match(line)
            if named:
                lines.append(_Line(named[1], plain_text(line[named.end() :]), entry["time"]))
    return lines


def _answer_kinds(texts: Texts, who: JsonDict, text: str) -> tuple[str, ...] | None:
    """The kinds of command a line of a combined answer may answer; None: any refused one."""
    if texts.match(text, "balance.group", name=shown(who)) is not None:
        return ("balance",)
    if texts.match(text, "answer.bid_placed") is not None:
        return ("bid", "press-bid")
    if any(
        texts.match(text, key) is not None for key in ("answer.bet_placed", "answer.bet_changed")
    ):
        return ("bet", "press-bet")
    if texts.match(text, "answer.grabbed") is not None:
        return ("press-grab",)
    return None


def _stake_taken(asked: Asked, state: Round | None) -> bool:
    """Whether the round holds the stake ``asked`` placed (each player stakes once a round)."""
    if state is None:
        return False
    if asked.kind in ("bid", "press-bid"):
        return asked.who["id"] in (state.dealer_id, state.high_bidder)
    if asked.kind in ("bet", "press-bet"):
        return any(b.user_id == asked.who["id"] and b.amount == asked.amount for b in state.bets)
    return False


def _board_lists(texts: Texts, boards: list[str], asked: Asked, state: Round) -> bool:
    """Whether a board of the round showed the group the stake ``asked`` placed."""
    name = shown(asked.who)
    if asked.kind in ("bid", "press-bid"):
        wanted = [texts.message("board.dealer", name=name, pool=asked.amount)]
        pattern = texts.pattern("board.high_bid", bid=asked.amount, name=name)
        return any(
            line in wanted or re.fullmatch(pattern, line)
            for board in boards
            for line in board.split("\n")
        )
    line = texts.message("board.bet_line", name=name, stake=asked.amount)
    return any(line in board.split("\n") for board in boards)


def _results_name(results: list[str], asked: Asked) -> bool:
    """Whether the round's results show the group the stake ``asked`` placed: a line of
    theirs, as a player of the round (a stake taken in the window's last moment, too late
    for a board's edit, is answered there)."""
    name = shown(asked.who)
    return any(line.startswith(f"{name}: ") for text in results for line in text.split("\n"))


def _board_phase(texts: Texts, text: str, round_id: int, game: str) -> Phase | None:
    """The phase a board of the round shows, if ``text`` is one."""
    lines = text.split("\n")
    if len(lines) < 2 or lines[0] != texts.message("board.title", round_id=round_id, game=game):
        return None
    for phase in Phase:
        if texts.match(lines[1], f"board.phase.{phase.value}") is not None:
            return phase
    return None


async def rounds_of(e2e: E2E, chat_ids: Iterable[int]) -> list[Round]:
    """Every round the groups played, oldest first."""
    async with e2e.database.transaction() as session:
        ids = (
            await session.scalars(
                select(RoundRow.id)
                .where(RoundRow.chat_id.in_(list(chat_ids)))
                .order_by(RoundRow.id)
            )
        ).all()
    found = [await e2e.service.round(round_id) for round_id in ids]
    return [state for state in found if state is not None]


async def audit(e2e: E2E, chosen: list[Table], play: Play) -> Figures:
    """What the groups saw of the play (see the module)."""
    texts = Texts()  # the tables speak English
    rounds = await rounds_of(e2e, [table.chat_id for table in chosen])
    by_id = {state.id: state for state in rounds}
    toasts = {answer["callback_query_id"] for answer in e2e.fake.callback_answers}
    unanswered: list[Asked] = []
    phases_unshown: list[tuple[int, Phase]] = []
    live: list[tuple[int, int]] = []
    lost: list[int] = []
    by_results = stray = 0
    live_histories: list[str] = []
    stray_lines: list[str] = []
    for table in chosen:
        chat = table.chat_id
        sends = e2e.sends(chat)
        shown_entries = [e for e in e2e.fake.transcript(chat) if e["kind"] != "delete"]
        replied = {entry["reply_to_message_id"] for entry in sends}
        lines = _named_lines(sends)
        mine = [a for a in play.asked if a.chat_id == chat]
        left = [
            a for a in mine if not (a.query_id in toasts if a.is_press else a.message_id in replied)
        ]
        # A line answers its sender's oldest command still unanswered that it can answer.
        for line in lines:
            for asked in left:
                if asked.at > line.at or shown(asked.who) != line.name:
                    continue
                kinds = _answer_kinds(texts, asked.who, line.text)
                fits = (
                    asked.kind in kinds
                    if kinds is not None
                    else not _stake_taken(asked, by_id.get(asked.round_id or 0))
                )
                if fits:
                    line.used = True
                    left.remove(asked)
                    break
        stray += sum(not line.used for line in lines)
        stray_lines += [f"{chat} {line.name}: {line.text}" for line in lines if not line.used]
        state_messages = e2e.fake.messages(chat)
        for state in (s for s in rounds if s.chat_id == chat):
            game = texts.html(f"game.{get_ruleset(state.settings.ruleset).name}")
            boards = [
                str(e["plain_text"])
                for e in shown_entries
                if _board_phase(texts, str(e["plain_text"] or ""), state.id, game) is not None
            ]
            seed = texts.message("results.seed", seed=state.seed.hex(), round_id=state.id)
            settled_in = [str(e["plain_text"]) for e in sends if seed in (e["plain_text"] or "")]
            for asked in [a for a in left if a.round_id == state.id]:
                if _stake_taken(asked, state) and (
                    _board_lists(texts, boards, asked, state) or _results_name(settled_in, asked)
                ):
                    left.remove(asked)
            if state.phase.is_open:
                continue
            results = bool(settled_in)
            if not results:
                lost.append(state.id)
            phases = {_board_phase(texts, board, state.id, game) for board in boards}
            route = reached(state)
            for phase in route:
                if phase in phases:
                    continue
                if phase is route[-1] and results:
                    by_results += 1
                else:
                    phases_unshown.append((state.id, phase))
            for message_id, message in state_messages.items():
                rows = (message.get("reply_markup") or {}).get("inline_keyboard", [])
                for button in (b for row in rows for b in row):
                    rid, _, rest = str(button.get("callback_data", "")).partition(":")
                    if rid == str(state.id) and rest.split(":")[0] in BOARD_ACTIONS:
                        live.append((state.id, message_id))
                        live_histories.append(
                            _history(e2e, chat, state.id, message_id, shown_entries)
                        )
                        break
        unanswered.extend(left)
    return Figures(
        commands=len(play.asked),
        rounds=len(rounds),
        unanswered=unanswered,
        phases_unshown=phases_unshown,
        live_after_end=sorted(set(live)),
        results_lost=lost,
        still_open=[state.id for state in rounds if state.phase.is_open],
        shown_by_results=by_results,
        stray_answers=stray,
        live_histories=live_histories,
        stray_lines=stray_lines,
    )


def _history(e2e: E2E, chat: int, round_id: int, message_id: int, entries: list[JsonDict]) -> str:
    """A message with live buttons: what happened to it, when, and what it shows now."""
    steps = [
        f"{entry['kind']}@{float(entry['time']):.1f}"
        for entry in e2e.fake.transcript(chat)
        if entry.get("message_id") == message_id
    ]
    first = str(e2e.fake.messages(chat)[message_id].get("text") or "").split("\n")[:2]
    return f"round {round_id}, message {message_id} ({' / '.join(first)}): {', '.join(steps)}"


async def settle_down(
    e2e: E2E, chosen: list[Table], play: Play, *, timeout: float, interval: float = 1.0
) -> Figures:
    """Audit until nothing is missing any more or ``timeout`` passes: answers that waited
    for a slot of the group's minute, results and closing edits tried again, go out late,
    not never. The last audit."""
    deadline = time.monotonic() + timeout
    while True:
        figures = await audit(e2e, chosen, play)
        if figures.clean or time.monotonic() >= deadline:
            return figures
        await asyncio.sleep(interval)


# -- recovering from an outage -----------------------------------------------------------


@dataclass
class Recovery:
    """How soon after an outage's end a command was answered and a round moved on."""

    answered_after: float | None
    moved_after: float | None


async def probe_answer(e2e: E2E, chat_id: int, who: JsonDict, timeout: float) -> float | None:
    """``who`` asks ``/balance`` in a quiet group now; seconds until the reply, or None."""
    asked = time.time()
    update = e2e.say(chat_id, who, "/balance")
    message_id = update["message"]["message_id"]
    try:
        entry = await e2e.fake.wait_for(lambda: e2e.reply_of(chat_id, message_id), timeout=timeout)
    except TimeoutError:
        return None
    return None if entry is None else float(entry["time"]) - asked


def first_move_after(e2e: E2E, chosen: list[Table], since: float) -> float | None:
    """Seconds from ``since`` (Unix) to the first time a group saw a round move on: a board
    showing a phase, or results, that it had not seen before ``since``."""
    texts = Texts()
    seed = re.compile(texts.pattern("results.seed"))
    title = re.compile(texts.pattern("board.title"))
    phase_of = {phase: re.compile(texts.pattern(f"board.phase.{phase.value}")) for phase in Phase}
    earliest: float | None = None
    for table in chosen:
        seen: set[tuple[int, str]] = set()
        for entry in e2e.fake.transcript(table.chat_id):
            if entry["kind"] == "delete":
                continue
            text = str(entry["plain_text"] or "")
            what: tuple[int, str] | None = None
            found = seed.search(text)
            if found:
                what = (int(found["round_id"]), "results")
            else:
                lines = text.split("\n")
                head = title.fullmatch(lines[0])
                if head and len(lines) > 1:
                    for phase, pattern in phase_of.items():
                        if pattern.fullmatch(lines[1]):
                            what = (int(head["round_id"]), phase.value)
            if what is None or what in seen:
                continue
            seen.add(what)
            at = float(entry["time"])
            if at >= since and (earliest is None or at < earliest):
                earliest = at
    return None if earliest is None else earliest - since


def faults_by_kind(e2e: E2E) -> dict[str, int]:
    """The faults the fake injected, by kind."""
    return {kind: sum(methods.values()) for kind, methods in e2e.fake.faults_injected.items()}


def kinds_asked(play: Play) -> dict[str, int]:
    return dict(Counter(asked.kind for asked in play.asked))

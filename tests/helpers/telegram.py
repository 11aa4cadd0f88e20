"""Fakes for unit tests of the shell's collaborators: a ``Bot`` that records what it was
asked and can refuse, a service that implements the protocols of what the collaborators
need of it (``bot.telegram.service_needs``; real ``Round`` and ``Settings`` objects in and
out), timers whose jobs the test runs
by hand, clocks the test moves, and Telegram updates.

The e2e tests have the fake Bot API server (``bot.fakegram``); these fakes stand in for
the objects one layer further in, so that each collaborator is tested on its own, fast.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from telegram import (
    CallbackQuery,
    Chat,
    ChatMember,
    InlineKeyboardMarkup,
    Message,
    MessageEntity,
    Update,
    User,
)
from telegram.error import TelegramError

from bot.engine import round as engine
from bot.engine.errors import NotDue
from bot.engine.round import Phase, Round, RoundSettled, RoundVoided, VoidReason
from bot.engine.settings import Settings
from bot.priority import is_urgent
from bot.service.deliveries import DELIVERY_LEASE_MS, BoardClaim
from bot.service.game import CommandResult, Person, RoundOnBoard
from bot.telegram.retries import Retrying
from bot.telegram.service_needs import (
    BoardService,
    ChatNotes,
    NamesSource,
    ProgressService,
    SettingsSource,
)
from bot.telegram.telegram_needs import BotApi, Timer, TimerCallback, Timers

GROUP = -1001
#: Tries again at once and gives up soon: what a failure on the way does, in no time.
FAST_RETRIES = Retrying(give_up_after=0.2, first_wait=0.01, longest_wait=0.05)
OTHER_GROUP = -1002
T0_MS = 1_800_000_000_000

#: Small numbers, as in the store tests: bids from 10.00, bets 1.00-50.00.
SETTINGS = Settings(
    bid_seconds=18,
    bet_seconds=40,
    grab_seconds=20,
    pause_seconds=5,
    min_bid=1_000,
    bid_increment=1_000,
    min_bet=100,
    max_bet=5_000,
)


class Deliveries:
    """A ``DeliveryObserver`` that keeps what it is told."""

    def __init__(self) -> None:
        self.retried: list[tuple[str, str]] = []
        self.failed: list[tuple[str, str]] = []

    def delivery_retried(self, message: str, failure: str) -> None:
        self.retried.append((message, failure))

    def delivery_failed(self, message: str, failure: str) -> None:
        self.failed.append((message, failure))


# -- the Bot ------------------------------------------------------------------------------


@dataclass
class Call:
    """One call to the fake Bot: the method, its arguments by name, and the error it
    raised (``None``: Telegram took it)."""

    method: str
    args: dict[str, Any]
    error: TelegramError | None = None


class FakeBot(BotApi):
    """The ``Bot`` methods the shell calls (``BotApi``), recording each call.

    ``fail_next(error)`` makes the next call (of ``method``, if given; past ``skip`` such
    calls) raise ``error``;
    ``hold()`` makes ``send_message`` wait until ``release()``. Message ids count up per
    chat from 1, as Telegram's do.
    """

    def __init__(self) -> None:
        self.calls: list[Call] = []
        #: ``getChatMember`` answers: (chat, user) -> status (default ``member``).
        self.statuses: dict[tuple[int, int], str] = {}
        #: [method or None for any, matching calls to let through first, error]
        self._failures: list[list[Any]] = []
        #: method (None: any) -> the error every call of it raises, until ``recover``.
        self._down: dict[str | None, TelegramError] = {}
        self._message_ids: dict[int, itertools.count[int]] = {}
        self._gate: asyncio.Event | None = None

    # -- test controls --

    def sent_before(self, count: int, chat_id: int = GROUP) -> None:
        """``count`` messages came in the chat before (the next one sent has the next id),
        none the bot knows of."""
        self._message_ids[chat_id] = itertools.count(count + 1)

    def fail_next(self, error: TelegramError, method: str | None = None, *, skip: int = 0) -> None:
        """Raise ``error`` on the next call (of ``method`` only, if given), or on the one
        after ``skip`` more such calls went through."""
        self._failures.append([method, skip, error])

    def fail_always(self, error: TelegramError, method: str | None = None) -> None:
        """Raise ``error`` on every call (of ``method`` only, if given) until ``recover``."""
        self._down[method] = error

    def recover(self) -> None:
        """Stop ``fail_always``'s failures."""
        self._down.clear()

    def hold(self) -> None:
        """Make ``send_message`` wait (as behind Telegram's rate limit) until ``release``."""
        self._gate = asyncio.Event()

    def release(self) -> None:
        """Let held and later ``send_message`` calls through."""
        if self._gate is not None:
            self._gate.set()
        self._gate = None

    def of(self, method: str) -> list[Call]:
        """The calls of ``method`` that Telegram took, oldest first."""
        return [call for call in self.calls if call.method == method and call.error is None]

    @property
    def texts(self) -> list[str]:
        """The texts of the messages sent, oldest first."""
        return [call.args["text"] for call in self.of("send_message")]

    def _call(self, method: str, **args: Any) -> None:
        call = Call(method, args)
        self.calls.append(call)
        down = self._down.get(method) or self._down.get(None)
        if down is not None:
            call.error = down
            raise down
        for index, failure in enumerate(self._failures):
            failing, skip, error = failure
            if failing is not None and failing != method:
                continue
            if skip:
                failure[1] -= 1
                return
            del self._failures[index]
            call.error = error
            raise error

    # -- the Bot API --

    async def send_message(
        self,
        chat_id: int,
        text: str,
        parse_mode: str | None = None,
        reply_markup: InlineKeyboardMarkup | None = None,
        reply_to_message_id: int | None = None,
        allow_sending_without_reply: bool | None = None,
    ) -> Message:
        if self._gate is not None:
            await self._gate.wait()
        self._call(
            "send_message",
            chat_id=chat_id,
            text=text,
            parse_mode=parse_mode,
            reply_markup=reply_markup,
            reply_to_message_id=reply_to_message_id,
            allow_sending_without_reply=allow_sending_without_reply,
        )
        counter = self._message_ids.setdefault(chat_id, itertools.count(1))
        return Message(next(counter), datetime.now(UTC), _chat(chat_id), text=text)

    async def edit_message_reply_markup(
        self,
        chat_id: int,
        message_id: int,
        reply_markup: InlineKeyboardMarkup | None = None,
    ) -> bool:
        self._call(
            "edit_message_reply_markup",
            chat_id=chat_id,
            message_id=message_id,
            reply_markup=reply_markup,
        )
        return True

    async def edit_message_text(
        self,
        text: str,
        chat_id: int | None = None,
        message_id: int | None = None,
        parse_mode: str | None = None,
        reply_markup: InlineKeyboardMarkup | None = None,
    ) -> bool:
        self._call(
            "edit_message_text",
            text=text,
            chat_id=chat_id,
            message_id=message_id,
            parse_mode=parse_mode,
            reply_markup=reply_markup,
        )
        return True

    async def send_photo(
        self,
        chat_id: int,
        photo: Any,
        caption: str | None = None,
        parse_mode: str | None = None,
        reply_markup: Any = None,
    ) -> Message:
        return self._media("send_photo", chat_id, photo, caption, parse_mode, reply_markup)

    async def send_animation(
        self,
        chat_id: int,
        animation: Any,
        caption: str | None = None,
        parse_mode: str | None = None,
        reply_markup: Any = None,
    ) -> Message:
        return self._media("send_animation", chat_id, animation, caption, parse_mode, reply_markup)

    def _media(
        self,
        method: str,
        chat_id: int,
        upload: Any,
        caption: str | None,
        parse_mode: str | None,
        reply_markup: Any,
    ) -> Message:
        """A photo or an animation: recorded with the uploaded bytes (``data``)."""
        self._call(
            method,
            chat_id=chat_id,
            data=upload.input_file_content,
            caption=caption,
            parse_mode=parse_mode,
            reply_markup=reply_markup,
        )
        counter = self._message_ids.setdefault(chat_id, itertools.count(1))
        return Message(next(counter), datetime.now(UTC), _chat(chat_id), caption=caption)

    async def delete_message(self, chat_id: int, message_id: int) -> bool:
        self._call("delete_message", chat_id=chat_id, message_id=message_id)
        return True

    async def answer_callback_query(self, callback_query_id: str, text: str | None = None) -> bool:
        self._call("answer_callback_query", callback_query_id=callback_query_id, text=text)
        return True

    async def get_chat_member(self, chat_id: int, user_id: int) -> ChatMember:
        self._call("get_chat_member", chat_id=chat_id, user_id=user_id)
        status = self.statuses.get((chat_id, user_id), ChatMember.MEMBER)
        return ChatMember(User(user_id, f"user{user_id}", False), status)

    async def set_my_commands(
        self, commands: Sequence[Any], scope: Any = None, language_code: str | None = None
    ) -> bool:
        self._call(
            "set_my_commands", commands=list(commands), scope=scope, language_code=language_code
        )
        return True


# -- the service --------------------------------------------------------------------------


@dataclass
class ServiceCall:
    """A call to the fake service: its name, arguments, and whether it ran as urgent."""

    name: str
    args: tuple[Any, ...]
    urgent: bool


Ended = RoundSettled | RoundVoided


class FakeService(BoardService, ProgressService, SettingsSource, NamesSource, ChatNotes):
    """What the shell's collaborators need of the service (each protocol of
    ``bot.telegram.service_needs``), over dictionaries.

    Deliveries behave like the store's leases without time: a board or results can be
    claimed once until they are recorded as sent; renewing says whether they still are to
    be sent. What commands and deadlines do is set by the test (``advance_results``...).
    """

    def __init__(self) -> None:
        self.calls: list[ServiceCall] = []
        self.rounds: dict[int, Round] = {}
        self.board_messages: dict[int, int] = {}
        self.board_claims: set[int] = set()
        #: Per round, what a worker that took its board's job before knew (a takeover).
        self.claimed_before: dict[int, int] = {}
        self.announced: set[int] = set()
        self.announcement_claims: set[int] = set()
        self.unannounced_rounds: list[tuple[Round, Ended]] = []
        self.unposted: list[tuple[int, int]] = []
        self.chat_settings: dict[int, Settings] = {}
        self.people: dict[int, Person] = {}
        self.advance_results: dict[int, CommandResult] = {}
        self.start_results: dict[int, CommandResult] = {}
        self.due: list[tuple[int, int]] = []
        self.due_chats: list[int] = []
        self.open: list[Round] = []
        self.old_updates = 0
        #: Rounds whose board's last edit was recorded, and those the sweep should find.
        self.closed: set[int] = set()
        self.unclosed: set[int] = set()
        #: Board messages a new phase's replaced, not yet taken down: round -> message.
        self.replaced: dict[int, int] = {}
        #: Rounds whose deadline waits for a board to show their phase.
        self.unseen: set[int] = set()
        #: The phase each ``advance`` was limited to (None: whichever is due).
        self.advanced_phases: list[Phase | None] = []
        #: The phase each round's board was recorded showing.
        self.board_phases: dict[int, Phase | None] = {}
        #: Awaited inside ``advance`` and ``unannounced`` (to hold them, or fail).
        self.on_advance: Callable[[int], Awaitable[None]] | None = None
        self.on_redeliver_lookup: Callable[[], Awaitable[None]] | None = None
        #: What ``place_due_autobets`` raises (once), if anything.
        self.autobet_failure: Exception | None = None

    def _note(self, name: str, *args: Any) -> None:
        self.calls.append(ServiceCall(name, args, is_urgent()))

    def called(self, name: str) -> list[ServiceCall]:
        """The calls of ``name``, oldest first."""
        return [call for call in self.calls if call.name == name]

    def put(self, state: Round) -> None:
        """Make ``state`` the round as the database has it now."""
        self.rounds[state.id] = state

    # -- reading --

    async def round(self, round_id: int) -> Round | None:
        self._note("round", round_id)
        return self.rounds.get(round_id)

    async def round_on_board(self, round_id: int) -> RoundOnBoard | None:
        self._note("round", round_id)  # the same one read as ``round``, one column more
        state = self.rounds.get(round_id)
        return None if state is None else RoundOnBoard(state, self.board_messages.get(round_id))

    async def settings(self, chat_id: int) -> Settings:
        self._note("settings", chat_id)
        await asyncio.sleep(0)  # a read takes a turn of the loop, as the database's does
        return self.chat_settings.get(chat_id, SETTINGS)

    async def names(self, user_ids: Sequence[int]) -> dict[int, Person]:
        self._note("names", list(user_ids))
        return {user_id: self.people[user_id] for user_id in user_ids if user_id in self.people}

    async def note_chat(self, chat_id: int, title: str) -> None:
        self._note("note_chat", chat_id, title)

    # -- deliveries --

    async def claim_board(
        self, round_id: int, *, lease_ms: int = DELIVERY_LEASE_MS, newest_known: int | None = None
    ) -> BoardClaim | None:
        self._note("claim_board", round_id, lease_ms)
        if round_id in self.board_messages or round_id in self.board_claims:
            return None
        self.board_claims.add(round_id)
        return BoardClaim(self.claimed_before.get(round_id))

    async def renew_board_claim(self, round_id: int, *, lease_ms: int = DELIVERY_LEASE_MS) -> bool:
        self._note("renew_board_claim", round_id, lease_ms)
        return round_id not in self.board_messages

    async def set_board_message(
        self, round_id: int, message_id: int, phase: Phase | None = None
    ) -> None:
        self._note("set_board_message", round_id, message_id)
        self.board_messages[round_id] = message_id
        if self.replaced.get(round_id) == message_id:
            del self.replaced[round_id]
        self.board_phases[round_id] = phase
        self.board_claims.discard(round_id)

    async def replace_board_message(self, round_id: int, old: int, new: int, phase: Phase) -> bool:
        self._note("replace_board_message", round_id, old, new)
        if self.board_messages.get(round_id) != old or self.replaced.get(round_id, new) != new:
            return False
        self.board_messages[round_id] = new
        self.board_phases[round_id] = phase
        self.replaced[round_id] = old
        return True

    async def mark_phase_shown(self, round_id: int, message_id: int, phase: Phase) -> None:
        self._note("mark_phase_shown", round_id, message_id, phase)
        if self.board_messages.get(round_id) == message_id:
            self.board_phases[round_id] = phase

    async def unshown_phases(self) -> list[tuple[int, int, Phase]]:
        self._note("unshown_phases")
        return [
            (state.id, state.chat_id, state.phase)
            for state in self.rounds.values()
            if state.phase.is_open
            and self.board_messages.get(state.id, 0) > 0
            and self.board_phases.get(state.id) is not state.phase
        ]

    async def mark_stray_board(self, round_id: int, message_id: int) -> bool:
        self._note("mark_stray_board", round_id, message_id)
        if round_id in self.replaced or self.board_messages.get(round_id) == message_id:
            return False
        self.replaced[round_id] = message_id
        return True

    async def replaced_board_gone(self, round_id: int, message_id: int) -> None:
        self._note("replaced_board_gone", round_id, message_id)
        if self.replaced.get(round_id) == message_id:
            del self.replaced[round_id]

    async def replaced_boards(self, *, grace_ms: int) -> list[tuple[int, int, int]]:
        self._note("replaced_boards", grace_ms)
        return [
            (round_id, self.rounds[round_id].chat_id, message_id)
            for round_id, message_id in self.replaced.items()
        ]

    async def round_ended(self, round_id: int) -> bool:
        self._note("round_ended", round_id)
        state = self.rounds.get(round_id)
        return state is not None and not state.phase.is_open

    async def board_message(self, round_id: int) -> int | None:
        self._note("board_message", round_id)
        return self.board_messages.get(round_id)

    async def boards(self, round_id: int) -> tuple[int | None, int | None]:
        self._note("boards", round_id)
        return self.board_messages.get(round_id), self.replaced.get(round_id)

    async def claim_announcement(self, round_id: int, *, lease_ms: int = DELIVERY_LEASE_MS) -> bool:
        self._note("claim_announcement", round_id, lease_ms)
        if round_id in self.announced or round_id in self.announcement_claims:
            return False
        self.announcement_claims.add(round_id)
        return True

    async def renew_announcement_claim(
        self, round_id: int, *, lease_ms: int = DELIVERY_LEASE_MS
    ) -> bool:
        self._note("renew_announcement_claim", round_id, lease_ms)
        return round_id not in self.announced

    async def mark_announced(self, round_id: int) -> None:
        self._note("mark_announced", round_id)
        self.announced.add(round_id)
        self.announcement_claims.discard(round_id)

    async def unannounced(
        self, within_ms: int = 3_600_000, *, unclaimed_grace_ms: int = 0
    ) -> list[tuple[Round, Ended]]:
        self._note("unannounced", unclaimed_grace_ms)
        if self.on_redeliver_lookup is not None:
            await self.on_redeliver_lookup()
        return list(self.unannounced_rounds)

    async def mark_board_closed(self, round_id: int, message_id: int | None) -> None:
        self._note("mark_board_closed", round_id, message_id)
        if self.board_messages.get(round_id) == message_id:
            self.closed.add(round_id)

    async def mark_board_open(self, round_id: int) -> None:
        self._note("mark_board_open", round_id)
        self.closed.discard(round_id)

    async def unclosed_boards(self, *, grace_ms: int) -> list[tuple[int, int]]:
        self._note("unclosed_boards", grace_ms)
        return [(r.id, r.chat_id) for r in self.rounds.values() if r.id in self.unclosed]

    async def unposted_boards(self, *, unclaimed_grace_ms: int = 0) -> list[tuple[int, int]]:
        self._note("unposted_boards", unclaimed_grace_ms)
        return list(self.unposted)

    # -- rounds --

    async def phase_unseen(self, round_id: int, *, hold_ms: int = 60_000) -> bool:
        self._note("phase_unseen", round_id)
        return round_id in self.unseen

    async def advance(self, round_id: int, phase: Phase | None = None) -> CommandResult:
        self._note("advance", round_id)
        self.advanced_phases.append(phase)
        if self.on_advance is not None:
            await self.on_advance(round_id)
        return self.advance_results.get(round_id, CommandResult())

    async def move_window(self, round_id: int, phase: Phase, opens_at_ms: int) -> CommandResult:
        """As the service does: the engine's move, stored (nothing if not due)."""
        self._note("move_window", round_id, phase, opens_at_ms)
        try:
            transition = engine.move_window(self.rounds[round_id], phase, opens_at_ms)
        except NotDue:
            return CommandResult()
        self.put(transition.round)
        return CommandResult(transition.round, transition.events)

    async def start_due_round(self, chat_id: int) -> CommandResult:
        self._note("start_due_round", chat_id)
        return self.start_results.get(chat_id, CommandResult())

    async def place_due_autobets(self) -> list[CommandResult]:
        self._note("place_due_autobets")
        failure, self.autobet_failure = self.autobet_failure, None
        if failure is not None:
            raise failure
        return []

    async def due_rounds(self) -> list[tuple[int, int]]:
        self._note("due_rounds")
        return list(self.due)

    async def due_chat_ids(self) -> list[int]:
        self._note("due_chat_ids")
        return list(self.due_chats)

    async def open_rounds(self) -> list[Round]:
        self._note("open_rounds")
        return list(self.open)

    async def forget_old_updates(self) -> int:
        self._note("forget_old_updates")
        return self.old_updates


# -- rounds -------------------------------------------------------------------------------


def new_round(
    round_id: int = 7,
    chat_id: int = GROUP,
    *,
    settings: Settings = SETTINGS,
    now_ms: int = T0_MS,
) -> engine.Transition[Round]:
    """A round just started (bidding), as the engine starts it."""
    seed = round_id.to_bytes(32, "big")
    return engine.start_round(
        round_id=round_id, chat_id=chat_id, settings=settings, seed=seed, now_ms=now_ms
    )


def with_bid(state: Round, user_id: int, amount: int) -> Round:
    """``state`` after ``user_id`` bid ``amount``."""
    return engine.bid(state, user_id, amount, free_chips=10**9, now_ms=T0_MS + 1).round


def voided(state: Round) -> tuple[Round, RoundVoided]:
    """``state`` voided for want of bids, and the event that ended it."""
    transition = engine.void(state, VoidReason.NO_BIDS)
    (event,) = transition.events
    assert isinstance(event, RoundVoided)
    return transition.round, event


# -- timers ------------------------------------------------------------------------------


@dataclass
class FakeContext:
    """What a job's callback reads of its ``CallbackContext``."""

    job: FakeJob


@dataclass
class FakeJob(Timer):
    """A timer of the fake ``Timers``; ``run()`` calls it as ``LoopTimers`` would (a
    one-off timer is then gone)."""

    callback: TimerCallback
    name: str | None
    data: Any = None
    when: float | None = None
    interval: float | None = None
    first: float | None = None
    removed: bool = False

    def schedule_removal(self) -> None:
        self.removed = True  # as ``LoopTimer``: a fired one is taken off silently

    async def run(self) -> None:
        if self.interval is None:  # a one-off job is gone once it fires
            self.removed = True
        await self.callback(FakeContext(self))


@dataclass
class FakeTimers(Timers):
    """``run_once`` and ``run_repeating`` (``Timers``), recording the timers (nothing runs
    by itself)."""

    jobs: list[FakeJob] = field(default_factory=list)

    def run_once(
        self,
        callback: TimerCallback,
        when: float,
        data: Any = None,
        name: str | None = None,
    ) -> FakeJob:
        job = FakeJob(callback, name, data, when=when)
        self.jobs.append(job)
        return job

    def run_repeating(
        self,
        callback: TimerCallback,
        interval: float,
        first: float | None = None,
        name: str | None = None,
    ) -> FakeJob:
        job = FakeJob(callback, name, interval=interval, first=first)
        self.jobs.append(job)
        return job

    @property
    def active(self) -> list[FakeJob]:
        """Jobs not removed."""
        return [job for job in self.jobs if not job.removed]

    def named(self, name: str) -> FakeJob:
        """The only job called ``name``."""
        (job,) = [job for job in self.jobs if job.name == name]
        return job


# -- clocks and waiting -------------------------------------------------------------------


class SecondsClock:
    """A monotonic clock in seconds that only the test moves."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class MillisecondsClock:
    """A wall clock in milliseconds that only the test moves."""

    def __init__(self, start_ms: int = T0_MS) -> None:
        self.now_ms = start_ms

    def __call__(self) -> int:
        return self.now_ms


async def eventually(condition: Callable[[], bool], *, within: float = 5.0) -> None:
    """Let the event loop run until ``condition()`` holds; fail if it never does. The
    limit only stops a broken test from hanging: nothing is asserted about time."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + within
    while not condition():
        assert loop.time() < give_up, "the condition never held"
        await asyncio.sleep(0.001)


async def spin(times: int = 20) -> None:
    """Let every task that can run, run (a few rounds of the event loop, no real wait)."""
    for _ in range(times):
        await asyncio.sleep(0)


# -- updates ------------------------------------------------------------------------------

_update_ids = itertools.count(1)
_query_ids = itertools.count(1)


def _chat(chat_id: int, title: str | None = None) -> Chat:
    if chat_id > 0:
        return Chat(chat_id, Chat.PRIVATE, first_name="Private")
    return Chat(chat_id, Chat.SUPERGROUP, title=title if title is not None else "Group")


def person(user_id: int, first_name: str = "", username: str | None = None) -> User:
    """A Telegram user."""
    return User(user_id, first_name or f"User{user_id}", False, username=username)


def message_update(
    chat_id: int, sender: User, text: str, *, message_id: int = 1, title: str | None = None
) -> Update:
    """An update of a text message (a command if it starts with ``/``)."""
    entities = []
    if text.startswith("/"):
        length = len(text.split()[0])
        entities.append(MessageEntity(MessageEntity.BOT_COMMAND, 0, length))
    message = Message(
        message_id,
        datetime.now(UTC),
        _chat(chat_id, title),
        from_user=sender,
        text=text,
        entities=entities,
    )
    return Update(next(_update_ids), message=message)


def button_update(chat_id: int, sender: User, data: str, *, message_id: int = 1) -> Update:
    """An update of a button press on one of the bot's messages."""
    message = Message(message_id, datetime.now(UTC), _chat(chat_id), text="board")
    query = CallbackQuery(
        str(next(_query_ids)), sender, chat_instance="1", message=message, data=data
    )
    return Update(next(_update_ids), callback_query=query)

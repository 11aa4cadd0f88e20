"""The Telegram shell: handlers, the live board, deadlines, and the composition root.

Updates of one chat are handled one at a time (``ChatOrderedProcessor``), different
chats concurrently; deadline jobs take the same per-chat lock. Every command goes to the
service, which does its work in one database transaction; the shell renders what
happened in the group's language.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from typing import Any, TypeVar, cast

from telegram import (
    BotCommand,
    CallbackQuery,
    ChatMember,
    InlineKeyboardMarkup,
    Message,
    Update,
)
from telegram import User as TelegramUser
from telegram.constants import ChatType, ParseMode
from telegram.error import BadRequest, Forbidden, TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    BaseUpdateProcessor,
    CallbackContext,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    Job,
    MessageHandler,
    filters,
)

from bot.config import Config
from bot.engine.errors import GameError
from bot.engine.round import (
    BetCancelled,
    BetPlaced,
    BidPlaced,
    Grabbed,
    Phase,
    Round,
    RoundSettled,
    RoundStarted,
    RoundVoided,
)
from bot.engine.settings import SETTING_NAMES, Settings
from bot.engine.verification import RevealedShoe, verify_round
from bot.money import format_bps, format_signed, parse_amount
from bot.priority import PriorityTurn, urgent
from bot.service.game import BOARD_REFUSED, CommandResult, GameService, Person, wall_clock_ms
from bot.telegram.delivery import ChatOutbox, SendRateLimiter, SlidingWindow
from bot.telegram.i18n import translate
from bot.telegram.views import ButtonPress, Views, display_name

log = logging.getLogger(__name__)
_T = TypeVar("_T")

#: Replies to commands a group may get per minute; the rest of Telegram's ~20 a minute
#: stays free for boards and results.
REPLIES_PER_MINUTE = 10
MAX_MESSAGE_LENGTH = 4096
#: How long a group's settings are reused before they are read again (a change made by
#: another worker shows after at most this long; rounds use their own snapshot anyway).
SETTINGS_CACHE_SECONDS = 10.0
#: How often processed updates past their window are forgotten.
FORGET_UPDATES_SECONDS = 3600.0
#: Overdue rounds the sweep advances at once: enough to keep the database busy (they
#: queue for SQLite's one writer anyway), few enough that a thousand overdue rounds after
#: a restart neither open a thousand transactions nor starve the pool.
SWEEP_CONCURRENCY = 8
BARE_NUMBER = r"^\s*[0-9]{1,9}(\.[0-9]{1,2})?\s*$"


class ChatLocks:
    """One lock per chat, which a deadline takes before the chat's waiting commands (a
    ``PriorityTurn`` of one slot): a command handled after its round's deadline is refused
    whichever goes first, so letting the deadline go ahead changes no outcome, and it no
    longer waits behind a busy chat's queue."""

    def __init__(self) -> None:
        self._locks: dict[int, PriorityTurn] = {}

    def lock(self, chat_id: int) -> PriorityTurn:
        """The lock of a chat (created on first use)."""
        found = self._locks.get(chat_id)
        if found is None:
            found = self._locks[chat_id] = PriorityTurn()
        return found


class ChatOrderedProcessor(BaseUpdateProcessor):
    """Processes updates of different chats concurrently and those of one chat in order."""

    def __init__(self, locks: ChatLocks, max_concurrent_updates: int = 512) -> None:
        super().__init__(max_concurrent_updates)
        self.locks = locks

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        chat = update.effective_chat if isinstance(update, Update) else None
        if chat is None:
            await coroutine
            return
        async with self.locks.lock(chat.id).turn():
            await coroutine

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to tear down."""


#: Refusals not worth a reply when someone merely typed a number in the chat.
QUIET_FOR_BARE_NUMBERS = frozenset({"no_round", "not_bidding", "not_betting", "window_closed"})


def is_ascii_number(text: str) -> bool:
    """True for a whole number in ASCII digits (``isdigit`` alone accepts "²")."""
    return text.isascii() and text.isdecimal()


def parse_typed_amount(text: str) -> int:
    """An amount a user typed, or ``GameError("bad_amount")`` saying what is wrong."""
    try:
        return parse_amount(text)
    except ValueError as error:
        raise GameError("bad_amount", reason=str(error)) from None


def split_message(text: str, limit: int = MAX_MESSAGE_LENGTH) -> list[str]:
    """Cut text into messages of at most ``limit`` characters, between lines (each line of
    ours closes the tags it opens). A single longer line is cut where it must be."""
    chunks: list[str] = []
    current = ""
    for line in text.split("\n"):
        while len(line) > limit:
            if current:
                chunks.append(current)
                current = ""
            chunks.append(line[:limit])
            line = line[limit:]
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) > limit:
            chunks.append(current)
            candidate = line
        current = candidate
    if current or not chunks:
        chunks.append(current)
    return chunks


def person_of(user: TelegramUser) -> Person:
    """The service's view of a Telegram user."""
    return Person(user.id, user.first_name or "", user.username, user.last_name)


class GameBot:
    """Handlers and jobs of the bot, over one ``GameService``."""

    def __init__(
        self, config: Config, service: GameService, *, clock: Callable[[], int] = wall_clock_ms
    ) -> None:
        self.config = config
        self.service = service
        self.clock = clock
        self.locks = ChatLocks()
        self.people: dict[int, Person] = {}
        self.replies = SlidingWindow(REPLIES_PER_MINUTE)
        self._admins: dict[tuple[int, int], tuple[float, bool]] = {}
        self._board_ids: dict[int, int] = {}
        self._board_pending: set[int] = set()
        self._deadline_jobs: dict[int, tuple[int, Job[Any]]] = {}
        self._settings: dict[int, tuple[float, Settings]] = {}
        self._chat_titles: dict[int, str] = {}
        self._board_shown: dict[int, tuple[str, InlineKeyboardMarkup | None]] = {}
        self.outbox = ChatOutbox()
        self._tasks: set[asyncio.Task[None]] = set()
        self._board_edited: dict[int, float] = {}
        #: Boards and results this process has queued and not finished sending: the sweep
        #: looks for undelivered ones every time and must not queue them again.
        self._delivering: set[tuple[str, int]] = set()
        self.lease_ms = round(config.delivery_lease_seconds * 1000)
        self.application: Application[Any, Any, Any, Any, Any, Any] | None = None

    # -- wiring ---------------------------------------------------------------------

    def install(self, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """Register every handler and the error handler on ``application``."""
        self.application = application
        group = filters.ChatType.GROUPS
        private = filters.ChatType.PRIVATE
        commands: list[tuple[str, Callable[..., Coroutine[Any, Any, None]], filters.BaseFilter]] = [
            ("newround", self.cmd_newround, group),
            ("bid", self.cmd_bid, group),
            ("bet", self.cmd_bet, group),
            ("balance", self.cmd_balance, group),
            ("balance", self.cmd_balance_private, private),
            ("history", self.cmd_history, group),
            ("rules", self.cmd_rules, filters.ALL),
            ("verify", self.cmd_verify, group),
            ("help", self.cmd_help, filters.ALL),
            ("start", self.cmd_start, private),
            ("open", self.cmd_open, group),
            ("close", self.cmd_close, group),
            ("config", self.cmd_config, group),
            ("set", self.cmd_set, group),
            ("credit", self.cmd_credit, group),
            ("debit", self.cmd_debit, group),
            ("fund", self.cmd_fund, group),
            ("bank", self.cmd_bank, group),
            ("ledger", self.cmd_ledger, group),
            ("audit", self.cmd_audit, group),
        ]
        for name, callback, chat_filter in commands:
            application.add_handler(CommandHandler(name, self._guard(callback), chat_filter))
        group_only = [
            "newround",
            "bid",
            "bet",
            "history",
            "verify",
            "open",
            "close",
            "config",
            "set",
            "credit",
            "debit",
            "fund",
            "bank",
            "ledger",
            "audit",
        ]
        application.add_handler(
            CommandHandler(group_only, self._guard(self.cmd_group_only), private)
        )
        application.add_handler(
            MessageHandler(
                group & filters.Regex(BARE_NUMBER) & ~filters.COMMAND,
                self._guard(self.on_bare_number),
            )
        )
        application.add_handler(MessageHandler(group & filters.TEXT, self._guard(self.on_text)))
        application.add_handler(CallbackQueryHandler(self._guard(self.on_button)))
        application.add_error_handler(self.on_error)

    def _guard(
        self, handler: Callable[[Update, Any], Coroutine[Any, Any, None]]
    ) -> Callable[[Update, Any], Coroutine[Any, Any, None]]:
        """Note the sender, then run ``handler``; a ``GameError`` becomes a short reply."""

        async def guarded(update: Update, context: Any) -> None:
            user = update.effective_user
            if user is not None:
                self.people[user.id] = person_of(user)
            try:
                await handler(update, context)
            except GameError as error:
                await self.reply_error(update, error)

        return guarded

    async def on_error(self, update: object, context: CallbackContext[Any, Any, Any, Any]) -> None:
        """Log unexpected errors; tell the user nothing changed where we can."""
        log.error("error while handling an update", exc_info=context.error)
        if isinstance(update, Update) and update.effective_chat is not None:
            await self.reply(update, await self.text(update.effective_chat.id, "error.internal"))

    async def start(self, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """After start-up: publish commands, finish overdue rounds, reschedule open ones,
        and start the sweep."""
        try:
            await application.bot.set_my_commands(
                [BotCommand(name, description) for name, description in BOT_COMMANDS]
            )
        except TelegramError as error:
            log.warning("could not set the command list: %s", error)
        for state, ended in await self.service.unannounced():
            # Stopped (or crashed) before Telegram had a round's results: send them now.
            # Those a worker was sending when it died follow once its lease ran out (sweep).
            self.queue_results(state, ended)
        # Overdue rounds are advanced side by side (bounded), as the sweep does; the
        # service's recover() would take them one after another.
        await self.catch_up()
        open_rounds = await self.service.open_rounds()
        for state in open_rounds:
            self.schedule(state)
        for round_id, chat_id in await self.service.unposted_boards():
            # Stopped before Telegram had a round's board: post it now (unless publishing
            # it above got there first: posting is claimed).
            self.queue_board(chat_id, round_id)
        assert application.job_queue is not None
        application.job_queue.run_repeating(
            self._sweep_job,
            interval=self.config.sweep_seconds,
            first=self.config.sweep_seconds,
            name="sweep",
        )
        application.job_queue.run_repeating(
            self._forget_old_updates_job,
            interval=FORGET_UPDATES_SECONDS,
            first=0,
            name="forget old updates",
        )
        log.info("ready: %d open rounds rescheduled", len(open_rounds))

    async def _forget_old_updates_job(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        forgotten = await self.service.forget_old_updates()
        if forgotten:
            log.info("forgot %d processed updates past their window", forgotten)

    # -- deadlines ------------------------------------------------------------------

    def schedule(self, state: Round) -> None:
        """(Re)schedule the job that applies a round's deadline; none once it has ended.
        Most commands leave the deadline as it is, and then so does this."""
        if self.application is None or self.application.job_queue is None:
            return
        scheduled = self._deadline_jobs.get(state.id)
        if scheduled is not None:
            if state.phase.is_open and scheduled[0] == state.deadline_ms:
                return
            scheduled[1].schedule_removal()
            del self._deadline_jobs[state.id]
        if not state.phase.is_open:
            return
        delay = max(0.0, (state.deadline_ms - self.clock()) / 1000)
        job = self.application.job_queue.run_once(
            self._deadline_job,
            when=delay,
            name=f"deadline:{state.id}",
            data=(state.id, state.chat_id),
        )
        self._deadline_jobs[state.id] = (state.deadline_ms, job)

    async def _deadline_job(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert context.job is not None
        round_id, chat_id = cast(tuple[int, int], context.job.data)
        if self._deadline_jobs.get(round_id, (None, None))[1] is context.job:
            del self._deadline_jobs[round_id]
        await self.advance(round_id, chat_id)

    async def _sweep_job(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        await self.sweep()

    async def sweep(self) -> None:
        """Catch up (``catch_up``), then send the boards and results whose sender died."""
        await self.catch_up()
        try:
            await self.redeliver()
        except Exception:
            log.exception("sweep: looking for undelivered messages failed; next sweep again")

    async def catch_up(self) -> None:
        """Advance overdue rounds (lost or late jobs) and start rounds whose pause is over,
        chats side by side (at most ``SWEEP_CONCURRENCY`` at once), so one busy chat holds
        up no other."""
        bound = asyncio.Semaphore(SWEEP_CONCURRENCY)

        async def bounded(work: Awaitable[None]) -> None:
            async with bound:
                await work

        due = await self.service.due_rounds()
        outcomes = await asyncio.gather(
            *(bounded(self.advance(round_id, chat_id)) for round_id, chat_id in due),
            return_exceptions=True,
        )
        outcomes += await asyncio.gather(
            *(bounded(self._start_due(chat_id)) for chat_id in await self.service.due_chat_ids()),
            return_exceptions=True,
        )
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                log.error("sweep: a chat failed; the next sweep tries again", exc_info=outcome)

    async def redeliver(self) -> None:
        """Queue the boards and results that should be out by now and that no worker is
        sending: the worker that claimed one died (its lease ran out), or the worker that
        started or ended the round never got to it (a lease after it did so)."""
        grace = self.lease_ms
        for state, ended in await self.service.unannounced(unclaimed_grace_ms=grace):
            self.queue_results(state, ended)
        for round_id, chat_id in await self.service.unposted_boards(unclaimed_grace_ms=grace):
            self.queue_board(chat_id, round_id)

    async def _start_due(self, chat_id: int) -> None:
        async with self.locks.lock(chat_id).turn(urgent=True):
            with urgent():  # the pause's end is a deadline too
                result = await self.service.start_due_round(chat_id)
            self.publish(chat_id, result)  # outside: tasks it starts must not inherit it

    async def advance(self, round_id: int, chat_id: int) -> None:
        """Apply a round's deadline under its chat's lock, before the chat's waiting
        commands, and before other chats' commands waiting for the database."""
        async with self.locks.lock(chat_id).turn(urgent=True):
            # GameService.advance is urgent itself (its database turn comes first too).
            self.publish(chat_id, await self.service.advance(round_id))

    # -- publishing -----------------------------------------------------------------

    async def settings(self, chat_id: int) -> Settings:
        """The group's settings, cached briefly: every render and reply needs them, and
        a change made through this process is seen at once."""
        cached = self._settings.get(chat_id)
        now = time.monotonic()
        if cached is not None and cached[0] > now:
            return cached[1]
        settings = await self.service.settings(chat_id)
        self._settings[chat_id] = (now + SETTINGS_CACHE_SECONDS, settings)
        return settings

    async def drain(self, timeout: float = 10.0) -> None:
        """Let answers and queued messages go out (before stopping)."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)
        await self.outbox.drain(timeout)

    async def views(self, chat_id: int) -> Views:
        """Renderers in the group's language and currency."""
        return Views(await self.settings(chat_id))

    async def text(self, chat_id: int, key: str, **params: Any) -> str:
        """A catalogue message for a chat."""
        settings = await self.settings(chat_id)
        return translate(settings.language, key, settings.currency, **params)

    async def names(self, user_ids: list[int]) -> dict[int, Person]:
        """Names of users, from what this process saw or the database."""
        missing = [user_id for user_id in user_ids if user_id not in self.people]
        if missing:
            self.people.update(await self.service.names(missing))
        return {user_id: self.people[user_id] for user_id in user_ids if user_id in self.people}

    def publish(self, chat_id: int, result: CommandResult) -> None:
        """Tell the group what a command or deadline did (through the chat's outbox, so
        the caller never waits on Telegram) and schedule the next deadline."""
        if result.refused is not None:
            self.outbox.put(chat_id, partial(self.send_refusal, chat_id, result.refused))
        state = result.round
        if state is None or result.duplicate:
            return
        for event in result.events:
            if isinstance(event, RoundStarted):
                if event.retired_shoe is not None:
                    self.outbox.put(chat_id, partial(self.send_shoe_replaced, state, event))
                self.queue_board(chat_id, state.id)
            elif isinstance(event, (RoundSettled, RoundVoided)):
                self.queue_results(state, event)
        self.schedule(state)
        if result.events and not any(isinstance(e, RoundStarted) for e in result.events):
            self.refresh_board(state)
        if result.started is not None:
            for event in result.started_events:
                if isinstance(event, RoundStarted) and event.retired_shoe is not None:
                    self.outbox.put(
                        chat_id, partial(self.send_shoe_replaced, result.started, event)
                    )
            self.queue_board(chat_id, result.started.id)
            self.schedule(result.started)

    def queue_board(self, chat_id: int, round_id: int) -> None:
        """Post a round's board through the chat's outbox (unless this process has it
        queued already)."""
        self._queue_delivery(("board", round_id), chat_id, partial(self.send_board, round_id))

    def queue_results(self, state: Round, ended: RoundSettled | RoundVoided) -> None:
        """Send a round's results through the chat's outbox (unless this process has them
        queued already)."""
        job = partial(self.send_results, state, ended)
        self._queue_delivery(("results", state.id), state.chat_id, job)

    def _queue_delivery(
        self, key: tuple[str, int], chat_id: int, send: Callable[[], Awaitable[None]]
    ) -> None:
        if key in self._delivering:
            return
        self._delivering.add(key)

        async def job() -> None:
            try:
                await send()
            finally:
                self._delivering.discard(key)

        self.outbox.put(chat_id, job)

    async def send(
        self,
        chat_id: int,
        text: str,
        markup: InlineKeyboardMarkup | None = None,
        reply_to: int | None = None,
    ) -> Message | None:
        """Send an HTML message, in several if it is too long for one (the buttons go on
        the last); the first message, or ``None`` (logged) if Telegram refuses it."""
        assert self.application is not None
        chunks = split_message(text)
        first: Message | None = None
        for number, chunk in enumerate(chunks, start=1):
            try:
                sent = await self.application.bot.send_message(
                    chat_id,
                    chunk,
                    parse_mode=ParseMode.HTML,
                    reply_markup=markup if number == len(chunks) else None,
                    reply_to_message_id=reply_to if number == 1 else None,
                    allow_sending_without_reply=True,
                )
            except (BadRequest, Forbidden) as error:
                log.warning("chat %s refused a message: %s", chat_id, error)
                return first
            first = first or sent
        return first

    async def _render_board(self, round_id: int) -> tuple[Round, str, InlineKeyboardMarkup | None]:
        state = await self.service.round(round_id)
        if state is None:
            raise LookupError(f"round {round_id} is gone")
        views = Views(state.settings)  # a running round keeps the settings it started with
        people = await self.names(self._board_people(state))
        text, markup = views.board(state, people, self.clock())
        return state, text, markup

    async def send_board(self, round_id: int) -> None:
        """Post the live board of a new round (as it is when the message goes out), unless
        it is posted or another worker is posting it. It counts as posted only once
        Telegram answered: a crash before that leaves it to be posted again when the lease
        ran out (twice only if Telegram had it already)."""
        if not await self.service.claim_board(round_id, lease_ms=self.lease_ms):
            return
        state, text, markup = await self._render_board(round_id)
        message = await self._keeping_lease(
            self.service.renew_board_claim,
            round_id,
            partial(self.send, state.chat_id, text, markup),
        )
        if message is None:  # refused (logged); trying again would be refused too
            await self.service.set_board_message(state.id, BOARD_REFUSED)
            return
        self._board_ids[state.id] = message.message_id
        self._board_shown[state.id] = (text, markup)
        self._board_edited[state.chat_id] = time.monotonic()
        await self.service.set_board_message(state.id, message.message_id)

    async def _keeping_lease(
        self,
        renew: Callable[..., Awaitable[bool]],
        round_id: int,
        send: Callable[[], Awaitable[_T]],
    ) -> _T:
        """Run ``send`` holding the round's lease on it: renewed every third of its length,
        so that a message waiting behind Telegram's rate limits keeps its job and no other
        worker sends it too. A process that dies stops renewing, and the lease runs out."""
        sent = asyncio.Event()

        async def renew_until_sent() -> None:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(sent.wait(), self.lease_ms / 3000)
                    return
                try:
                    if not await renew(round_id, lease_ms=self.lease_ms):
                        return  # delivered meanwhile, by a worker that took it over
                except Exception:
                    log.exception("round %s: renewing a delivery lease failed", round_id)

        renewing = asyncio.get_running_loop().create_task(renew_until_sent())
        try:
            return await send()
        finally:
            sent.set()
            await renewing

    @staticmethod
    def _board_people(state: Round) -> list[int]:
        ids = [bet.user_id for bet in state.bets]
        ids += [user for user in (state.high_bidder, state.dealer_id) if user is not None]
        return ids

    def refresh_board(self, state: Round) -> None:
        """Edit the round's board soon: at most one edit per chat every few seconds, the
        latest state each time (several changes in between make one edit)."""
        if state.id in self._board_pending:
            return
        self._board_pending.add(state.id)
        self._spawn(self._edit_board_later(state.chat_id, state.id))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        # The loop keeps only weak references to tasks.
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _edit_board_later(self, chat_id: int, round_id: int) -> None:
        wait = self._board_edited.get(chat_id, 0.0) + self.config.board_edit_seconds
        if wait > time.monotonic():
            await asyncio.sleep(wait - time.monotonic())
        self.outbox.put(chat_id, partial(self.edit_board, round_id))

    async def edit_board(self, round_id: int) -> None:
        """Show a round's current state on its board message, unless it shows it already."""
        assert self.application is not None
        # Changes from now on need an edit of their own.
        self._board_pending.discard(round_id)
        state, text, markup = await self._render_board(round_id)
        message_id = self._board_ids.get(round_id) or await self.service.board_message(round_id)
        if not message_id or self._board_shown.get(round_id) == (text, markup):
            return
        self._board_edited[state.chat_id] = time.monotonic()
        if state.phase.is_open:
            self._board_shown[round_id] = (text, markup)
        else:  # the round's last edit: forget its board
            self._board_shown.pop(round_id, None)
            self._board_ids.pop(round_id, None)
        try:
            await self.application.bot.edit_message_text(
                text,
                chat_id=state.chat_id,
                message_id=message_id,
                parse_mode=ParseMode.HTML,
                reply_markup=markup,
            )
        except BadRequest as error:
            if "not modified" not in str(error).lower():
                log.warning("board of round %s: %s", round_id, error)

    async def send_refusal(self, chat_id: int, error: GameError) -> None:
        """Tell the group why something it expected (a round starting) did not happen."""
        await self.send(chat_id, await self.text(chat_id, f"error.{error.key}", **error.params))

    async def send_shoe_replaced(self, state: Round, started: RoundStarted) -> None:
        """Tell the group its shoe was replaced (or retired, the table having moved to a
        game without one), revealing the old shoe's seed."""
        retired = started.retired_shoe
        assert retired is not None
        seed = retired.seed.hex()
        if state.shoe is None:
            text = await self.text(state.chat_id, "shoe.retired", old_id=retired.id, seed=seed)
        else:
            text = await self.text(
                state.chat_id, "shoe.replaced", shoe_id=state.shoe.id, old_id=retired.id, seed=seed
            )
        await self.send(state.chat_id, text)

    async def send_results(self, state: Round, ended: RoundSettled | RoundVoided) -> None:
        """Post the one message that closes a round, unless it went out or another worker
        is sending it. It counts as sent only once Telegram answered: a crash before that
        leaves it to be sent again when the lease ran out (twice only if Telegram had it
        already)."""
        if not await self.service.claim_announcement(state.id, lease_ms=self.lease_ms):
            return
        views = Views(state.settings)
        people = await self.names(list(state.participants) + self._board_people(state))
        text = views.results(state, ended, people)
        await self._keeping_lease(
            self.service.renew_announcement_claim, state.id, partial(self.send, state.chat_id, text)
        )
        # Sent, or refused for good (logged): either way Telegram answered.
        await self.service.mark_announced(state.id)

    # -- replies --------------------------------------------------------------------

    async def reply(self, update: Update, text: str) -> None:
        """A short reply to the sender: a toast for a button, else a reply message (within
        the group's reply budget, so a flood of bad commands cannot flood the group)."""
        if update.callback_query is not None:
            await self._answer(update.callback_query, text)
            return
        message = update.effective_message
        chat = update.effective_chat
        if message is None or chat is None:
            return
        if chat.type != ChatType.PRIVATE and not self.replies.allow(chat.id):
            log.info("reply budget of chat %s spent; not replying", chat.id)
            return
        self.outbox.put(chat.id, partial(self._send_reply, chat.id, text, message.message_id))

    async def _send_reply(self, chat_id: int, text: str, reply_to: int) -> None:
        await self.send(chat_id, text, reply_to=reply_to)

    async def _answer(self, query: CallbackQuery, text: str) -> None:
        """Answer a button's toast without holding the chat's lock for the round trip."""
        plain = html.unescape(text.replace("<code>", "").replace("</code>", ""))

        async def answer() -> None:
            try:
                await query.answer(plain[:200], show_alert=False)
            except TelegramError as error:
                log.info("callback answer refused: %s", error)

        self._spawn(answer())

    async def reply_error(self, update: Update, error: GameError) -> None:
        """Explain a refused command in the group's language."""
        chat = update.effective_chat
        if chat is None:
            return
        params = {k: html.escape(v) if isinstance(v, str) else v for k, v in error.params.items()}
        await self.reply(update, await self.text(chat.id, f"error.{error.key}", **params))

    # -- players --------------------------------------------------------------------

    @staticmethod
    def _amount(context: Any, example: str) -> int:
        args: list[str] = context.args or []
        if not args:
            raise GameError("amount_missing", example=example)
        return parse_typed_amount(args[0])

    @staticmethod
    def _ids(update: Update) -> tuple[int, Person, int]:
        assert update.effective_chat is not None and update.effective_user is not None
        return update.effective_chat.id, person_of(update.effective_user), update.update_id

    async def cmd_group_only(self, update: Update, context: Any) -> None:
        """A group command sent in private."""
        raise GameError("group_only")

    async def cmd_newround(self, update: Update, context: Any) -> None:
        """``/newround``: start a round in an open group."""
        chat_id, person, update_id = self._ids(update)
        result = await self.service.start_round(chat_id, actor=person, update_id=update_id)
        self.publish(chat_id, result)

    async def cmd_bid(self, update: Update, context: Any) -> None:
        """``/bid AMOUNT``: bid for dealer."""
        await self._play(update, self.service.bid, self._amount(context, "/bid 500"))

    async def cmd_bet(self, update: Update, context: Any) -> None:
        """``/bet AMOUNT``: bet, change the bet, or cancel it with 0."""
        await self._play(update, self.service.bet, self._amount(context, "/bet 20"))

    async def _play(
        self,
        update: Update,
        command: Callable[..., Awaitable[CommandResult]],
        *args: Any,
        **options: Any,
    ) -> None:
        """Run a player's round command, tell the group, and answer a button's toast."""
        chat_id, person, update_id = self._ids(update)
        result = await command(chat_id, person, *args, update_id=update_id, **options)
        self.publish(chat_id, result)
        if update.callback_query is not None:
            await self._answer_result(update, result)

    async def _answer_result(self, update: Update, result: CommandResult) -> None:
        assert update.effective_chat is not None
        chat_id = update.effective_chat.id
        if result.duplicate:
            await self.reply(update, await self.text(chat_id, "answer.duplicate"))
            return
        for event in result.events:
            if isinstance(event, BidPlaced):
                text = await self.text(chat_id, "answer.bid_placed", amount=event.amount)
            elif isinstance(event, BetPlaced):
                key = "answer.bet_changed" if event.previous else "answer.bet_placed"
                text = await self.text(chat_id, key, amount=event.amount)
            elif isinstance(event, BetCancelled):
                text = await self.text(chat_id, "answer.bet_cancelled", amount=event.amount)
            elif isinstance(event, Grabbed) and not event.auto:
                text = await self.text(chat_id, "answer.grabbed", share=event.amount)
            else:
                continue
            await self.reply(update, text)
            return

    async def on_bare_number(self, update: Update, context: Any) -> None:
        """A bare number is a bid during bidding and a bet during betting (as in the seed);
        at any other time it is just a number in the chat."""
        assert update.effective_message is not None and update.effective_chat is not None
        try:
            amount = parse_amount(update.effective_message.text or "")
        except ValueError:
            return
        # A cheap look first: most numbers in a chat are not stakes, and a command takes
        # the database's one writer.
        phase = await self.service.current_phase(update.effective_chat.id)
        if phase not in (Phase.BIDDING, Phase.BETTING):
            return
        try:
            await self._play(update, self.service.stake, amount)
        except GameError as error:
            if error.key not in QUIET_FOR_BARE_NUMBERS:
                raise

    async def on_text(self, update: Update, context: Any) -> None:
        """Other group text: remember the sender, so that admins can name them by
        @username (the service writes only users it has not stored as they are)."""
        if update.effective_user is not None:
            await self.service.note_people([person_of(update.effective_user)])

    async def on_button(self, update: Update, context: Any) -> None:
        """A press on a board button: bid, bet, cancel or grab, for the round it names."""
        query = update.callback_query
        assert query is not None
        press = ButtonPress.decode(query.data or "")
        if press is None or update.effective_chat is None:
            raise GameError("stale_button")
        round_id = press.round_id
        if press.action == "bid":
            await self._play(update, self.service.bid, press.amount, round_id=round_id)
        elif press.action == "bet":
            await self._play(update, self.service.bet, press.amount, round_id=round_id)
        elif press.action == "cancel":
            await self._play(update, self.service.bet, 0, round_id=round_id)
        else:
            await self._play(update, self.service.grab, round_id=round_id)

    async def cmd_balance(self, update: Update, context: Any) -> None:
        """``/balance`` in a group: your chips here."""
        chat_id, person, _ = self._ids(update)
        balance = await self.service.balance(chat_id, person.id)
        await self.reply(
            update,
            await self.text(
                chat_id,
                "balance.group",
                name=display_name(person.id, {person.id: person}),
                available=balance.available,
                held=balance.held,
            ),
        )

    async def cmd_balance_private(self, update: Update, context: Any) -> None:
        """``/balance`` in private: your chips in every group."""
        _, person, _ = self._ids(update)
        found = await self.service.balances_everywhere(person.id)
        if not found:
            await self.reply(update, translate("en", "balance.private_none"))
            return
        lines = [translate("en", "balance.private_header")]
        for group_id, title, balance in found:
            settings = await self.settings(group_id)
            lines.append(
                translate(
                    settings.language,
                    "balance.private_line",
                    settings.currency,
                    title=html.escape(title or str(group_id)),
                    available=balance.available,
                    held=balance.held,
                )
            )
        await self.reply(update, "\n".join(lines))

    async def cmd_history(self, update: Update, context: Any) -> None:
        """``/history``: the group's last rounds."""
        chat_id, _, _ = self._ids(update)
        rounds = await self.service.history(chat_id, limit=10)
        views = await self.views(chat_id)
        if not rounds:
            await self.reply(update, views.t("history.none"))
            return
        people = await self.names([r.dealer_id for r in rounds if r.dealer_id is not None])
        lines = [views.t("history.header")]
        for summary in rounds:
            if summary.phase is Phase.SETTLED:
                if summary.dealer_id is None:
                    name = views.t("results.house_name")
                else:
                    name = display_name(summary.dealer_id, people)
                lines.append(
                    views.t(
                        "history.settled",
                        round_id=summary.id,
                        name=name,
                        pool=summary.pool,
                        net=format_signed(summary.dealer_net or 0, views.currency),
                    )
                )
            elif summary.phase is Phase.VOID:
                lines.append(
                    views.t("history.void", round_id=summary.id, reason=summary.void_reason or "")
                )
            else:
                lines.append(
                    views.t("history.open", round_id=summary.id, phase=summary.phase.value)
                )
        await self.reply(update, "\n".join(lines))

    async def cmd_rules(self, update: Update, context: Any) -> None:
        """``/rules``: the rules and multipliers of this table."""
        assert update.effective_chat is not None
        await self.reply(update, (await self.views(update.effective_chat.id)).rules())

    async def cmd_help(self, update: Update, context: Any) -> None:
        """``/help``: the commands."""
        assert update.effective_chat is not None
        await self.reply(update, await self.text(update.effective_chat.id, "help"))

    async def cmd_start(self, update: Update, context: Any) -> None:
        """``/start`` in private: how to add the bot to a group."""
        await self.reply(update, translate("en", "private.start"))

    async def cmd_verify(self, update: Update, context: Any) -> None:
        """``/verify N``: recompute round N's deal from its revealed seed (or its shoe's)."""
        chat_id, _, _ = self._ids(update)
        args: list[str] = context.args or []
        if not args or not is_ascii_number(args[0].lstrip("#")) or len(args[0]) > 12:
            raise GameError("bad_round_number")
        round_id = int(args[0].lstrip("#"))
        state = await self.service.round(round_id)
        if state is None or state.chat_id != chat_id:
            raise GameError("round_not_found", round_id=round_id)
        if state.phase.is_open:
            raise GameError("round_not_finished", round_id=round_id)
        revealed = None
        if state.shoe is not None:
            shoe = await self.service.shoe(state.shoe.id)
            assert shoe is not None
            if shoe.seed is not None:
                revealed = RevealedShoe(shoe.seed, shoe.decks)
        result = verify_round(state, revealed)
        people = await self.names(list(state.participants))
        await self.reply(update, (await self.views(chat_id)).verification(result, people))

    # -- admins ---------------------------------------------------------------------

    async def is_admin(self, chat_id: int, user_id: int) -> bool:
        """Group creators and administrators (asked of Telegram, cached) and operators."""
        if user_id in self.config.operators:
            return True
        cached = self._admins.get((chat_id, user_id))
        now = time.monotonic()
        if cached is not None and cached[0] > now:
            return cached[1]
        assert self.application is not None
        try:
            member = await self.application.bot.get_chat_member(chat_id, user_id)
            allowed = member.status in (ChatMember.OWNER, ChatMember.ADMINISTRATOR)
        except TelegramError as error:
            log.warning("getChatMember(%s, %s) failed: %s", chat_id, user_id, error)
            return False
        self._admins[(chat_id, user_id)] = (now + self.config.admin_cache_seconds, allowed)
        return allowed

    async def _require_admin(self, update: Update) -> tuple[int, Person]:
        chat_id, person, _ = self._ids(update)
        if not await self.is_admin(chat_id, person.id):
            raise GameError("not_admin")
        assert update.effective_chat is not None
        title = update.effective_chat.title or ""
        if self._chat_titles.get(chat_id) != title:
            await self.service.note_chat(chat_id, title)
            self._chat_titles[chat_id] = title
        return chat_id, person

    async def cmd_open(self, update: Update, context: Any) -> None:
        """``/open``: open the table (admins)."""
        await self._set_open(update, True)

    async def cmd_close(self, update: Update, context: Any) -> None:
        """``/close``: close the table; a running round finishes (admins)."""
        await self._set_open(update, False)

    async def _set_open(self, update: Update, is_open: bool) -> None:
        chat_id, person = await self._require_admin(update)
        changed = await self.service.set_open(chat_id, person, is_open, update_id=update.update_id)
        if changed is None:
            return
        keys = {
            True: ("table.opened", "table.already_open"),
            False: ("table.closed", "table.already_closed"),
        }[is_open]
        await self.reply(update, await self.text(chat_id, keys[0] if changed else keys[1]))

    async def cmd_config(self, update: Update, context: Any) -> None:
        """``/config``: every setting of this group (admins)."""
        chat_id, _ = await self._require_admin(update)
        settings = await self.settings(chat_id)
        views = Views(settings)
        lines = [views.t("config.header")]
        lines += [
            views.t("config.line", name=name, value=html.escape(settings.display(name)))
            for name in SETTING_NAMES
        ]
        lines.append(views.t("config.usage"))
        await self.reply(update, "\n".join(lines))

    async def cmd_set(self, update: Update, context: Any) -> None:
        """``/set KEY VALUE``: change a setting (admins)."""
        chat_id, person = await self._require_admin(update)
        args: list[str] = context.args or []
        if len(args) < 2:
            await self.reply(update, await self.text(chat_id, "set.usage"))
            return
        changed = await self.service.change_setting(
            chat_id, person, args[0], " ".join(args[1:]), update_id=update.update_id
        )
        if changed is None:
            return
        self._settings.pop(chat_id, None)
        name, old, new = changed
        views = await self.views(chat_id)
        lines = [views.t("set.done", name=name, old=html.escape(old), new=html.escape(new))]
        if name == "ruleset" and old != new:
            settings = views.settings
            lines.append(
                views.t(
                    "set.table_defaults",
                    rake=format_bps(settings.rake_bps),
                    rebate=format_bps(settings.rebate_bps),
                    fees=settings.dealer_fees,
                    minimum=settings.min_bet,
                    maximum=settings.max_bet,
                )
            )
        if name in ("ruleset", "dealer") and await self.service.current_round(chat_id):
            lines.append(views.t("set.next_round"))
        await self.reply(update, "\n".join(lines))

    async def _target(
        self, update: Update, args: list[str], *, with_amount: bool = True
    ) -> tuple[Person, list[str]]:
        """Whose chips: the replied-to user, an @username the bot has seen, or a user id."""
        message = update.effective_message
        replied = message.reply_to_message if message is not None else None
        if (
            message is not None
            and message.is_topic_message
            and replied is not None
            and (replied.message_id == message.message_thread_id)
        ):
            replied = None  # in a forum, every message "replies" to its topic's first one
        if replied is not None and replied.from_user is not None and not replied.from_user.is_bot:
            target = person_of(replied.from_user)
            self.people[target.id] = target
            return target, args
        if args and args[0].startswith("@"):
            found = await self.service.find_user(args[0])
            if found is None:
                raise GameError("unknown_user", who=args[0][:40])
            return found, args[1:]
        if args and is_ascii_number(args[0]) and (len(args) >= 2 or not with_amount):
            user_id = int(args[0])
            known = await self.names([user_id])
            return known.get(user_id, Person(user_id)), args[1:]
        raise GameError("no_target")

    async def cmd_credit(self, update: Update, context: Any) -> None:
        """``/credit AMOUNT`` (as a reply, or with @username or an id): give chips (admins)."""
        await self._transfer(update, context, credit=True)

    async def cmd_debit(self, update: Update, context: Any) -> None:
        """``/debit AMOUNT``: take available chips back (admins)."""
        await self._transfer(update, context, credit=False)

    async def _transfer(self, update: Update, context: Any, *, credit: bool) -> None:
        chat_id, person = await self._require_admin(update)
        target, rest = await self._target(update, list(context.args or []))
        if not rest:
            raise GameError("amount_missing", example="/credit 100")
        amount = parse_typed_amount(rest[0])
        action = self.service.credit if credit else self.service.debit
        balance = await action(chat_id, person, target.id, amount, update_id=update.update_id)
        if balance is None:
            return
        await self.reply(
            update,
            await self.text(
                chat_id,
                "credit.done" if credit else "debit.done",
                amount=amount,
                name=display_name(target.id, {target.id: target}),
                available=balance.available,
            ),
        )

    async def cmd_fund(self, update: Update, context: Any) -> None:
        """``/fund AMOUNT``: move chips from the mint into the group's bank (admins)."""
        chat_id, person = await self._require_admin(update)
        amount = self._amount(context, "/fund 1000")
        balance = await self.service.fund(chat_id, person, amount, update_id=update.update_id)
        if balance is None:
            return
        await self.reply(
            update, await self.text(chat_id, "fund.done", amount=amount, balance=balance)
        )

    async def cmd_bank(self, update: Update, context: Any) -> None:
        """``/bank``: the group's bank balance."""
        chat_id, _, _ = self._ids(update)
        balance = await self.service.bank_balance(chat_id)
        await self.reply(update, await self.text(chat_id, "bank.balance", balance=balance))

    async def cmd_ledger(self, update: Update, context: Any) -> None:
        """``/ledger``: a player's statement (admins; as a reply, @username or id)."""
        chat_id, person = await self._require_admin(update)
        args = list(context.args or [])
        message = update.effective_message
        if args or (message is not None and message.reply_to_message is not None):
            target, _ = await self._target(update, args, with_amount=False)
        else:
            target = person
        views = await self.views(chat_id)
        name = display_name(target.id, {target.id: target})
        lines = await self.service.statement(chat_id, target.id, limit=15)
        if not lines:
            await self.reply(update, views.t("ledger.none", name=name))
            return
        text = [views.t("ledger.header", name=name)]
        text += [
            views.t(
                "ledger.line",
                transaction_id=line.transaction_id,
                kind=line.kind,
                round=f" #{line.round_id}" if line.round_id else "",
                change=format_signed(line.change, views.currency),
            )
            for line in lines
        ]
        await self.reply(update, "\n".join(text))

    async def cmd_audit(self, update: Update, context: Any) -> None:
        """``/audit``: recent admin actions (admins)."""
        chat_id, _ = await self._require_admin(update)
        views = await self.views(chat_id)
        entries = await self.service.audit_log(chat_id, limit=15)
        if not entries:
            await self.reply(update, views.t("audit.none"))
            return
        people = await self.names([entry.actor_id for entry in entries])
        lines = [views.t("audit.header")]
        for entry in entries:
            details = ", ".join(f"{key}={value}" for key, value in entry.details.items())
            lines.append(
                views.t(
                    "audit.line",
                    who=display_name(entry.actor_id, people),
                    action=entry.action,
                    details=html.escape(details),
                )
            )
        await self.reply(update, "\n".join(lines))


BOT_COMMANDS = [
    ("newround", "Start a round"),
    ("bid", "Bid for dealer: /bid 500"),
    ("bet", "Bet: /bet 20 (0 cancels)"),
    ("balance", "Your chips"),
    ("history", "Last rounds"),
    ("rules", "Rules of this table"),
    ("verify", "Check a round: /verify 12"),
    ("bank", "The group bank's balance"),
    ("help", "All commands"),
]


def build_application(
    config: Config, service: GameService, *, rate_limiter: bool = True
) -> tuple[Application[Any, Any, Any, Any, Any, Any], GameBot]:
    """The composition root: an ``Application`` with the game's handlers; run it with
    ``bot.telegram.serving.running``."""
    game = GameBot(config, service)
    builder: ApplicationBuilder[Any, Any, Any, Any, Any, Any] = (
        Application.builder()
        .token(config.require_token())
        .base_url(config.telegram_base_url)
        .concurrent_updates(ChatOrderedProcessor(game.locks))
    )
    if rate_limiter:
        builder = builder.rate_limiter(SendRateLimiter(max_retries=5))
    application = builder.build()
    game.install(application)
    return application, game

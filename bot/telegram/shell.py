"""The Telegram shell put together: the collaborators, the handlers by feature, and the
command registry, installed on one ``Application``.

Updates of one chat are handled one at a time (``ChatOrderedProcessor``; Grab presses
too, unless the database applies a round's steps in turn itself), different chats
concurrently; deadlines take the same per-chat turn, ahead of waiting commands. Every
command goes to the service, which does its work in one database transaction; the shell
renders what happened in the group's language.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from telegram import Update
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackContext,
    CallbackQueryHandler,
    MessageHandler,
    TypeHandler,
    filters,
)
from telegram.request import BaseRequest

from bot.config import Config
from bot.engine.errors import GameError
from bot.service.game import GameService, wall_clock_ms
from bot.telegram.admins import AdminCheck, MemberCheck
from bot.telegram.answers import AnswerKeeping
from bot.telegram.autobet_notices import AutobetNotices
from bot.telegram.board import Board
from bot.telegram.budget import GROUP_SENDS_PER_MINUTE
from bot.telegram.commands import Command, CommandRegistry, Handler, Where
from bot.telegram.deadlines import DeadlineObserver, Deadlines
from bot.telegram.delivery import ChatOutbox, retrying_after_flood
from bot.telegram.group_bots import SERVE, ServedGroups
from bot.telegram.handlers.admin import AdminHandlers
from bot.telegram.handlers.base import ShellParts
from bot.telegram.handlers.console import ConsoleHandlers
from bot.telegram.handlers.info import InfoHandlers
from bot.telegram.handlers.play import PlayHandlers
from bot.telegram.handlers.stats import StatsHandlers
from bot.telegram.handlers.table import TableHandlers
from bot.telegram.handlers.verify import VerifyHandlers
from bot.telegram.http import BotApiRequest, UpdatesRequest
from bot.telegram.lookups import ChatSettings, People, person_of
from bot.telegram.messenger import Messenger
from bot.telegram.miniapp_links import MiniAppLinks
from bot.telegram.miniapp_moves import MiniAppMoves
from bot.telegram.miniapp_rounds import MiniAppRounds
from bot.telegram.observers import BUTTON, MESSAGE, ShellObserver, Unobserved
from bot.telegram.ordering import ChatLocks, ChatOrderedProcessor
from bot.telegram.outages import OutageLog, database_unavailable_here
from bot.telegram.poll_window import UPDATES_IN_HAND, PollWindow
from bot.telegram.progress import RoundProgress
from bot.telegram.replies import Replies
from bot.telegram.timers import LoopTimers
from bot.telegram.update_objects import UpdatesBot

log = logging.getLogger(__name__)
#: The handler group that runs after every other (python-telegram-bot runs one handler per
#: group, groups in order): the one that waits for an update's answers to be written.
LAST_GROUP = 1_000

AnyApplication = Application[Any, Any, Any, Any, Any, Any]
#: How often the caches give back what quiet chats and users held.
FORGET_QUIET_SECONDS = 30.0
BARE_NUMBER = r"^\s*[0-9]{1,9}(\.[0-9]{1,2})?\s*$"


def command_registry(
    play: PlayHandlers,
    info: InfoHandlers,
    verify: VerifyHandlers,
    admin: AdminHandlers,
    console: ConsoleHandlers,
    stats: StatsHandlers,
    table: TableHandlers,
) -> CommandRegistry:
    """Every command, in the order the menus and ``/help`` list them."""
    group, private, anywhere = Where.GROUP, Where.PRIVATE, Where.ANYWHERE
    return CommandRegistry(
        [
            Command("newround", play.newround, group),
            Command("bid", play.bid, group),
            Command("bet", play.bet, group),
            Command("autobet", play.autobet, group),
            Command("balance", info.balance, group),
            Command("balance", info.balance_private, private),
            Command("history", info.history, group),
            Command("stats", stats.stats, group),
            Command("top", stats.top, group),
            Command("rules", info.rules, anywhere),
            Command("verify", verify.verify, group),
            Command("seed", verify.seed, anywhere),
            Command("bank", info.bank, group),
            Command("help", info.help, anywhere),
            Command("start", info.start, private, listed=False),
            Command("table", table.private, private),
            Command("console", console.private, private),
            Command("console", console.in_group, group, listed=False),
            Command("open", admin.open, group, admin=True),
            Command(SERVE, admin.serve, group, admin=True),
            Command("close", admin.close, group, admin=True),
            Command("config", admin.config, group, admin=True),
            Command("set", admin.set, group, admin=True),
            Command("credit", admin.credit, group, admin=True),
            Command("debit", admin.debit, group, admin=True),
            Command("fund", admin.fund, group, admin=True),
            Command("ledger", admin.ledger, group, admin=True),
            Command("audit", admin.audit, group, admin=True),
            Command("odds", stats.odds, group, admin=True),
        ],
        group_only=info.group_only,
    )


def bot_username(application: AnyApplication) -> str:
    """The bot's @username once it asked Telegram at start-up, "" before."""
    try:
        username: str = application.bot.username
    except RuntimeError:  # not initialized yet
        return ""
    return username


#: The window of every worker's count of a group's sends: Telegram's minute, and the
#: half second a send may take to reach the group before its slot is moved to then
#: (``bot.service.group_sends.LATE_MS``), and as much again for the clocks' ticks.
SHARED_WINDOW_SECONDS = 61.0


class GameBot:
    """The shell of one bot over its ``GameService``: builds its collaborators, installs
    their handlers on an ``Application``, recovers at start-up and drains at the end.

    ``token`` is the bot's (the config's first by default); the console's sign-in links
    are signed with the first, whichever bot sends them, as the console checks them."""

    def __init__(
        self,
        config: Config,
        service: GameService,
        *,
        token: str | None = None,
        clock: Callable[[], int] = wall_clock_ms,
        deadline_observer: DeadlineObserver | None = None,
        observer: ShellObserver | None = None,
    ) -> None:
        self.config = config
        console_token = config.tokens[0] if config.tokens else ""
        #: The bot's token ("" when the config has none: an ``Application`` asks for one).
        self.token = token or console_token
        self.service = service
        self.observer: ShellObserver = observer or Unobserved()
        self._outages = OutageLog(log)
        self.locks = ChatLocks()
        #: The updates this bot's poller fetched and has not confirmed yet.
        self.poll_window = PollWindow(UPDATES_IN_HAND)
        self.messenger = Messenger(
            observer=self.observer,
            shared_sends=service.group_sends(
                limit=GROUP_SENDS_PER_MINUTE, seconds=SHARED_WINDOW_SECONDS
            ),
        )
        self.outbox = ChatOutbox()
        self.chats = ChatSettings(service)
        self.people = People(service)
        self.replies = Replies(
            self.messenger,
            self.outbox,
            self.chats,
            per_minute=config.replies_per_minute,
            keeping=AnswerKeeping(service.kept_answers),
        )
        #: Where the bot's buttons open the Mini App (none when it is off).
        self.miniapp_links = MiniAppLinks(config.web.miniapp_url, str)
        self.board = Board(
            service,
            self.messenger,
            self.outbox,
            self.chats,
            self.people,
            edit_seconds=config.board_edit_seconds,
            lease_seconds=config.delivery_lease_seconds,
            clock=clock,
            links=self.miniapp_links,
        )
        self.deadlines = Deadlines(clock, deadline_observer)
        #: The deadlines' timers, once installed on an application.
        self.timers: LoopTimers | None = None
        self.progress = RoundProgress(
            service,
            self.locks,
            self.board,
            self.deadlines,
            self.replies,
            sweep_seconds=config.sweep_seconds,
            observer=deadline_observer,
            shell_observer=self.observer,
            autobet_notices=AutobetNotices(self.outbox, self.people, self.replies),
        )
        self.admins = AdminCheck(
            service, self.messenger, config.operators, cache_seconds=config.admin_cache_seconds
        )
        self.members = MemberCheck(self.messenger, cache_seconds=config.admin_cache_seconds)
        self.served = ServedGroups(service)
        #: The collaborators every handler works with.
        self.parts = parts = ShellParts(
            service, self.replies, self.chats, self.people, self.admins, self.progress
        )
        #: The Mini App's moves (``bot.web.miniapp``), played as the group's commands.
        self.miniapp_moves = MiniAppMoves(parts, self.locks)
        #: The Mini App's texts of past rounds and of the table, made as the commands'.
        self.miniapp_rounds = MiniAppRounds(parts)
        self.play = PlayHandlers(parts)
        self.verify = VerifyHandlers(parts)
        self.admin = AdminHandlers(parts, self.served)
        self.stats = StatsHandlers(parts)
        self.table = TableHandlers(parts, self.miniapp_links, self.messenger)
        self.console = ConsoleHandlers(
            parts, bot_token=console_token, public_url=config.web.console_url
        )
        # /help is drawn from the registry, which lists the handlers: tied up late.
        self.info = InfoHandlers(
            parts,
            group_help=lambda language: self.commands.help(language),
            private_help=lambda language: self.commands.help_private(language),
        )
        self.commands = command_registry(
            self.play, self.info, self.verify, self.admin, self.console, self.stats, self.table
        )

    def install(self, application: AnyApplication) -> None:
        """Register every handler and the error handler on ``application``."""
        self.messenger.attach(application.bot)
        self.miniapp_links.username = lambda: bot_username(application)
        self.timers = LoopTimers(application.create_task)
        self.deadlines.attach(self.timers, self.progress.advance, self.progress.start_due)
        # First: python-telegram-bot's other handlers ask a press for its message, which
        # is an InaccessibleMessage here (bot.telegram.update_objects), and it warns.
        application.add_handler(CallbackQueryHandler(self._guard(self.play.button, BUTTON)))
        self.commands.install(application, self._guard)
        group = filters.ChatType.GROUPS
        application.add_handler(
            MessageHandler(
                group & filters.Regex(BARE_NUMBER) & ~filters.COMMAND,
                self._guard(self.play.bare_number, MESSAGE),
            )
        )
        application.add_handler(
            MessageHandler(group & filters.TEXT, self._guard(self.play.text, MESSAGE))
        )
        # After every other handler (and the error handler): the update is confirmed to
        # Telegram once this returns, so its waiting answers must be in the database.
        application.add_handler(TypeHandler(Update, self._answers_written), group=LAST_GROUP)
        application.add_error_handler(self.on_error)

    def _guard(self, handler: Handler, kind: str) -> Handler:
        """Note the sender, then run ``handler``; a ``GameError`` becomes a short reply.
        The observer hears of each update of ``kind`` handled, and how long it took (an
        unexpected error too, which ``on_error`` then logs). A group another bot serves
        is left to that bot, but for ``/serve``, which moves it to this one."""
        observer = self.observer

        async def guarded(update: Update, context: Any) -> None:
            chat = update.effective_chat
            if (
                chat is not None
                and chat.type != chat.PRIVATE
                and kind != SERVE
                and not await self.served.serves(chat.id)
            ):
                await self._served_elsewhere(update)
                return
            started = time.perf_counter()
            user = update.effective_user
            if user is not None:
                self.people.saw(person_of(user))
            if update.message is not None:  # a copy the bot sends later comes after it
                self.messenger.strays.saw(update.message.chat_id, update.message.message_id)
            try:
                await handler(update, context)
            except GameError as error:
                await self.replies.reply_error(update, error)
            finally:
                observer.update_handled(kind, time.perf_counter() - started)

        return guarded

    async def _served_elsewhere(self, update: Update) -> None:
        """A button of a group another bot serves now is answered by a toast saying so;
        a message is that bot's to answer."""
        query, chat = update.callback_query, update.effective_chat
        if query is not None and chat is not None:
            self.replies.toast(query.id, await self.chats.text(chat.id, "serve.other_bot"))

    async def _answers_written(self, update: Update, context: Any) -> None:
        await self.replies.keeping.written()

    async def on_error(self, update: object, context: CallbackContext[Any, Any, Any, Any]) -> None:
        """Log unexpected errors; tell the user nothing changed where we can, in a line
        that needs no database (the failure may be the database's): that it cannot be
        reached now, or that something went wrong."""
        error = context.error
        unavailable = error is not None and database_unavailable_here(error)
        what = "an update" if isinstance(update, Update) else "a job"
        if unavailable and error is not None:
            told = " (its sender is told)" if isinstance(update, Update) else ""
            self._outages.unavailable(what + told, error)
        else:
            log.error("error while handling %s", what, exc_info=error)
        if isinstance(update, Update) and update.effective_chat is not None:
            key = "error.database_unavailable" if unavailable else "error.internal"
            text = self.chats.text_offline(update.effective_chat, update.effective_user, key)
            self.replies.reply(update, text)

    async def start(self, application: AnyApplication) -> None:
        """After start-up: publish the command menus, finish overdue rounds, time the open
        ones, and start the sweep."""
        await self.commands.publish_menus(application.bot)
        timers = self.timers
        assert timers is not None, "start() before install()"
        reopened = await self.progress.recover(timers)
        timers.run_repeating(
            self._forget_quiet, interval=FORGET_QUIET_SECONDS, name="forget quiet chats"
        )
        log.info("ready: %d open rounds rescheduled", reopened)

    def forget_quiet(self) -> None:
        """Give back what chats and users that went quiet hold in the caches (entries
        whose time ran out; a cache drops them itself only when it is next written, which
        a bot gone quiet never does)."""
        self.service.forget_quiet()
        self.chats.forget_quiet()
        self.people.forget_quiet()
        self.admins.forget_quiet()
        self.members.forget_quiet()
        self.served.forget_quiet()
        self.board.forget_quiet()
        self.replies.budget.forget_quiet()
        self.messenger.group_sends.forget_quiet()

    async def _forget_quiet(self, context: CallbackContext[Any, Any, Any, Any]) -> None:
        self.forget_quiet()

    def abandon(self) -> None:
        """Stop sending and timing: drop the edits, answers and messages still waiting,
        and the timers (a bench that ends before they could go out, and closes the
        database after; a real stop drains instead)."""
        if self.timers is not None:
            self.timers.stop()
        self.board.cancel_edits()
        self.replies.abandon()
        self.outbox.abandon()

    async def drain(self, timeout: float = 10.0) -> None:
        """Let answers and queued messages go out (before stopping), then drop what could
        not within ``timeout``, rather than let it run into the database as it closes
        (boards and results not yet delivered are sent by the next start; an edit's
        round shows itself on the next change). No deadline fires meanwhile: the next
        start times the open rounds again."""
        if self.timers is not None:
            self.timers.stop()
        await self.board.drain(timeout)
        await self.replies.drain(timeout)
        self.abandon()


def build_application(
    game: GameBot,
    *,
    request: BaseRequest | None = None,
    get_updates_request: BaseRequest | None = None,
    rate_limiter: bool = True,
) -> AnyApplication:
    """An ``Application`` for the game's token and API, its updates handled chat by chat,
    with the game's handlers installed (see ``bot.bootstrap.assemble``)."""
    config = game.config
    # The bot's own transport unless the caller brings one (bot.telegram.http says why).
    # Both tell the messenger whether Telegram answers (bot.telegram.reachability).
    reachability = game.messenger.reachability
    bot = UpdatesBot(
        game.token or config.require_token(),
        base_url=config.telegram_base_url,
        request=request or BotApiRequest(reachability=reachability),
        get_updates_request=get_updates_request or UpdatesRequest(game.poll_window, reachability),
        rate_limiter=retrying_after_flood(game.observer) if rate_limiter else None,
    )
    builder: ApplicationBuilder[Any, Any, Any, Any, Any, Any] = (
        Application.builder()
        .bot(bot)
        .concurrent_updates(ChatOrderedProcessor(game.locks))
        .job_queue(None)  # the shell's timers are the loop's own (bot.telegram.timers)
    )
    application = builder.build()
    game.install(application)
    return application

"""The command registry: each command once (its name, handler, where it works, whether it
is for admins), which drives the handlers' registration, the command menus Telegram shows
(``setMyCommands``, in each language) and ``/help``."""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from telegram import (
    BotCommand,
    BotCommandScope,
    BotCommandScopeAllChatAdministrators,
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
    Update,
)
from telegram.error import TelegramError
from telegram.ext import Application, CommandHandler, filters

from bot.engine.settings import LANGUAGES
from bot.telegram.i18n import translate
from bot.telegram.observers import GROUP_ONLY
from bot.telegram.telegram_needs import BotApi

log = logging.getLogger(__name__)

Handler = Callable[[Update, Any], Coroutine[Any, Any, None]]

#: The languages with menus of their own. Telegram keys a menu by a two-letter ISO 639-1
#: code, so there is one for Chinese (``zh``, Simplified), which Traditional readers
#: (``zh-Hant``) see too; /help and every answer are in Traditional for them.
MENU_LANGUAGES = tuple(language for language in LANGUAGES if len(language) == 2)

#: Every command description in the catalogues, as ``command.<name>`` (a command that
#: works in private chats differently has ``<name>.private`` too).
DESCRIBED = frozenset(
    {
        *("newround", "bid", "bet", "autobet", "balance", "balance.private", "history"),
        *("rules", "verify", "seed", "bank", "help", "start.private", "open", "close"),
        *("config", "set", "serve"),
        *("credit", "debit", "fund", "ledger", "audit", "console", "console.private"),
        *("stats", "top", "odds", "table.private"),
    }
)


class Where(enum.Enum):
    """Where a command works."""

    GROUP = "group"
    PRIVATE = "private"
    ANYWHERE = "anywhere"

    @property
    def in_groups(self) -> bool:
        return self is not Where.PRIVATE

    @property
    def in_private(self) -> bool:
        return self is not Where.GROUP


@dataclass(frozen=True, slots=True)
class Command:
    """A command: ``/name`` runs ``handler`` where it works. Its description is the
    catalogue's ``command.<name>`` (``command.<name>.private`` for a private variant)."""

    name: str
    handler: Handler
    where: Where
    admin: bool = False
    #: Shown in the menu and in ``/help`` (``/start`` is not: Telegram sends it itself).
    listed: bool = True

    @property
    def described_as(self) -> str:
        """Which of ``DESCRIBED`` describes it."""
        return f"{self.name}.private" if self.where is Where.PRIVATE else self.name

    def description(self, language: str) -> str:
        """What it does, for menus and ``/help``."""
        return translate(language, f"command.{self.described_as}")


class CommandRegistry:
    """Every command of the bot, in the order the menus and ``/help`` list them."""

    def __init__(self, commands: Sequence[Command], *, group_only: Handler) -> None:
        undescribed = [c.name for c in commands if c.described_as not in DESCRIBED]
        if undescribed:
            raise ValueError(f"commands without a description: {undescribed}")
        self.commands = tuple(commands)
        #: Answers a group command sent in a private chat.
        self.group_only = group_only

    def install(
        self,
        application: Application[Any, Any, Any, Any, Any, Any],
        guard: Callable[[Handler, str], Handler],
    ) -> None:
        """Register a handler per command (``guard`` wraps each, given the command's name
        as the kind of update it handles), and one that answers a group command sent in
        private (``GROUP_ONLY``)."""
        where_filters = {
            Where.GROUP: filters.ChatType.GROUPS,
            Where.PRIVATE: filters.ChatType.PRIVATE,
            Where.ANYWHERE: filters.ALL,
        }
        for command in self.commands:
            application.add_handler(
                CommandHandler(
                    command.name, guard(command.handler, command.name), where_filters[command.where]
                )
            )
        private_names = {c.name for c in self.commands if c.where.in_private}
        group_only = sorted({c.name for c in self.commands} - private_names)
        application.add_handler(
            CommandHandler(group_only, guard(self.group_only, GROUP_ONLY), filters.ChatType.PRIVATE)
        )

    def listed(self, *, in_groups: bool, admin: bool | None = None) -> list[Command]:
        """Listed commands where they work (``admin``: only admins' or only players')."""
        return [
            command
            for command in self.commands
            if command.listed
            and (command.where.in_groups if in_groups else command.where.in_private)
            and (admin is None or command.admin == admin)
        ]

    def menu(self, language: str, *, in_groups: bool, admin: bool) -> list[BotCommand]:
        """A command menu: players' commands, with admins' too if ``admin``."""
        commands = self.listed(in_groups=in_groups, admin=None if admin else False)
        return [BotCommand(c.name, c.description(language)) for c in commands]

    def help(self, language: str) -> str:
        """``/help`` in a group: players' commands, then admins'."""
        lines = [translate(language, "help.players")]
        lines += self._lines(language, self.listed(in_groups=True, admin=False))
        lines.append(translate(language, "help.admins"))
        lines += self._lines(language, self.listed(in_groups=True, admin=True))
        return "\n".join(lines)

    def help_private(self, language: str) -> str:
        """``/help`` in a private chat: what works there."""
        lines = [translate(language, "help.private")]
        lines += self._lines(language, self.listed(in_groups=False))
        return "\n".join(lines)

    @staticmethod
    def _lines(language: str, commands: list[Command]) -> list[str]:
        return [f"/{c.name} – {c.description(language)}" for c in commands]

    async def publish_menus(self, bot: BotApi) -> None:
        """Tell Telegram the menus: for group members, group admins and private chats,
        in each language of ``MENU_LANGUAGES`` (English also for everyone else)."""
        scopes: list[tuple[BotCommandScope, bool, bool]] = [
            (BotCommandScopeAllGroupChats(), True, False),
            (BotCommandScopeAllChatAdministrators(), True, True),
            (BotCommandScopeAllPrivateChats(), False, False),
        ]
        for scope, in_groups, admin in scopes:
            for language in (None, *MENU_LANGUAGES):
                menu = self.menu(language or "en", in_groups=in_groups, admin=admin)
                try:
                    await bot.set_my_commands(menu, scope=scope, language_code=language)
                except TelegramError as error:
                    log.warning("could not set the command menu: %s", error)
                    return

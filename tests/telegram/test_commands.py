"""CommandRegistry, with the bot's own command list (``bot.telegram.shell``): handlers
registered where each command works (and the group-only answer in private chats), the
menus per scope and language, and ``/help`` drawn from the registry."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest
from telegram import (
    BotCommand,
    BotCommandScopeAllChatAdministrators,
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
    Update,
)
from telegram.error import NetworkError
from telegram.ext import Application, CommandHandler

from bot.engine.settings import LANGUAGES
from bot.telegram.commands import MENU_LANGUAGES, CommandRegistry, Handler
from bot.telegram.i18n import translate
from bot.telegram.shell import command_registry
from tests.helpers.telegram import GROUP, FakeBot, message_update, person
from tests.helpers.telegram_shells import GameShell

PRIVATE = 11
ANN = person(PRIVATE, "Ann")


#: The bot's own shell: its handlers are the real ones, and none is called here.
GAME = GameShell().game


def registry() -> CommandRegistry:
    return command_registry(
        GAME.play, GAME.info, GAME.verify, GAME.admin, GAME.console, GAME.stats, GAME.table
    )


ADMIN_COMMANDS = {command.name for command in registry().commands if command.admin}


@pytest.fixture
async def menus() -> list[tuple[str, str | None, list[BotCommand]]]:
    """Every menu the registry publishes: (scope type, language code, commands)."""
    bot = FakeBot()
    await registry().publish_menus(bot)
    return [
        (call.args["scope"].type, call.args["language_code"], call.args["commands"])
        for call in bot.of("set_my_commands")
    ]


# -- menus --------------------------------------------------------------------------------


def test_the_bot_has_admin_commands_to_hide() -> None:
    # The menu tests below mean something only if there are some.
    assert {"open", "close", "credit", "set"} <= ADMIN_COMMANDS


async def test_there_is_a_menu_for_each_scope_in_each_language_and_for_everyone_else(
    menus: list[tuple[str, str | None, list[BotCommand]]],
) -> None:
    scopes = [
        BotCommandScopeAllGroupChats.ALL_GROUP_CHATS,
        BotCommandScopeAllChatAdministrators.ALL_CHAT_ADMINISTRATORS,
        BotCommandScopeAllPrivateChats.ALL_PRIVATE_CHATS,
    ]
    languages = [None, "en", "zh", "vi", "ms"]
    assert MENU_LANGUAGES == ("en", "zh", "vi", "ms")  # Telegram takes two-letter codes only

    assert [(scope, language) for scope, language, _ in menus] == [
        (scope, language) for scope in scopes for language in languages
    ]
    assert all(commands for _, _, commands in menus)


async def test_admin_commands_are_only_in_the_group_admins_menu(
    menus: list[tuple[str, str | None, list[BotCommand]]],
) -> None:
    for scope, language, commands in menus:
        names = {command.command for command in commands}
        if scope == BotCommandScopeAllChatAdministrators.ALL_CHAT_ADMINISTRATORS:
            assert names >= ADMIN_COMMANDS, language
            assert {"bet", "bid", "help"} <= names, language  # players' too
        else:
            assert not ADMIN_COMMANDS & names, (scope, language)


async def test_each_menu_lists_what_works_there_once(
    menus: list[tuple[str, str | None, list[BotCommand]]],
) -> None:
    for scope, _, commands in menus:
        names = [command.command for command in commands]
        assert len(names) == len(set(names))
        assert "start" not in names  # Telegram sends /start itself
        if scope == BotCommandScopeAllPrivateChats.ALL_PRIVATE_CHATS:
            assert names == ["balance", "rules", "seed", "help", "table", "console"]
        else:
            assert {"newround", "bid", "bet", "verify", "seed"} <= set(names)


async def test_each_menu_is_in_its_language_and_english_for_everyone_else(
    menus: list[tuple[str, str | None, list[BotCommand]]],
) -> None:
    def bet_description(language: str | None) -> str:
        (group_menu,) = [
            commands
            for scope, code, commands in menus
            if scope == BotCommandScopeAllGroupChats.ALL_GROUP_CHATS and code == language
        ]
        (bet,) = [command for command in group_menu if command.command == "bet"]
        return bet.description

    for language in ("zh", "vi", "ms"):
        assert bet_description(language) == translate(language, "command.bet")
        assert bet_description(language) != translate("en", "command.bet"), language
    assert bet_description(None) == bet_description("en") == translate("en", "command.bet")


async def test_a_menu_telegram_refuses_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bot = FakeBot()
    bot.fail_next(NetworkError("connection reset"), "set_my_commands")

    with caplog.at_level(logging.WARNING, logger="bot.telegram.commands"):
        await registry().publish_menus(bot)

    assert "connection reset" in caplog.text


# -- /help --------------------------------------------------------------------------------


def help_names(text: str) -> list[str]:
    return re.findall(r"^/(\w+) – ", text, flags=re.MULTILINE)


@pytest.mark.parametrize("language", LANGUAGES)
def test_group_help_lists_every_listed_command_once_players_then_admins(language: str) -> None:
    commands = registry()
    players = [c.name for c in commands.listed(in_groups=True, admin=False)]
    admins = [c.name for c in commands.listed(in_groups=True, admin=True)]

    text = commands.help(language)

    assert help_names(text) == players + admins
    assert len(set(players + admins)) == len(players + admins)
    assert set(admins) == ADMIN_COMMANDS
    assert "start" not in help_names(text)
    lines = text.splitlines()
    assert lines[0] == translate(language, "help.players")
    assert lines[len(players) + 1] == translate(language, "help.admins")
    assert f"/bet – {translate(language, 'command.bet')}" in lines


def test_private_help_lists_what_works_in_a_private_chat() -> None:
    text = registry().help_private("en")

    assert help_names(text) == ["balance", "rules", "seed", "help", "table", "console"]
    assert f"/balance – {translate('en', 'command.balance.private')}" in text.splitlines()


# -- handlers -----------------------------------------------------------------------------


def installed() -> list[CommandHandler[Any, Any]]:
    """The command handlers the registry installs, in order, each callback the handler
    it guards."""
    application = Application.builder().token("123:TEST").build()
    registry().install(application, _Guarded)
    return [handler for handler in application.handlers[0] if isinstance(handler, CommandHandler)]


class _Guarded:
    def __init__(self, handler: Handler, kind: str) -> None:
        self.handler = handler
        self.kind = kind

    async def __call__(self, update: Update, context: Any) -> None:
        await self.handler(update, context)


def handled_by(update: Update) -> str | None:
    """The handler that gets ``update`` (the first whose command and filters match), as
    ``FeatureHandlers.name``."""
    assert update.effective_message is not None and update.effective_message.text
    name = update.effective_message.text.split()[0][1:]
    for handler in installed():
        if name in handler.commands and handler.filters.check_update(update):
            assert isinstance(handler.callback, _Guarded)
            return handler.callback.handler.__qualname__
    return None


@pytest.mark.parametrize(
    ("chat_id", "text", "handler"),
    [
        (GROUP, "/bet 5", "PlayHandlers.bet"),
        (PRIVATE, "/bet 5", "InfoHandlers.group_only"),
        (PRIVATE, "/credit 5", "InfoHandlers.group_only"),
        (GROUP, "/balance", "InfoHandlers.balance"),
        (PRIVATE, "/balance", "InfoHandlers.balance_private"),
        (GROUP, "/rules", "InfoHandlers.rules"),
        (PRIVATE, "/rules", "InfoHandlers.rules"),
        (PRIVATE, "/start", "InfoHandlers.start"),
        (GROUP, "/open", "AdminHandlers.open"),
    ],
)
def test_each_command_is_handled_where_it_works_and_group_commands_are_answered_in_private(
    chat_id: int, text: str, handler: str
) -> None:
    assert handled_by(message_update(chat_id, ANN, text)) == handler


def test_a_private_command_sent_in_a_group_is_not_handled() -> None:
    assert handled_by(message_update(GROUP, ANN, "/start")) is None


def test_every_handler_is_guarded() -> None:
    assert all(isinstance(handler.callback, _Guarded) for handler in installed())


def test_each_guarded_handler_reports_its_command_as_the_kind_of_update() -> None:
    kinds = {}
    for handler in installed():
        assert isinstance(handler.callback, _Guarded)
        kinds[tuple(sorted(handler.commands))] = handler.callback.kind
    # Each command's own handler is reported under its name (balance twice: group and private).
    for name in ("newround", "bid", "bet", "balance", "open", "audit"):
        assert kinds[(name,)] == name
    group_only = next(kind for names, kind in kinds.items() if len(names) > 1)
    assert group_only == "group_only"

"""The error handler: every update whose handling failed is answered, in a line that
needs no database. When the database is what failed (unreachable), the line says so: the
player learns nothing changed and to try again, in the group's language or their own."""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator

import pytest
from telegram import Update, User
from telegram.error import NetworkError
from telegram.ext import Application, CallbackContext

from bot.config import Config
from bot.service.game import GameService
from bot.store.db import Database
from bot.telegram.i18n import translate
from bot.telegram.outages import database_unavailable_here
from bot.telegram.shell import GameBot
from tests.helpers.telegram import GROUP, FakeBot, button_update, eventually, message_update

CHINESE = User(5, "Eko", False, language_code="zh")


def closed_port() -> int:
    """A local port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture
async def game() -> AsyncIterator[tuple[GameBot, FakeBot]]:
    """The shell over a PostgreSQL server that is not there."""
    database = Database.from_url(f"postgresql+asyncpg://postgres@127.0.0.1:{closed_port()}/x")
    game = GameBot(Config(), GameService(database))
    bot = FakeBot()
    game.messenger.attach(bot)
    yield game, bot
    await database.dispose()


async def failure_of(game: GameBot) -> Exception:
    """What a command's use case raises with the database down."""
    try:
        await game.service.balance(GROUP, CHINESE.id)
    except Exception as error:
        return error
    raise AssertionError("the database answered")


async def handle_error(game: GameBot, update: Update, error: Exception) -> None:
    application = Application.builder().token("123:TEST").build()
    await game.on_error(update, CallbackContext.from_error(update, error, application))
    await game.outbox.drain(5.0)


async def test_a_command_the_database_could_not_take_is_answered_so_in_the_users_language(
    game: tuple[GameBot, FakeBot], caplog: pytest.LogCaptureFixture
) -> None:
    shell, bot = game
    error = await failure_of(shell)
    update = message_update(GROUP, CHINESE, "/balance", message_id=9)

    with caplog.at_level(logging.WARNING, logger="bot.telegram.shell"):
        await handle_error(shell, update, error)

    (call,) = bot.of("send_message")
    assert call.args["text"] == translate("zh", "error.database_unavailable")
    assert call.args["reply_to_message_id"] == 9
    # An outage is expected: one line, no traceback.
    (record,) = [record for record in caplog.records if record.name == "bot.telegram.shell"]
    assert record.levelno == logging.WARNING and record.exc_info is None


async def test_a_button_the_database_could_not_take_is_answered_by_its_toast(
    game: tuple[GameBot, FakeBot],
) -> None:
    shell, bot = game
    error = await failure_of(shell)

    await handle_error(shell, button_update(GROUP, CHINESE, "7:bet:100"), error)
    await eventually(lambda: bool(bot.of("answer_callback_query")))

    (toast,) = bot.of("answer_callback_query")
    assert toast.args["text"] == translate("zh", "error.database_unavailable")


async def test_a_bug_is_logged_with_its_traceback_and_answered_without_the_database(
    game: tuple[GameBot, FakeBot], caplog: pytest.LogCaptureFixture
) -> None:
    shell, bot = game

    with caplog.at_level(logging.ERROR, logger="bot.telegram.shell"):
        await handle_error(shell, message_update(GROUP, CHINESE, "/rules"), KeyError("a bug"))

    assert bot.texts == [translate("zh", "error.internal")]
    assert caplog.records[0].exc_info is not None


def test_a_telegram_failure_is_not_the_databases() -> None:
    # aiohttp's refused connection is an OSError too, under python-telegram-bot's error.
    try:
        try:
            raise ConnectionRefusedError(111, "Connect call failed")
        except OSError as cause:
            raise NetworkError("aiohttp.ClientConnectorError") from cause
    except NetworkError as error:
        assert database_unavailable_here(error) is False
    assert database_unavailable_here(ConnectionRefusedError(111, "refused")) is True
    assert database_unavailable_here(KeyError("a bug")) is False

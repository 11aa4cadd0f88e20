"""Start-up failures worded for the operator (``bot.startup_errors``), and secrets kept out
of what is printed when a failure is not known, and out of logged tracebacks.

The failures a real process meets are in ``tests/e2e/test_startup_errors.py``; these are
the ones a test cannot easily cause for real.
"""

from __future__ import annotations

import errno
import logging
from typing import Literal

import pytest
from telegram.error import InvalidToken, TimedOut

from bot import event_loop
from bot.config import Config, WebConfig, WebhookConfig
from bot.startup_errors import explain, unexpected
from bot.store.migrate import MigrationFailed
from bot.telegram import runner
from bot.telegram.runner import configure_logging
from bot.web.server import WebListenFailed

TOKEN = "123456789:AAEsecretPartOfTheToken_xyz"
SECRET = TOKEN.partition(":")[2]
CONFIG = Config(
    telegram_token=TOKEN,
    telegram_base_url="https://api.telegram.org/bot",
    database_url="postgresql://niuniu:hunter2@db.example:6543/niuniu",
)


def _raised(error: BaseException, cause: BaseException | None = None) -> BaseException:
    """``error`` as raised (with a traceback), from ``cause``."""
    try:
        raise error from cause
    except BaseException as caught:
        return caught


def test_a_token_telegram_refuses_is_worded_without_the_token() -> None:
    # What PTB raises: its own message holds the token, the cause holds Telegram's answer.
    error = _raised(
        InvalidToken(f"The token `{TOKEN}` was rejected by the server."),
        InvalidToken("Unauthorized"),
    )
    assert explain(error, CONFIG) == (
        "Telegram at https://api.telegram.org/bot refused the bot token (Unauthorized): "
        "set NIUNIU_TELEGRAM_TOKEN or [telegram] token"
    )


def test_not_found_also_points_at_the_bot_api_url() -> None:
    error = _raised(InvalidToken(f"The token `{TOKEN}` was rejected"), InvalidToken("Not Found"))
    line = explain(error, CONFIG)
    assert line is not None and line.endswith(
        "set NIUNIU_TELEGRAM_TOKEN or [telegram] token, "
        "and check NIUNIU_TELEGRAM_BASE_URL or [telegram] base_url"
    )


def test_telegram_that_does_not_answer_in_time() -> None:
    assert explain(_raised(TimedOut()), CONFIG) == (
        "Telegram at https://api.telegram.org/bot did not answer in time: check the network "
        "or NIUNIU_TELEGRAM_BASE_URL or [telegram] base_url"
    )


@pytest.mark.parametrize("number", [errno.EADDRINUSE, errno.EACCES])
def test_a_webhook_port_that_cannot_be_listened_on(number: int) -> None:
    config = Config(
        telegram_token=TOKEN,
        mode="webhook",
        webhook=WebhookConfig(listen="0.0.0.0", port=443, secret_token="webhook_SECRET_1"),
    )
    line = explain(_raised(OSError(number, "Some Reason")), config)
    assert line == (
        "cannot listen for Telegram's webhook on 0.0.0.0:443 (some reason): "
        "fix [telegram.webhook] listen or port"
    )
    assert explain(_raised(OSError(number, "Some Reason")), CONFIG) is None  # polling


@pytest.mark.parametrize("mode", ["polling", "webhook"])
def test_a_web_server_address_that_cannot_be_listened_on(
    mode: Literal["polling", "webhook"],
) -> None:
    config = Config(
        telegram_token=TOKEN,
        mode=mode,
        webhook=WebhookConfig(listen="0.0.0.0", port=443, secret_token="webhook_SECRET_1"),
        web=WebConfig(host="127.0.0.1", port=9090),
    )
    error = _raised(WebListenFailed(errno.EADDRINUSE, "Address already in use"))
    assert explain(error, config) == (
        "cannot listen for the web server on 127.0.0.1:9090 (address already in use): "
        "fix [web] listen or NIUNIU_WEB_LISTEN"
    )


def test_a_failure_not_known_is_left_to_the_traceback_with_the_secrets_blanked() -> None:
    error = _raised(RuntimeError(f"bad {TOKEN} and hunter2"), ValueError(f"inner {SECRET}"))
    assert explain(error, CONFIG) is None
    text = unexpected(error, CONFIG)
    assert "RuntimeError: bad <redacted> and <redacted>" in text
    assert "ValueError: inner <redacted>" in text
    assert "Traceback" in text
    assert SECRET not in text and "hunter2" not in text


def test_with_several_bots_every_token_is_blanked_and_a_refusal_names_both_settings() -> None:
    second = "987654:AAEanotherSecretPart_abc"
    config = Config(telegram_token=TOKEN, telegram_tokens=(second,))
    error = _raised(RuntimeError(f"bad {second} and {second.partition(':')[2]}"))
    text = unexpected(error, config)
    assert "RuntimeError: bad <redacted> and <redacted>" in text
    refused = _raised(
        InvalidToken(f"The token `{second}` was rejected"), InvalidToken("Unauthorized")
    )
    assert explain(refused, config) == (
        "Telegram at https://api.telegram.org/bot refused the bot token (Unauthorized): "
        "set NIUNIU_TELEGRAM_TOKEN and NIUNIU_TELEGRAM_TOKENS, or [telegram] token and tokens"
    )


def test_a_refused_database_connection_names_the_host_and_port() -> None:
    error = _raised(ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed"))
    line = explain(_raised(MigrationFailed("refused"), error), CONFIG)
    assert line == (
        "cannot connect to PostgreSQL at db.example:6543: connection refused (is it running "
        "and listening there? the host and port are in NIUNIU_DATABASE_URL or [database] url)"
    )


def test_a_logged_traceback_never_shows_the_token(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        configure_logging("INFO", [TOKEN])
        try:
            raise InvalidToken(f"The token `{TOKEN}` was rejected by the server.")
        except InvalidToken:
            logging.getLogger("test").exception("start-up failed with %s", TOKEN)
    finally:
        root.handlers[:], root.level = handlers, level
    logged = capsys.readouterr().err
    assert "start-up failed with <redacted>" in logged
    assert "InvalidToken: The token `<redacted>` was rejected" in logged
    assert SECRET not in logged


@pytest.mark.parametrize("missing", [[], ["NotoColorEmoji.ttf", "NotoSansCJK-Regular.ttc"]])
def test_run_warns_in_one_line_of_fonts_the_pictures_miss_and_what_to_install(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, missing: list[str]
) -> None:
    monkeypatch.setattr(runner, "missing_fonts", lambda: missing)
    monkeypatch.setattr(runner, "migrate", lambda url: None)
    monkeypatch.setattr(event_loop, "run", lambda coroutine: coroutine.close())
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        runner.run_bot(CONFIG)
    finally:
        root.handlers[:], root.level = handlers, level
    warnings = [line for line in capsys.readouterr().err.splitlines() if "fonts missing" in line]
    if not missing:
        assert warnings == []
        return
    (line,) = warnings
    assert "WARNING" in line and "NotoColorEmoji.ttf, NotoSansCJK-Regular.ttc" in line
    assert line.endswith("apt-get install fonts-noto-cjk fonts-noto-color-emoji")

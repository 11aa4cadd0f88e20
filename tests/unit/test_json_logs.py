"""``[bot] log_format = "json"``: each record is one JSON object on one line, with the
token blanked as in text logs, tracebacks included."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import datetime

import pytest
from telegram.error import InvalidToken

from bot.telegram.runner import configure_logging

TOKEN = "123456789:AAEexampleSECRETtokenPART_-xyz"
SECRET = TOKEN.partition(":")[2]


@pytest.fixture
def root_logging() -> Iterator[None]:
    """Put the root logger back as it was (configure_logging replaces its handlers)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:], root.level = handlers, level


def logged_lines(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    """Every line logged to stderr, each parsed as JSON (a line that is not fails)."""
    text = capsys.readouterr().err
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_each_record_is_one_json_object_on_one_line(
    capsys: pytest.CaptureFixture[str], root_logging: None
) -> None:
    configure_logging("INFO", [TOKEN], "json")
    log = logging.getLogger("bot.test")
    log.info("a round of %d players\nand a second line", 5)
    log.debug("below the level")
    log.warning('名字 <b>& "quotes"')
    first, second = logged_lines(capsys)
    assert set(first) == {"time", "level", "logger", "message"}
    assert (first["level"], first["logger"]) == ("INFO", "bot.test")
    assert first["message"] == "a round of 5 players\nand a second line"
    assert datetime.fromisoformat(str(first["time"])).utcoffset() is not None
    assert second["message"] == '名字 <b>& "quotes"'
    assert second["level"] == "WARNING"


def test_the_token_is_blanked_in_json_messages_and_tracebacks(
    capsys: pytest.CaptureFixture[str], root_logging: None
) -> None:
    configure_logging("INFO", [TOKEN], "json")
    log = logging.getLogger("bot.test")
    log.info("asking %s/getMe", f"https://api.telegram.org/bot{TOKEN}")
    try:
        raise InvalidToken(f"The token `{TOKEN}` was rejected by the server.")
    except InvalidToken:
        log.exception("start-up failed")
    asked, failed = logged_lines(capsys)
    assert asked["message"] == "asking https://api.telegram.org/bot<redacted>/getMe"
    assert failed["message"] == "start-up failed"
    assert failed["level"] == "ERROR"
    exc = str(failed["exc"])
    assert exc.startswith("Traceback (most recent call last):")
    assert "InvalidToken: The token `<redacted>` was rejected" in exc
    assert SECRET not in json.dumps([asked, failed])


def test_text_logs_stay_lines_for_people(
    capsys: pytest.CaptureFixture[str], root_logging: None
) -> None:
    configure_logging("INFO", [TOKEN])
    logging.getLogger("bot.test").info("serving")
    line = capsys.readouterr().err
    assert line.rstrip().endswith(" INFO bot.test: serving")
    with pytest.raises(json.JSONDecodeError):
        json.loads(line)

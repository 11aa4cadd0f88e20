"""The message catalogue, the views' escaping and the log redaction, without Telegram."""

from __future__ import annotations

import html
import logging
import re
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.engine.round import Phase, advance, bet, bid, start_round
from bot.engine.settings import Settings
from bot.service.game import Person
from bot.telegram.i18n import CATALOGUE, EN, translate
from bot.telegram.messenger import split_message
from bot.telegram.runner import RedactSecrets
from bot.telegram.views import ButtonPress, Views, display_name


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("language", sorted(CATALOGUE))
def test_every_language_has_every_message_with_the_same_placeholders(language: str) -> None:
    messages = CATALOGUE[language]
    assert set(messages) == set(EN)
    for key, template in messages.items():
        assert _fields(template) <= _fields(EN[key]), key


def test_money_parameters_are_formatted_with_the_currency() -> None:
    assert (
        translate("en", "error.bet_too_small", "RM", minimum=150) == "The smallest bet is RM1.50."
    )
    assert translate("zh", "error.bet_too_small", "RM", minimum=150) == "最小下注 RM1.50。"


def test_names_with_html_are_escaped() -> None:
    people = {7: Person(7, "<b>&")}
    assert display_name(7, people) == "&lt;b&gt;&amp;"
    assert display_name(8, people) == "user 8"


def test_the_board_escapes_bidder_and_bettor_names() -> None:
    settings = Settings(min_bid=100, bid_increment=100)
    state = start_round(round_id=3, chat_id=-1, settings=settings, seed=b"s" * 32, now_ms=0).round
    state = bid(state, 7, 100, free_chips=10_000, now_ms=1).round
    text, markup = Views(settings).board(state, {7: Person(7, "<i>Eve</i>")}, now_ms=1)
    assert "&lt;i&gt;Eve&lt;/i&gt;" in text and "<i>Eve" not in text
    assert markup is not None
    data = [button.callback_data for row in markup.inline_keyboard for button in row]
    assert data == ["3:bid:200", "3:bid:300"]


def test_button_data_round_trips_and_rejects_garbage() -> None:
    for press in [
        ButtonPress(12, "bet", 2_000),
        ButtonPress(12, "bid", 1),
        ButtonPress(12, "cancel"),
        ButtonPress(2**63 - 1, "grab"),
        ButtonPress(1, "bet", 1_000_000_000),
    ]:
        assert ButtonPress.decode(press.encode()) == press
    for garbage in ["", "x", "1:steal:5", "a:bet:1", "1:bet:-5", "1:bet:1:2", "barrier-1"]:
        assert ButtonPress.decode(garbage) is None


@pytest.mark.parametrize(
    "data",
    [
        "1:bet:²",  # isdigit() but int() refuses it: this crashed the handler
        "1:bet:٣",  # int() reads it as 3
        "١:bet:5",
        "1:bet:５",
        "1:bet:+5",
        "1:bet: 5",
        "1:bet:05",  # not how encode writes 5
        "01:bet:5",
        "0:bet:5",  # no round 0
        "1:bet:0",  # a bet button always has an amount
        "1:bid:0",
        "1:cancel:5",  # cancel and grab never have one
        "1:grab:1",
        "9223372036854775808:bet:5",  # beyond a BIGINT round id
        "99999999999999999999:grab:0",
        "1:bet:1000000001",  # beyond what anyone may type
        "1:bet:99999999999999999999",
        "1:bet:" + "9" * 60,
    ],
)
def test_button_data_not_made_by_encode_is_refused(data: str) -> None:
    assert ButtonPress.decode(data) is None


@given(st.text(alphabet=st.sampled_from("0123456789:²٣５+- betcancelgrabid"), max_size=30))
def test_decoding_never_raises_and_accepts_only_what_encode_writes(data: str) -> None:
    press = ButtonPress.decode(data)
    assert press is None or press.encode() == data


def test_betting_board_offers_quick_bets_within_limits_and_cancel() -> None:
    settings = Settings(
        min_bid=100, bid_increment=100, min_bet=100, max_bet=1_500, quick_bets=(500, 1_000, 2_000)
    )
    state = start_round(round_id=4, chat_id=-1, settings=settings, seed=b"s" * 32, now_ms=0).round
    state = bid(state, 7, 100, free_chips=10_000, now_ms=1).round
    state = advance(state, settings.bid_seconds * 1000).round
    state = bet(state, 8, 500, free_chips=100_000, now_ms=state.deadline_ms - 1).round
    _, markup = Views(settings).board(state, {}, now_ms=0)
    assert markup is not None
    data = [button.callback_data for row in markup.inline_keyboard for button in row]
    assert data == ["4:bet:500", "4:bet:1000", "4:cancel:0"]


def test_the_token_never_reaches_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    token = "123456:SECRET-token"
    logger = logging.getLogger("test.redact")
    redact = RedactSecrets([token])
    caplog.handler.addFilter(redact)
    logger.warning("calling https://api.telegram.org/bot%s/getMe", token)
    assert token not in caplog.text
    assert "<redacted>" in caplog.text


def test_long_messages_are_split_between_lines_within_telegrams_limit() -> None:
    lines = [f"• player {i}: RM{i}.00 lose -RM{i}.00" for i in range(400)]
    chunks = split_message("\n".join(lines))
    assert len(chunks) > 1
    assert all(len(chunk) <= 4096 for chunk in chunks)
    assert "\n".join(chunks).split("\n") == lines
    assert split_message("short") == ["short"]


def test_the_board_lists_a_bounded_number_of_bets() -> None:
    settings = Settings(min_bid=100, bid_increment=100, min_bet=100, max_bet=100)
    state = start_round(round_id=5, chat_id=-1, settings=settings, seed=b"s" * 32, now_ms=0).round
    state = bid(state, 1, 100, free_chips=10_000, now_ms=1).round
    state = advance(state, settings.bid_seconds * 1000).round
    people: dict[int, Person] = {}
    for user_id in range(100, 300):
        people[user_id] = Person(user_id, "&" * 64)
        state = bet(state, user_id, 100, free_chips=10_000, now_ms=state.deadline_ms - 1).round
    text, _ = Views(settings).board(state, people, now_ms=0)
    assert "…and 160 more" in text
    assert len(html.unescape(re.sub(r"<[^>]+>", "", text))) <= 4096


def test_every_error_the_bot_can_raise_has_a_message() -> None:
    source = "\n".join(path.read_text() for path in Path("bot").rglob("*.py"))
    keys = set(re.findall(r'(?:RuleViolation|GameError)\(\s*"([a-z_]+)"', source))
    keys |= {f"not_{phase.value}" for phase in Phase if phase.is_open}
    assert len(keys) > 20
    missing = sorted(key for key in keys if f"error.{key}" not in EN)
    assert missing == []

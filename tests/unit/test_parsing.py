"""What people type, checked by the shell's pure parsers before the service sees it.

Only the ASCII digits 0-9 are digits; ids are bounded before they reach the database;
amounts above what anyone may type are told apart so a caller can answer with its own
limit.
"""

from __future__ import annotations

import pytest

from bot.engine.errors import GameError
from bot.money import MAX_AMOUNT_CENTS, TOO_LARGE
from bot.service.game import MAX_USER_ID
from bot.telegram.parsing import (
    ascii_number,
    looks_like_number,
    parse_typed_amount,
    parse_user_id,
)
from tests.helpers.refusals import AMOUNT_REFUSALS

# --- ascii_number --------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "value"), [("0", 0), ("7", 7), ("007", 7), ("1234", 1234)])
def test_ascii_digits_are_a_number(text: str, value: int) -> None:
    assert ascii_number(text, 10_000) == value


@pytest.mark.parametrize(
    "text", ["", "²", "٣", "３", "1²", "-1", "+1", " 1", "1 ", "1_0", "1.0", "0x1", "一"]
)
def test_anything_but_ascii_digits_is_not_a_number(text: str) -> None:
    assert ascii_number(text, 10_000) is None


def test_a_number_above_the_maximum_is_refused_without_building_it() -> None:
    assert ascii_number("10000", 10_000) == 10_000
    assert ascii_number("10001", 10_000) is None
    assert ascii_number("000010000", 10_000) == 10_000
    # A long run of digits is refused by its length, not converted first.
    assert ascii_number("9" * 5_000, 10_000) is None


# --- user ids ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["٣", "²", "-5", "+5", "12", "１２"])
def test_digits_of_any_script_or_a_sign_look_like_a_number(text: str) -> None:
    assert looks_like_number(text)


@pytest.mark.parametrize("text", ["", "-", "@bob", "bob", "1a", "12.5", "三"])
def test_words_and_names_do_not_look_like_a_number(text: str) -> None:
    assert not looks_like_number(text)


@pytest.mark.parametrize(("text", "value"), [("1", 1), ("12345", 12345), (str(2**52), 2**52)])
def test_a_user_id_is_one_to_two_to_the_52(text: str, value: int) -> None:
    assert MAX_USER_ID == 2**52
    assert parse_user_id(text) == value


@pytest.mark.parametrize(
    "text",
    ["0", "000", str(2**52 + 1), "99999999999999999999", "٣", "²", "-5", "+5", "1_000"],
)
def test_anything_else_is_not_a_user_id(text: str) -> None:
    with pytest.raises(GameError) as refused:
        parse_user_id(text)
    assert refused.value.key == "bad_user_id"
    assert refused.value.params == {"who": text, "maximum_id": MAX_USER_ID}


def test_a_bad_user_id_is_quoted_short() -> None:
    with pytest.raises(GameError) as refused:
        parse_user_id("9" * 4_000)
    assert refused.value.params["who"] == "9" * 24


# --- amounts -------------------------------------------------------------------------------


def test_a_typed_amount_is_cents() -> None:
    assert parse_typed_amount("12.50") == 1_250
    assert parse_typed_amount("0") == 0


@pytest.mark.parametrize("text", ["٣", "²", "１２"])
def test_non_ascii_digits_are_not_an_amount(text: str) -> None:
    with pytest.raises(GameError) as refused:
        parse_typed_amount(text)
    assert refused.value.key == "bad_amount.digits"
    assert refused.value.params == {"typed": text}


@pytest.mark.parametrize(
    ("text", "reason", "params"),
    [(text, reason, params) for text, reason, params, _ in AMOUNT_REFUSALS if reason != TOO_LARGE],
)
def test_text_that_is_not_an_amount_is_refused_with_the_parsers_reason(
    text: str, reason: str, params: dict[str, str]
) -> None:
    with pytest.raises(GameError) as refused:
        parse_typed_amount(text)
    assert (refused.value.key, refused.value.params) == (f"bad_amount.{reason}", params)


@pytest.mark.parametrize("text", ["99999999999999999999", "10000000.01"])
def test_an_amount_above_the_cap_is_too_large_not_bad(text: str) -> None:
    with pytest.raises(GameError) as refused:
        parse_typed_amount(text)
    assert refused.value.key == "amount_too_large"
    assert refused.value.params == {"maximum": MAX_AMOUNT_CENTS}


def test_the_cap_itself_is_an_amount() -> None:
    assert parse_typed_amount("10000000") == MAX_AMOUNT_CENTS

"""Money at the edges: typed amounts become integer cents, cents become text.

One test per clause of the money rules in the issue.
"""

from __future__ import annotations

import pytest

from bot.money import (
    AMOUNT_REASONS,
    MAX_AMOUNT_CENTS,
    RATE_REASONS,
    TOO_LARGE,
    AmountError,
    AmountTooLarge,
    format_amount,
    format_bps,
    format_signed,
    parse_amount,
    parse_bps,
)
from tests.helpers.refusals import AMOUNT_REFUSALS

# --- parse_amount: what is accepted -------------------------------------------------------


def test_a_whole_number_is_that_many_units() -> None:
    assert parse_amount("12") == 1200


def test_one_decimal_is_tens_of_cents() -> None:
    assert parse_amount("12.5") == 1250


def test_two_decimals_are_exact_cents() -> None:
    assert parse_amount("12.50") == 1250
    assert parse_amount("12.05") == 1205


def test_one_cent_is_accepted() -> None:
    assert parse_amount("0.01") == 1


def test_parsing_never_goes_through_floats() -> None:
    # Each of these is off by one cent if computed as round-down of float(text) * 100.
    assert parse_amount("0.29") == 29
    assert parse_amount("4.35") == 435
    assert parse_amount("1.15") == 115
    assert parse_amount("9.99") == 999


def test_parse_is_the_inverse_of_format_for_every_cent_value_up_to_1000() -> None:
    for cents in range(100_001):
        assert parse_amount(format_amount(cents)) == cents


def test_the_cap_itself_is_accepted() -> None:
    assert parse_amount(format_amount(MAX_AMOUNT_CENTS)) == MAX_AMOUNT_CENTS
    assert parse_amount(str(MAX_AMOUNT_CENTS // 100)) == MAX_AMOUNT_CENTS


# --- parse_amount: what is rejected, and why -----------------------------------------------


def refusal(text: str) -> AmountError:
    """Why ``parse_amount`` refuses ``text``."""
    with pytest.raises(AmountError) as refused:
        parse_amount(text)
    return refused.value


@pytest.mark.parametrize("text", ["", "   ", "\t\n"])
def test_empty_text_is_rejected(text: str) -> None:
    assert refusal(text).reason == "missing"


@pytest.mark.parametrize("text", ["abc", "twelve", "12abc", "RM12", "12RM", "1.2.3", ".", "0x10"])
def test_words_are_rejected(text: str) -> None:
    assert refusal(text).reason == "not_amount"


@pytest.mark.parametrize("text", ["-1", "-0.01", "-12.50", "-0"])
def test_negative_amounts_are_rejected(text: str) -> None:
    assert refusal(text).reason == "negative"


@pytest.mark.parametrize("text", ["1.234", "0.001", "12.500", "9.999"])
def test_more_than_two_decimals_are_rejected(text: str) -> None:
    assert refusal(text).reason == "decimals"


@pytest.mark.parametrize("text", ["1e9", "1E2", "1e-2", "2.5e1"])
def test_exponents_are_rejected(text: str) -> None:
    assert refusal(text).reason == "not_amount"


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "Infinity", "+inf"])
def test_nan_and_inf_are_rejected(text: str) -> None:
    assert refusal(text).reason == ("negative" if text.startswith("-") else "not_amount")


@pytest.mark.parametrize("text", ["1,000", "1,000.00", "10,00", "1 000", "1_000", "1.000,50"])
def test_thousands_separators_are_rejected(text: str) -> None:
    assert refusal(text).reason == "separators"


@pytest.mark.parametrize("text", ["１２", "١٢", "12.５", "٣", "²", "1²", "3.٣"])
def test_non_ascii_digits_are_rejected(text: str) -> None:
    refused = refusal(text)
    assert refused.reason == "digits"
    assert "digits 0-9" in str(refused)


@pytest.mark.parametrize(("text", "reason", "params", "message"), AMOUNT_REFUSALS)
def test_each_refusal_gives_its_reason_and_the_english_it_gave_before(
    text: str, reason: str, params: dict[str, str], message: str
) -> None:
    refused = refusal(text)
    assert (refused.reason, refused.params, str(refused)) == (reason, params, message)


def test_every_reason_of_an_amount_is_one_of_the_listed_ones_and_each_is_given() -> None:
    assert {reason for _, reason, _, _ in AMOUNT_REFUSALS} == AMOUNT_REASONS | {TOO_LARGE}
    assert TOO_LARGE not in AMOUNT_REASONS
    assert not (AMOUNT_REASONS | {TOO_LARGE}) & RATE_REASONS


def test_a_long_refused_text_is_quoted_cut_short() -> None:
    refused = refusal("x" * 30)
    assert refused.params == {"typed": "x" * 24 + "…"}
    assert str(refused) == repr("x" * 24 + "…") + " is not an amount; write e.g. 20 or 12.50"


@pytest.mark.parametrize(
    "text",
    [
        format_amount(MAX_AMOUNT_CENTS + 1),
        str(MAX_AMOUNT_CENTS // 100 + 1),
        "99999999999999999999",
        "99999999999999999999.99",
    ],
)
def test_anything_above_the_cap_is_rejected(text: str) -> None:
    with pytest.raises(AmountTooLarge) as refused:
        parse_amount(text)
    assert refused.value.maximum == MAX_AMOUNT_CENTS


def test_too_large_names_the_callers_cap_and_only_for_well_formed_amounts() -> None:
    with pytest.raises(AmountTooLarge) as refused:
        parse_amount("10", max_cents=999)
    assert refused.value.maximum == 999
    for text in ["-99999999999", "9" * 30 + ".999", "9" * 30 + "x"]:
        with pytest.raises(ValueError) as error:
            parse_amount(text)
        assert not isinstance(error.value, AmountTooLarge), text


def test_a_caller_may_lower_the_cap() -> None:
    assert parse_amount("9.99", max_cents=999) == 999
    with pytest.raises(ValueError):
        parse_amount("10", max_cents=999)
    with pytest.raises(ValueError):
        parse_amount("10.00", max_cents=1000 - 1)


def test_rejections_carry_a_message_for_the_user() -> None:
    with pytest.raises(ValueError, match=r"\S"):
        parse_amount("1,000")


# --- format_amount ------------------------------------------------------------------------


def test_format_amount_prefixes_the_currency_and_pads_the_cents() -> None:
    assert format_amount(1250, "RM") == "RM12.50"
    assert format_amount(5, "RM") == "RM0.05"
    assert format_amount(0, "RM") == "RM0.00"
    assert format_amount(MAX_AMOUNT_CENTS, "RM") == "RM10000000.00"


def test_format_amount_without_currency_is_the_bare_number() -> None:
    assert format_amount(342) == "3.42"


def test_format_amount_puts_the_sign_before_the_currency() -> None:
    assert format_amount(-1250, "RM") == "-RM12.50"


def test_format_signed_shows_an_explicit_plus_for_gains() -> None:
    assert format_signed(300, "RM") == "+RM3.00"
    assert format_signed(-120, "RM") == "-RM1.20"
    assert format_signed(0, "RM") == "RM0.00"


# --- rates --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("5%", 500),
        ("0.7%", 70),
        ("70bps", 70),
        ("0.05%", 5),
        ("0%", 0),
        ("100%", 10_000),
        ("12.34%", 1234),
        ("10000bps", 10_000),
        (" 5% ", 500),
    ],
)
def test_parse_bps_reads_percentages_and_basis_points(text: str, bps: int) -> None:
    assert parse_bps(text) == bps


def test_a_rate_of_zero_needs_no_unit() -> None:
    assert parse_bps("0") == parse_bps(" 0 ") == 0


@pytest.mark.parametrize(
    "text",
    [
        "",
        "5",
        "-5%",
        "100.01%",
        "101%",
        "10001bps",
        "abc",
        "5.123%",
        "1e2%",
        "nan%",
        "٥%",
        "５%",
        "²%",
        "7٠bps",
        "70\u2003bps",
    ],
)
def test_parse_bps_rejects_anything_else(text: str) -> None:
    with pytest.raises(AmountError) as refused:
        parse_bps(text)
    above = text in ("100.01%", "101%", "10001bps")
    assert refused.value.reason == ("above_100" if above else "not_rate")


@pytest.mark.parametrize(
    ("text", "reason", "typed", "message"),
    [
        (" 5 ", "not_rate", "5", "'5' is not a rate; write e.g. 5% or 0.7% or 70bps"),
        ("101%", "above_100", "101%", "'101%' is above 100%"),
        # The English quotes all of it, as before; the parameter is cut short.
        (
            "x" * 30,
            "not_rate",
            "x" * 24 + "…",
            f"{'x' * 30!r} is not a rate; write e.g. 5% or 0.7% or 70bps",
        ),
    ],
)
def test_a_refused_rate_gives_its_reason_and_the_english_it_gave_before(
    text: str, reason: str, typed: str, message: str
) -> None:
    with pytest.raises(AmountError) as refused:
        parse_bps(text)
    assert (refused.value.reason, refused.value.params) == (reason, {"typed": typed})
    assert str(refused.value) == message


@pytest.mark.parametrize(
    ("bps", "text"), [(500, "5%"), (70, "0.7%"), (5, "0.05%"), (0, "0%"), (10_000, "100%")]
)
def test_format_bps_writes_a_short_percentage(bps: int, text: str) -> None:
    assert format_bps(bps) == text


def test_parse_bps_is_the_inverse_of_format_bps_for_every_rate() -> None:
    for bps in range(10_001):
        assert parse_bps(format_bps(bps)) == bps

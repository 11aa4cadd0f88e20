"""Money at the edges: typed amounts become integer cents, cents become text.

One test per clause of the money rules in the issue.
"""

from __future__ import annotations

import pytest

from bot.money import (
    MAX_AMOUNT_CENTS,
    AmountTooLarge,
    format_amount,
    format_bps,
    format_signed,
    parse_amount,
    parse_bps,
)

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


# --- parse_amount: what is rejected -------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\t\n"])
def test_empty_text_is_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        parse_amount(text)


@pytest.mark.parametrize("text", ["abc", "twelve", "12abc", "RM12", "12RM", "1.2.3", ".", "0x10"])
def test_words_are_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        parse_amount(text)


@pytest.mark.parametrize("text", ["-1", "-0.01", "-12.50", "-0"])
def test_negative_amounts_are_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        parse_amount(text)


@pytest.mark.parametrize("text", ["1.234", "0.001", "12.500", "9.999"])
def test_more_than_two_decimals_are_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        parse_amount(text)


@pytest.mark.parametrize("text", ["1e9", "1E2", "1e-2", "2.5e1"])
def test_exponents_are_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        parse_amount(text)


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "Infinity", "+inf"])
def test_nan_and_inf_are_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        parse_amount(text)


@pytest.mark.parametrize("text", ["1,000", "1,000.00", "10,00", "1 000", "1_000", "1.000,50"])
def test_thousands_separators_are_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        parse_amount(text)


@pytest.mark.parametrize("text", ["１２", "١٢", "12.５", "٣", "²", "1²", "3.٣"])
def test_non_ascii_digits_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="digits 0-9"):
        parse_amount(text)


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
    with pytest.raises(ValueError):
        parse_bps(text)


@pytest.mark.parametrize(
    ("bps", "text"), [(500, "5%"), (70, "0.7%"), (5, "0.05%"), (0, "0%"), (10_000, "100%")]
)
def test_format_bps_writes_a_short_percentage(bps: int, text: str) -> None:
    assert format_bps(bps) == text


def test_parse_bps_is_the_inverse_of_format_bps_for_every_rate() -> None:
    for bps in range(10_001):
        assert parse_bps(format_bps(bps)) == bps

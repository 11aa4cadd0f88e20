"""Settings as admins type them: strict lists, names as typed (``rake``, not
``rake_bps``), bounds shown the way values are typed."""

from __future__ import annotations

import pytest

from bot.engine.settings import (
    ALL_SETTING_REASONS,
    SETTING_NAMES,
    SETTING_REASONS,
    SettingError,
    Settings,
    field_name,
    label,
)
from bot.money import AMOUNT_REASONS, RATE_REASONS, TOO_LARGE
from bot.rules.ruleset import RULESETS


@pytest.mark.parametrize(
    "text", ["1,,2", "1,2,", ",1,2", "1, ,2", " , ", ",", "5,5", "5,10,5.00", "0,5"]
)
def test_quick_bets_lists_refuse_empty_items_duplicates_and_zero(text: str) -> None:
    with pytest.raises(SettingError, match=r"^quick_bets"):
        Settings().changed("quick_bets", text)


def test_quick_bets_list_of_different_amounts_is_accepted() -> None:
    name, settings = Settings().changed("quick_bets", " 5, 10 ,20.50")
    assert (name, settings.quick_bets) == ("quick_bets", (500, 1_000, 2_050))
    assert settings.display("quick_bets") == "5.00,10.00,20.50"


def test_duplicates_are_refused_in_stored_settings_too() -> None:
    with pytest.raises(SettingError, match="once"):
        Settings(quick_bets=(500, 500)).validate()


def test_settings_are_listed_by_the_names_admins_type() -> None:
    assert "rake" in SETTING_NAMES and "rebate" in SETTING_NAMES
    assert not any(name.endswith("_bps") for name in SETTING_NAMES)
    settings = Settings()
    # Every listed name is one /set takes and /config can show.
    for name in SETTING_NAMES:
        assert settings.changed(name, settings.display(name))[1] == settings
    assert settings.display("rake") == "5%" == settings.display("rake_bps")


def test_the_field_names_remain_accepted_as_typed() -> None:
    assert Settings().changed("RAKE_BPS", "3%")[1].rake_bps == 300
    assert (field_name(" Rake "), label("rake_bps"), label("min_bet")) == (
        "rake_bps",
        "rake",
        "min_bet",
    )


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("rake", "200%", "rake: '200%' is above 100%"),
        ("rebate_bps", "x", "rebate: 'x' is not a rate"),
        ("min_bid", "0", "min_bid must be between 0.01 and 10000000.00"),
        ("max_bet", "0.5", "max_bet (0.50) cannot be below min_bet (1.00)"),
        ("bid_seconds", "٣", "bid_seconds: '٣' is not a whole number of seconds"),
        ("envelope_mean_share", "10", "envelope_mean_share must be between 0.01 and 9.99"),
    ],
)
def test_errors_name_settings_and_bounds_as_admins_type_them(
    key: str, value: str, message: str
) -> None:
    with pytest.raises(SettingError) as refused:
        Settings().changed(key, value)
    assert str(refused.value).startswith(message)
    assert "_bps" not in str(refused.value)


def test_a_rate_out_of_range_is_shown_as_a_percentage() -> None:
    with pytest.raises(SettingError, match=r"^rake must be between 0% and 100%$"):
        Settings(rake_bps=10_001).validate()


# -- why a setting is refused ------------------------------------------------------------

RULESET_NAMES = ", ".join(sorted(RULESETS))

#: One ``/set KEY VALUE`` refused for each reason (or more, where a reason has several
#: sources): the reason, its parameters, and the English text ``str()`` gives (the config
#: file's errors show it; it must not change).
SETTING_REFUSALS = [
    ("no_such", "1", "unknown_setting", {"typed": "no_such"}, "unknown setting 'no_such'"),
    (
        "bid_seconds",
        "0",
        "out_of_range",
        {"name": "bid_seconds", "minimum": "1", "maximum": "3600"},
        "bid_seconds must be between 1 and 3600",
    ),
    (
        "envelope_share",
        "10",
        "out_of_range",
        {"name": "envelope_mean_share", "minimum": "0.01", "maximum": "9.99"},
        "envelope_mean_share must be between 0.01 and 9.99",
    ),
    (
        "quick_bets",
        "0,5",
        "out_of_range",
        {"name": "quick_bets", "minimum": "0.01", "maximum": "10000000.00"},
        "quick_bets must be between 0.01 and 10000000.00",
    ),
    (
        "max_bet",
        "0.5",
        "max_below_min",
        {"minimum": "1.00", "maximum": "0.50"},
        "max_bet (0.50) cannot be below min_bet (1.00)",
    ),
    (
        "currency",
        "ABCDEFGHI",
        "currency_length",
        {"name": "currency", "maximum": "8"},
        "currency is a label of 1 to 8 printable characters",
    ),
    ("currency", "<b>", "currency_html", {"name": "currency"}, "currency cannot contain <, > or &"),
    (
        "lang",
        "fr",
        "not_one_of",
        {"name": "language", "choices": "en, zh"},
        "language is one of en, zh",
    ),
    (
        "ruleset",
        "blackjack",
        "not_one_of",
        {"name": "ruleset", "choices": RULESET_NAMES},
        f"ruleset is one of {RULESET_NAMES}",
    ),
    (
        "dealer",
        "robot",
        "not_one_of",
        {"name": "dealer", "choices": "bid, house"},
        "dealer is one of bid, house",
    ),
    (
        "pictures",
        "maybe",
        "not_one_of",
        {"name": "pictures", "choices": "on, off"},
        "pictures is one of on, off",
    ),
    (
        "bid_seconds",
        "٣",
        "not_seconds",
        {"name": "bid_seconds", "typed": "٣"},
        "bid_seconds: '٣' is not a whole number of seconds",
    ),
    (
        "quick_bets",
        "1,2,3,4,5,6,7",
        "quick_bets_count",
        {"name": "quick_bets", "maximum": "6"},
        "quick_bets lists 1 to 6 amounts",
    ),
    (
        "quick_bets",
        "1,,2",
        "quick_bets_empty_item",
        {"name": "quick_bets", "typed": "1,,2"},
        "quick_bets: '1,,2' has an empty item; write e.g. 5,10,20",
    ),
    (
        "quick_bets",
        "5,10,5.00",
        "quick_bets_duplicate",
        {"name": "quick_bets", "amount": "5.00"},
        "quick_bets: 5.00 is listed twice",
    ),
    # A value that is not an amount or a rate: the parser's reason, with the setting's name.
    ("min_bid", "", "missing", {"name": "min_bid", "typed": ""}, "min_bid: an amount is missing"),
    (
        "dealer_fee",
        "-1",
        "negative",
        {"name": "dealer_fee", "typed": "-1"},
        "dealer_fee: '-1' is negative; amounts must be positive",
    ),
    (
        "min_bet",
        "1 000",
        "separators",
        {"name": "min_bet", "typed": "1 000"},
        "min_bet: '1 000': write amounts without separators, e.g. 1200.50",
    ),
    (
        "quick_bets",
        "5,٥",
        "digits",
        {"name": "quick_bets", "typed": "٥"},
        "quick_bets: '٥': write amounts with the digits 0-9",
    ),
    (
        "min_bet",
        "1.234",
        "decimals",
        {"name": "min_bet", "typed": "1.234"},
        "min_bet: '1.234' has more than two decimals",
    ),
    (
        "service_fee",
        "abc",
        "not_amount",
        {"name": "service_fee", "typed": "abc"},
        "service_fee: 'abc' is not an amount; write e.g. 20 or 12.50",
    ),
    (
        "min_bid",
        "99999999999",
        "too_large",
        {"name": "min_bid", "typed": "99999999999", "maximum": "10000000.00"},
        "min_bid: '99999999999' is too large; the most is 10000000.00",
    ),
    (
        "rebate_bps",
        "x",
        "not_rate",
        {"name": "rebate", "typed": "x"},
        "rebate: 'x' is not a rate; write e.g. 5% or 0.7% or 70bps",
    ),
    ("rake", "200%", "above_100", {"name": "rake", "typed": "200%"}, "rake: '200%' is above 100%"),
]


@pytest.mark.parametrize(("key", "value", "reason", "params", "message"), SETTING_REFUSALS)
def test_each_refusal_gives_its_reason_and_the_english_it_gave_before(
    key: str, value: str, reason: str, params: dict[str, str], message: str
) -> None:
    with pytest.raises(SettingError) as refused:
        Settings().changed(key, value)
    assert (refused.value.reason, refused.value.params, str(refused.value)) == (
        reason,
        params,
        message,
    )


def test_a_stored_list_with_an_amount_twice_is_refused_for_its_own_reason() -> None:
    with pytest.raises(SettingError) as refused:
        Settings(quick_bets=(500, 500)).validate()
    assert (refused.value.reason, refused.value.params, str(refused.value)) == (
        "quick_bets_repeated",
        {"name": "quick_bets"},
        "quick_bets lists each amount once",
    )


def test_every_reason_of_a_setting_is_listed_and_each_is_given() -> None:
    given = {reason for _, _, reason, _, _ in SETTING_REFUSALS} | {"quick_bets_repeated"}
    assert given == ALL_SETTING_REASONS
    # A setting's own reasons and its values' reasons never share a name.
    assert not SETTING_REASONS & (AMOUNT_REASONS | {TOO_LARGE} | RATE_REASONS)


def test_pictures_are_on_unless_a_group_turns_them_off() -> None:
    assert Settings().pictures == "on"
    name, settings = Settings().changed("pictures", " OFF ")
    assert (name, settings.pictures, settings.display("pictures")) == ("pictures", "off", "off")
    # Settings stored before the setting existed read as on.
    stored = Settings().to_dict()
    del stored["pictures"]
    assert Settings.from_dict(stored).pictures == "on"

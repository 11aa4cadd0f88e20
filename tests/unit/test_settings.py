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
from bot.rules.ruleset import get_ruleset
from tests.helpers.refusals import SETTING_REFUSALS


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


@pytest.mark.parametrize(
    ("typed", "language"),
    [
        ("vi", "vi"),
        (" MS ", "ms"),
        ("zh", "zh"),
        ("zh-Hant", "zh-Hant"),
        ("zh-hant", "zh-Hant"),
        ("ZH_HANT", "zh-Hant"),
        ("EN", "en"),
    ],
)
def test_a_language_is_accepted_in_any_case_and_stored_as_its_tag(
    typed: str, language: str
) -> None:
    assert Settings().changed("language", typed) == ("language", Settings(language=language))
    assert Settings().changed("lang", typed)[1].display("language") == language


@pytest.mark.parametrize("typed", ["zh-TW", "zh-Hans", "vietnamese", "zh-", "", "ms-MY"])
def test_a_language_that_is_not_one_of_the_catalogues_is_refused(typed: str) -> None:
    with pytest.raises(SettingError) as refused:
        Settings().changed("language", typed)
    assert refused.value.reason == "not_one_of"
    assert "zh-Hant (繁體中文)" in refused.value.params["choices"]


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


def test_loss_pays_is_player_unless_a_table_makes_the_dealer_price_a_loss() -> None:
    assert Settings().loss_pays == "player"
    name, settings = Settings(ruleset="poker29").changed("loss_pays", " Dealer ")
    assert (name, settings.loss_pays, settings.display("loss_pays")) == (
        "loss_pays",
        "dealer",
        "dealer",
    )
    assert settings.played_ruleset().largest_loss_multiplier == 5
    assert Settings(ruleset="poker29").played_ruleset().largest_loss_multiplier == 1
    with pytest.raises(SettingError) as refused:
        Settings().changed("loss_pays", "house")
    assert (refused.value.reason, refused.value.params["choices"]) == (
        "not_one_of",
        "player, dealer",
    )
    # Settings stored before the setting existed (a chat's or a round's) read as player.
    stored = Settings(ruleset="poker29").to_dict()
    del stored["loss_pays"]
    assert Settings.from_dict(stored).loss_pays == "player"
    assert Settings.from_dict(stored).played_ruleset() is get_ruleset("poker29")

"""Settings as admins type them: strict lists, names as typed (``rake``, not
``rake_bps``), bounds shown the way values are typed."""

from __future__ import annotations

import pytest

from bot.engine.settings import SETTING_NAMES, SettingError, Settings, field_name, label


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

"""Every key of the config file has a NIUNIU_* variable (one model, read by pydantic-settings),
and a Config written in code reads nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import Config, ConfigError, load_config


def refused(environ: dict[str, str], text: str = "", tmp_path: Path | None = None) -> str:
    path = None
    if tmp_path is not None:
        path = tmp_path / "config.toml"
        path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ=environ)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_keys_without_a_listed_variable_have_one_named_after_the_field() -> None:
    config = load_config(
        None,
        environ={
            "NIUNIU_SWEEP_SECONDS": "0.5",
            "NIUNIU_REPLIES_PER_MINUTE": "5",
            "NIUNIU_OPERATORS": "7, 8",
            "NIUNIU_WEBHOOK_PORT": "8000",
            "NIUNIU_GAME_RAKE": "4%",
        },
    )
    assert (config.sweep_seconds, config.replies_per_minute) == (0.5, 5)
    assert config.operators == frozenset({7, 8})
    assert config.webhook.port == 8000
    assert config.game.rake_bps == 400


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("NIUNIU_WEBHOOK_PORT", "x", 'NIUNIU_WEBHOOK_PORT must be a whole number, got "x"'),
        ("NIUNIU_SWEEP_SECONDS", "0", "NIUNIU_SWEEP_SECONDS must be more than 0, got 0.0"),
        (
            "NIUNIU_OPERATORS",
            "7,x",
            'NIUNIU_OPERATORS (item 2) must be a whole number, got "x"',
        ),
        (
            "NIUNIU_WEBHOOK",
            "port",
            'NIUNIU_WEBHOOK must be a JSON object, like {"key": 1}; or set one key with '
            "NIUNIU_WEBHOOK_KEY",
        ),
    ],
)
def test_a_bad_value_names_its_variable(variable: str, value: str, message: str) -> None:
    assert refused({variable: value}) == message


def test_a_variable_that_is_no_key_is_not_an_error() -> None:
    config = load_config(None, environ={"NIUNIU_REQUIRE_POSTGRES": "1", "NIUNIU_X": "y"})
    assert config == Config()


def test_a_config_written_in_code_ignores_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NIUNIU_SWEEP_SECONDS", "0.5")
    monkeypatch.setenv("NIUNIU_LOG_LEVEL", "DEBUG")
    assert (Config().sweep_seconds, Config().log_level) == (1.0, "INFO")
    loaded = load_config(None)
    assert (loaded.sweep_seconds, loaded.log_level) == (0.5, "DEBUG")


def test_an_unknown_key_and_a_bad_value_are_both_counted(tmp_path: Path) -> None:
    message = refused({}, "[bot]\nsweep_secondz = 1\nboard_edit_seconds = 0\n", tmp_path)
    assert message == (
        "unknown key [bot] sweep_secondz; did you mean sweep_seconds? (and 1 more problem)"
    )

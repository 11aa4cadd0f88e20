"""The lists of NIUNIU_* variables an operator reads (README, docs/operator.md, .env.example,
config.example.toml) name only variables the bot reads, and every one of the ``[web]``
server's: an operator behind a reverse proxy finds ``NIUNIU_WEB_TRUSTED_PROXIES`` wherever
they look."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from bot.config import Config
from bot.config.model import ENV_PREFIX, WebConfig

ROOT = Path(__file__).resolve().parents[2]
LISTS = ("README.md", "docs/operator.md", ".env.example", "config.example.toml")
_VARIABLE = re.compile(rf"\b{ENV_PREFIX}[A-Z0-9_]+\b")


def config_variables() -> set[str]:
    """Every variable the configuration reads: ``NIUNIU_CONFIG``, one per key, and one per
    key of a table (``NIUNIU_WEB_LISTEN``); ``[game]``'s keys are checked by the settings."""
    names = {f"{ENV_PREFIX}CONFIG"}
    for name, field in Config.model_fields.items():
        names.add(f"{ENV_PREFIX}{name}".upper())
        table = field.annotation
        if isinstance(table, type) and issubclass(table, BaseModel):
            names |= {f"{ENV_PREFIX}{name}_{key}".upper() for key in table.model_fields}
    return names


def named(text: str) -> set[str]:
    """The NIUNIU_* variables a text names."""
    return set(_VARIABLE.findall(text))


WEB_VARIABLES = {f"{ENV_PREFIX}WEB_{key}".upper() for key in WebConfig.model_fields}


@pytest.mark.parametrize("document", LISTS)
def test_a_list_names_every_web_variable_and_only_variables_the_bot_reads(document: str) -> None:
    found = named((ROOT / document).read_text(encoding="utf-8"))
    unknown = {
        name
        for name in found - config_variables()
        if not name.startswith(f"{ENV_PREFIX}GAME_")  # a [game] key's, e.g. NIUNIU_GAME_RAKE
    }
    assert unknown == set(), f"{document} names variables the bot does not read"
    # Compose sets the listen address itself: .env.example need not offer it.
    compose_sets = {f"{ENV_PREFIX}WEB_LISTEN"} if document == ".env.example" else set()
    expected = WEB_VARIABLES - compose_sets
    assert expected - found == set(), f"{document} leaves them out"


def test_the_variables_are_the_ones_the_configuration_reads() -> None:
    variables = config_variables()
    assert {"NIUNIU_WEB_TRUSTED_PROXIES", "NIUNIU_TELEGRAM_TOKEN", "NIUNIU_WEBHOOK_PORT"} <= (
        variables
    )
    assert "NIUNIU_WEB" in variables and "NIUNIU_WEB_NOTHING" not in variables
    assert named("`NIUNIU_WEB_LISTEN`, NIUNIU_MODE=x and niuniu_lower") == {
        "NIUNIU_WEB_LISTEN",
        "NIUNIU_MODE",
    }

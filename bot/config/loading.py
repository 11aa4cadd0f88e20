"""Loading the configuration: the TOML file (``--config`` or ``NIUNIU_CONFIG``), then the
``NIUNIU_*`` environment variables over it, through pydantic-settings' sources; every
value checked, and the first problem raised as a one-line ``ConfigError``."""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource

from bot.config.model import ENV_PREFIX, Config, ConfigError
from bot.config.problems import (
    PLACES,
    SECTIONS,
    describe_errors,
    shown,
    unknown_key,
    unknown_section,
    with_count,
)


def _read(path: str | os.PathLike[str], named_by: str) -> dict[str, Any]:
    """The parsed file, or a ``ConfigError`` saying why it cannot be read."""
    where = f"config file {os.fspath(path)}{named_by}"
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{where} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"{where} is a directory, not a file") from None
    except PermissionError:
        raise ConfigError(f"{where} cannot be read: permission denied") from None
    except OSError as error:
        raise ConfigError(f"{where} cannot be read: {error.strerror or error}") from None
    try:
        text = raw.decode("utf-8-sig")  # an editor's byte order mark is harmless
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{where} is not UTF-8 text (byte 0x{raw[error.start]:02x} at offset {error.start})"
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{where} is not valid TOML: {error}") from None


class TomlFileSource(PydanticBaseSettingsSource):
    """The file's values on the fields that say where they live (``In``); what has no field
    is kept in ``problems``. Not pydantic-settings' own TOML source: it skips a missing
    file without a word, and knows only keys named as the fields are."""

    def __init__(self, settings_cls: type[BaseSettings], data: Mapping[str, Any]) -> None:
        super().__init__(settings_cls)
        self.values: dict[str, Any] = {}
        self.problems: list[str] = []
        for section, table in data.items():
            self._place(section, table)

    def _place(self, section: str, table: Any) -> None:
        if (section, None) in PLACES:  # [web], [game]: the field checks the whole table
            self.values[PLACES[(section, None)]] = table
        elif section not in SECTIONS:
            self.problems.append(unknown_section(section, table))
        elif not isinstance(table, dict):
            self.problems.append(
                f"[{section}] must be a section (a table), not a single value, got {shown(table)}"
            )
        else:
            for key, value in table.items():
                if (section, key) in PLACES:
                    self.values[PLACES[(section, key)]] = value
                else:
                    self.problems.append(unknown_key([section], key, value, SECTIONS[section]))

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.values.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self.values)


#: How a variable says true or false (any case); any other value is refused as the file's
#: would be.
ENV_BOOLEANS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


class EnvironmentSource(EnvSettingsSource):
    """``NIUNIU_*`` variables from the mapping given (``os.environ`` at start-up). A variable
    is text: true and false have their spellings, and a list is comma-separated."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self.environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        # Names in any case, as the source's own reading of os.environ takes them.
        return {name.lower(): value for name, value in self.environ.items() if value}

    def decode_complex_value(self, field_name: str, field: FieldInfo, value: Any) -> Any:
        # A whole table in one variable (NIUNIU_WEBHOOK) is JSON; say so in one line.
        try:
            return super().decode_complex_value(field_name, field, value)
        except ValueError:
            variable = f"{ENV_PREFIX}{field_name}".upper()
            raise ConfigError(
                f'{variable} must be a JSON object, like {{"key": 1}}; or set one key with'
                f" {variable}_KEY"
            ) from None

    def __call__(self) -> dict[str, Any]:
        return _as_typed(super().__call__(), Config.model_fields)


def _as_typed(values: dict[str, Any], fields: Mapping[str, FieldInfo]) -> dict[str, Any]:
    typed = dict(values)
    for name, value in values.items():
        field = fields.get(name)
        annotation = field.annotation if field else None
        if isinstance(value, dict) and isinstance(annotation, type):
            if issubclass(annotation, BaseModel):
                typed[name] = _as_typed(value, annotation.model_fields)
        elif isinstance(value, str) and annotation is bool:
            typed[name] = ENV_BOOLEANS.get(value.strip().lower(), value)
        elif isinstance(value, str) and get_origin(annotation) in (tuple, frozenset, list):
            typed[name] = [_item(item.strip()) for item in value.split(",") if item.strip()]
    return typed


def _item(text: str) -> Any:
    # A number in a list is the number (NIUNIU_OPERATORS=7,8), as pydantic-settings reads
    # a variable that is one number; anything else stays text.
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, int | float) else text


def load_config(
    path: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Config:
    """Read the config file (if any), apply environment overrides and check every value;
    a ``ConfigError`` names the first key that is wrong."""
    env = os.environ if environ is None else environ
    named_by = ""
    if not path and env.get("NIUNIU_CONFIG"):
        path, named_by = env["NIUNIU_CONFIG"], " (NIUNIU_CONFIG)"
    file = TomlFileSource(Config, _read(path, named_by) if path else {})
    environment = EnvironmentSource(Config, env)
    try:
        # The file, then the environment over it; mypy sees only the fields' __init__.
        config = Config(_build_sources=((environment, file), {}))  # type: ignore[call-arg]
    except ValidationError as error:
        raise ConfigError(describe_errors(error, environment(), file.problems)) from None
    if file.problems:
        raise ConfigError(with_count(file.problems))
    if config.mode == "webhook" and not config.webhook.public_url.startswith("https://"):
        raise ConfigError('webhook mode needs [telegram.webhook] public_url = "https://..."')
    if config.mode == "webhook" and not config.webhook.secret_token:
        # Without it anyone who finds the URL could post updates in an admin's name.
        raise ConfigError("webhook mode needs [telegram.webhook] secret_token")
    return config

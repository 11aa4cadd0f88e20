"""Configuration: one pydantic-settings model read from a TOML file (``--config`` or
``NIUNIU_CONFIG``) and ``NIUNIU_*`` environment variables, which override the file.

Each field of ``Config`` says where it lives in the file (``In("bot", "sweep_seconds")``);
its variable is ``NIUNIU_`` and the field's name (``NIUNIU_MODE`` for ``mode``, which the
file keeps under ``[telegram]``), and ``NIUNIU_WEB_LISTEN`` for a key of ``[web]``.

Every value is checked at start-up, and a problem is one line that names the key
(``[bot] sweep_seconds must be more than 0, got -1``) or the environment variable it came
from. An unknown section or key is an error, with the nearest known name suggested: a
misspelt key would otherwise be ignored and its default used without a word. The file's
values are strict (``sweep_seconds = "1"`` is refused, as TOML can say a number).

Values under ``[game]`` are written as an admin types them in ``/set`` (``min_bid = "100"``
is 100.00, ``rake = "5%"``), are checked as ``/set`` checks them, and become every group's
defaults.

``Config(...)`` written in code is what it says; only ``load_config`` reads the file and
the environment.
"""

from __future__ import annotations

import difflib
import ipaddress
import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, get_origin
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    InstanceOf,
    PlainValidator,
    ValidationError,
)
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticCustomError
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from bot.engine.settings import ALIASES, SETTING_NAMES, SettingError, Settings
from bot.store.db import DEFAULT_DATABASE_URL, backend_of

TELEGRAM_API = "https://api.telegram.org/bot"
ENV_PREFIX = "NIUNIU_"

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class ConfigError(Exception):
    """The configuration cannot be used; ``str()`` is a one-line explanation."""


@dataclass(frozen=True)
class In:
    """Where a field of ``Config`` lives in the file: a section, then the key (none when
    the field is the whole section)."""

    section: str
    key: str | None = None


# -- checks of single values ----------------------------------------------------------------


def _invalid(message: str) -> PydanticCustomError:
    # The message is said after the key's name: "[telegram] token <message>".
    return PydanticCustomError("config", message)


def _check_port(port: int) -> int:
    if not 1 <= port <= 65535:
        raise _invalid("must be a port number from 1 to 65535")
    return port


def _check_database_url(url: str) -> str:
    backend = backend_of(url)
    if backend is None:
        raise _invalid("is not a database URL (sqlite:///niuniu.db or postgresql://user@host/name)")
    if backend not in ("sqlite", "postgresql"):
        raise _invalid(f"names {backend}; the bot runs on sqlite or postgresql")
    return url


def _check_http_url(url: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise _invalid("must start with http:// or https://")
    return url


#: A bot token as @BotFather gives it: the bot's id, a colon, then the secret.
_TOKEN = re.compile(r"[0-9]+:[A-Za-z0-9_-]+")


def _check_token(token: str) -> str:
    if token and not _TOKEN.fullmatch(token):
        raise _invalid("is not a bot token (digits, a colon, then letters, as @BotFather gives)")
    return token


#: What Telegram accepts as a webhook's secret token.
_SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")


def _check_secret_token(secret: str) -> str:
    if secret and not _SECRET_TOKEN.fullmatch(secret):
        raise _invalid("must be 1 to 256 characters of A-Z, a-z, 0-9, _ and -")
    return secret


def _check_web_url(url: str) -> str:
    if url and (not url.startswith(("http://", "https://")) or not urlsplit(url).netloc):
        raise _invalid('must be "" or a URL that starts with http:// or https:// and names a host')
    return url


#: ``host:port``: a name or IPv4 address, or an IPv6 address in brackets, then the port.
_LISTEN = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(?P<port>[0-9]{1,5})")


def _check_listen(listen: str) -> str:
    if not listen:
        return listen
    found = _LISTEN.fullmatch(listen)
    if found is None:
        raise _invalid('must be "host:port", like "127.0.0.1:9090", or "" for no web server')
    if not 1 <= int(found["port"]) <= 65535:
        raise _invalid("must end in a port number from 1 to 65535")
    return listen


def _network(network: Any) -> IPNetwork:
    if isinstance(network, ipaddress.IPv4Network | ipaddress.IPv6Network):
        return network
    if not isinstance(network, str):
        raise _invalid('must be text in quotes, like "10.0.0.0/8"')
    try:
        return ipaddress.ip_network(network, strict=False)
    except ValueError:
        raise _invalid(
            f'holds "{network}", which is not an IP address or network (like "10.0.0.0/8")'
        ) from None


def _list_as_tuple(value: Any) -> Any:
    # The file writes a list; the model keeps a tuple (frozen, hashable).
    return tuple(value) if isinstance(value, list) else value


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _check_log_level(level: str) -> str:
    if level.upper() not in LOG_LEVELS:
        raise _invalid(f"must be one of {', '.join(LOG_LEVELS)} (in any case)")
    return level.upper()


Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Port = Annotated[int, AfterValidator(_check_port)]
Network = Annotated[IPNetwork, PlainValidator(_network)]

# -- the model ------------------------------------------------------------------------------


class _Strict(BaseModel):
    """A table of the file: strict types, and no key it does not know."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class WebhookConfig(_Strict):
    """Where Telegram delivers updates in webhook mode (``[telegram.webhook]``)."""

    listen: str = "0.0.0.0"
    port: Port = 8443
    public_url: str = ""
    secret_token: Annotated[str, AfterValidator(_check_secret_token), Field(repr=False)] = ""
    path: str = "telegram"


class WebConfig(_Strict):
    """The bot's own HTTP server (``[web]``): ``/healthz``, ``/readyz``, ``/metrics`` (and the
    operator console, when ``console`` is on). Off unless ``listen`` names where to listen.

    Code may also give the address as ``host`` and ``port`` (in that order, then
    ``public_url``, ``console`` and ``trusted_proxies``)."""

    #: ``host:port`` as written in the file ("" when off); IPv6 hosts in brackets.
    listen: Annotated[str, AfterValidator(_check_listen)] = ""
    #: How the console's pages are reached from outside ("" = not said), for links.
    public_url: Annotated[str, AfterValidator(_check_web_url)] = ""
    console: bool = False
    #: The reverse proxies in front of the server (addresses or networks): a request from
    #: one of them is counted, for the console's sign-in limit, under the client address
    #: its ``X-Forwarded-For`` names.
    trusted_proxies: Annotated[tuple[Network, ...], BeforeValidator(_list_as_tuple), NoDecode] = ()

    def __init__(self, *args: Any, **values: Any) -> None:
        names = ("host", "port", "public_url", "console", "trusted_proxies")
        values.update(zip(names, args, strict=False))
        if "host" in values or "port" in values:
            host, port = values.pop("host", ""), values.pop("port", 0)
            host = f"[{host}]" if ":" in host else host
            values["listen"] = f"{host}:{port}" if host else ""
        super().__init__(**values)

    @property
    def host(self) -> str:
        """The host to listen on, without IPv6 brackets ("" when off)."""
        return self.listen.rpartition(":")[0].strip("[]")

    @property
    def port(self) -> int:
        """The port to listen on (0 when off)."""
        return int(self.listen.rpartition(":")[2]) if self.listen else 0

    @property
    def enabled(self) -> bool:
        """Whether the server runs at all (``listen`` was given)."""
        return bool(self.listen)

    @property
    def console_url(self) -> str | None:
        """Where the console's pages are reached, for the sign-in links ``/console``
        sends: ``public_url``, else the listen address itself (for use on this machine);
        ``None`` when the console is off."""
        if not (self.enabled and self.console):
            return None
        return self.public_url or f"http://{self.listen}"


#: The names ``[game]`` accepts: the settings' own names and the short ones of ``/set``.
GAME_KEYS = (*SETTING_NAMES, *ALIASES)


def game_settings(values: Mapping[str, Any], base: Settings | None = None) -> Settings:
    """Settings from ``[game]`` values typed as an admin would type them."""
    settings = base or Settings()
    for key, value in values.items():
        if key.strip().lower() not in GAME_KEYS:
            suggestion = _suggestion(key, list(GAME_KEYS))
            hint = (
                f"; did you mean {suggestion}?"
                if suggestion
                else f" (the keys are the settings of /set: {', '.join(SETTING_NAMES)})"
            )
            raise ConfigError(f"unknown key [game] {key}{hint}")
        text = ",".join(str(v) for v in value) if isinstance(value, list) else str(value)
        try:
            _, settings = settings.changed(key, text)
        except SettingError as error:
            raise ConfigError(f"[game] {error}") from None
    return settings


def _game(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    try:
        return game_settings(value)
    except ConfigError as error:
        raise PydanticCustomError("game", str(error)) from None


class Config(BaseSettings):
    """Everything the bot process needs."""

    model_config = SettingsConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="_",
        env_nested_max_split=1,
        env_ignore_empty=True,  # an empty variable overrides nothing
    )

    database_url: Annotated[
        str, AfterValidator(_check_database_url), Field(repr=False), In("database", "url")
    ] = DEFAULT_DATABASE_URL
    telegram_token: Annotated[
        str, AfterValidator(_check_token), Field(repr=False), In("telegram", "token")
    ] = ""
    telegram_base_url: Annotated[
        str, AfterValidator(_check_http_url), In("telegram", "base_url")
    ] = TELEGRAM_API
    mode: Annotated[Literal["polling", "webhook"], In("telegram", "mode")] = "polling"
    operators: Annotated[
        frozenset[Annotated[int, Field(gt=0)]],
        Field(strict=False),  # a list in the file; each id is still a strict int
        NoDecode,
        In("telegram", "operators"),
    ] = frozenset()
    webhook: Annotated[WebhookConfig, In("telegram", "webhook")] = WebhookConfig()
    sweep_seconds: Annotated[Seconds, In("bot", "sweep_seconds")] = 1.0
    board_edit_seconds: Annotated[Seconds, In("bot", "board_edit_seconds")] = 3.0
    #: How long a worker holds the job of sending a board or results (the service's
    #: ``DELIVERY_LEASE_MS``, which says why): how late one whose sender died goes out.
    delivery_lease_seconds: Annotated[Seconds, In("bot", "delivery_lease_seconds")] = 3.0
    admin_cache_seconds: Annotated[Seconds, In("bot", "admin_cache_seconds")] = 60.0
    #: Replies a group may get per minute (of Telegram's ~20 messages a minute, the rest
    #: is for boards and results); more answers than that wait and go out combined.
    replies_per_minute: Annotated[int, Field(ge=1, le=20), In("bot", "replies_per_minute")] = 10
    log_level: Annotated[str, AfterValidator(_check_log_level), In("bot", "log_level")] = "INFO"
    #: ``text`` (a line a person reads) or ``json`` (an object per line, for a collector).
    log_format: Annotated[Literal["text", "json"], In("bot", "log_format")] = "text"
    web: Annotated[WebConfig, In("web")] = WebConfig()
    game: Annotated[InstanceOf[Settings], BeforeValidator(_game), In("game")] = Settings()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Written in code, a Config is what its arguments say; load_config adds the rest.
        return (init_settings,)

    @property
    def bot_id(self) -> int:
        """The bot's own id, the token's numeric prefix (0 without a token): processed
        updates are recorded per bot, so another token on the same database drops
        nothing."""
        prefix = self.telegram_token.partition(":")[0]
        return int(prefix) if prefix.isascii() and prefix.isdecimal() else 0

    def require_token(self) -> str:
        """The bot token, or a ``ConfigError`` that says where to put it."""
        if not self.telegram_token:
            raise ConfigError(
                "no Telegram bot token: set NIUNIU_TELEGRAM_TOKEN or [telegram] token "
                "in the config file (get one from @BotFather)"
            )
        return self.telegram_token


def place_of(field: FieldInfo) -> In:
    """Where ``field`` of ``Config`` lives in the file."""
    return next(item for item in field.metadata if isinstance(item, In))


#: Where each field of ``Config`` lives in the file: (section, key or None) -> field.
PLACES = {
    (place.section, place.key): name
    for name, place in ((name, place_of(f)) for name, f in Config.model_fields.items())
}
#: The file's sections and, for each, its keys (a key may be a table: ``webhook``).
SECTIONS: dict[str, list[str]] = {}
for _section, _key in PLACES:
    SECTIONS.setdefault(_section, []).extend([_key] if _key else [])
#: Fields whose value an error never repeats: the token and the webhook's secret, and the
#: database URL, which may hold a password.
SECRET_FIELDS = frozenset({"telegram_token", "secret_token", "database_url"})

# -- the sources ----------------------------------------------------------------------------


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
            self.problems.append(_unknown_section(section, table))
        elif not isinstance(table, dict):
            self.problems.append(
                f"[{section}] must be a section (a table), not a single value, got {_shown(table)}"
            )
        else:
            for key, value in table.items():
                if (section, key) in PLACES:
                    self.values[PLACES[(section, key)]] = value
                else:
                    self.problems.append(_unknown_key([section], key, value, SECTIONS[section]))

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


# -- one line per problem -------------------------------------------------------------------


def _suggestion(name: str, known: list[str]) -> str | None:
    matches = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.6)
    return matches[0] if matches else None


def _shown(value: Any) -> str:
    """A value as TOML writes it (about), shortened."""
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, float):
        return repr(value)  # inf, not JSON's Infinity
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


_PREDICATES = {
    "float_type": "must be a number, like 1.5",
    "float_parsing": "must be a number, like 1.5",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "string_type": 'must be text in quotes, like "abc"',
    "bool_type": "must be true or false",
    "list_type": "must be a list, like [1, 2]",
    "tuple_type": "must be a list, like [1, 2]",
    "frozen_set_type": "must be a list, like [1, 2]",
    "finite_number": "must be a finite number",
    "model_type": "must be a section (a table), not a single value",
    "model_attributes_type": "must be a section (a table), not a single value",
    "dict_type": "must be a section (a table), not a single value",
    "is_instance_of": "must be a section (a table), not a single value",
}


def _predicate(problem: ErrorDetails) -> str:
    kind, ctx = problem["type"], problem.get("ctx") or {}
    if kind == "greater_than":
        return f"must be more than {_number(ctx['gt'])}"
    if kind == "greater_than_equal":
        return f"must be at least {_number(ctx['ge'])}"
    if kind == "less_than_equal":
        return f"must be at most {_number(ctx['le'])}"
    if kind == "literal_error":
        return f"must be {ctx['expected']}"
    if kind in _PREDICATES:
        return _PREDICATES[kind]
    message = problem["msg"]  # our own checks' messages (``_invalid``) read on from the name
    return message if kind == "config" else "is wrong: " + message[:1].lower() + message[1:]


def _table_keys(path: list[str]) -> list[str]:
    """The keys of the table at ``path`` (``["telegram"]``, ``["telegram", "webhook"]``)."""
    place = (path[0], path[1] if len(path) > 1 else None)
    if place not in PLACES:
        return SECTIONS[path[0]]
    annotation = Config.model_fields[PLACES[place]].annotation
    assert isinstance(annotation, type) and issubclass(annotation, BaseModel)
    return list(annotation.model_fields)


def _is_model(field: str) -> bool:
    """Whether the field of ``Config`` named ``field`` is a table of its own."""
    annotation = Config.model_fields[field].annotation
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _is_table(path: list[str], name: str) -> bool:
    """Whether ``name`` in the table at ``path`` is a table (``[telegram] webhook``)."""
    field = PLACES.get((path[0], name)) if len(path) == 1 else None
    return field is not None and _is_model(field)


def _unknown_section(name: str, value: Any) -> str:
    """The line for a name above every section: an unknown table, or a key outside one."""
    if not isinstance(value, dict):
        homes = [section for section, keys in SECTIONS.items() if name in keys]
        home = f"; it belongs in [{homes[0]}]" if homes else ""
        return f"key {name} is outside every section{home}"
    suggestion = _suggestion(name, list(SECTIONS))
    if suggestion is not None:
        return f"unknown section [{name}]; did you mean [{suggestion}]?"
    sections = ", ".join(f"[{section}]" for section in sorted(SECTIONS))
    return f"unknown section [{name}] (the sections are {sections})"


def _unknown_key(path: list[str], name: str, value: Any, known: list[str]) -> str:
    """The line for an unknown key (or table) in the table at ``path``, with the nearest
    known name."""
    where = ".".join(path)
    suggestion = _suggestion(name, known)
    if isinstance(value, dict):  # a table: [telegram.webhok]
        hint = ""
        if suggestion is not None and _is_table(path, suggestion):
            hint = f"; did you mean [{where}.{suggestion}]?"
        return f"unknown section [{where}.{name}]{hint}"
    if suggestion is not None:
        shown = f"[{where}.{suggestion}]" if _is_table(path, suggestion) else suggestion
        return f"unknown key [{where}] {name}; did you mean {shown}?"
    keys = ", ".join(key for key in known if not _is_table(path, key))
    return f"unknown key [{where}] {name} (the keys of [{where}] are {keys})"


def _problem_line(problem: ErrorDetails, from_environment: Mapping[str, Any]) -> str:
    """One line for one of pydantic's errors: ``[section] key`` or the variable first."""
    if problem["type"] == "game":
        return problem["msg"]
    field, *rest = (str(part) for part in problem["loc"])
    place = place_of(Config.model_fields[field])
    if rest and _is_model(field):  # a key of [web] or [telegram.webhook]
        table = place.section if place.key is None else f"{place.section}.{place.key}"
        key, rest = rest[0], rest[1:]
    else:
        table, key = place.section, place.key or ""
    if problem["type"] == "extra_forbidden":
        path = table.split(".")
        return _unknown_key(path, key, problem["input"], _table_keys(path))
    name = f"[{table}]" + (f" {key}" if key else "")
    given = from_environment.get(field)
    if isinstance(given, dict) and key in given:
        name = f"{ENV_PREFIX}{field}_{key}".upper()
    elif field in from_environment and not isinstance(given, dict):
        name = f"{ENV_PREFIX}{field}".upper()
    if rest:
        name += f" (item {int(rest[0]) + 1})" if rest[0].isdigit() else f" {rest[0]}"
    line = f"{name} {_predicate(problem)}"
    secret = field in SECRET_FIELDS or key in SECRET_FIELDS
    if not secret and not isinstance(problem["input"], dict):
        line += f", got {_shown(problem['input'])}"
    return line


def describe_errors(
    error: ValidationError, from_environment: Mapping[str, Any], first: list[str]
) -> str:
    """The first problem (``first``, the file's unknown names, then ``error``'s) in one
    line, and how many more there are."""
    problems = error.errors(include_url=False)
    return _with_count([*first, *(_problem_line(p, from_environment) for p in problems)])


def _with_count(lines: list[str]) -> str:
    more = len(lines) - 1
    if more:
        return lines[0] + f" (and {more} more {'problem' if more == 1 else 'problems'})"
    return lines[0]


# -- loading --------------------------------------------------------------------------------


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
        raise ConfigError(_with_count(file.problems))
    if config.mode == "webhook" and not config.webhook.public_url.startswith("https://"):
        raise ConfigError('webhook mode needs [telegram.webhook] public_url = "https://..."')
    if config.mode == "webhook" and not config.webhook.secret_token:
        # Without it anyone who finds the URL could post updates in an admin's name.
        raise ConfigError("webhook mode needs [telegram.webhook] secret_token")
    return config

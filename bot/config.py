"""Configuration: a TOML file (``--config`` or ``NIUNIU_CONFIG``) with environment overrides.

Every value is checked at start-up, and a problem is one line that names the key
(``[bot] sweep_seconds must be more than 0, got -1``) or the environment variable it came
from. An unknown section or key is an error, with the nearest known name suggested: a
misspelt key would otherwise be ignored and its default used without a word.

Values under ``[game]`` are written as an admin types them in ``/set`` (``min_bid = "100"``
is 100.00, ``rake = "5%"``), are checked as ``/set`` checks them, and become every group's
defaults.

The file's sections are pydantic models (strict: ``sweep_seconds = "1"`` is refused, as
TOML can say a number). pydantic-settings is not used: its TOML source skips a missing
file without a word, and its environment source maps a variable to a key by the key's
path, while the bot's variables (``NIUNIU_MODE`` for ``[telegram] mode``,
``NIUNIU_LOG_LEVEL`` for ``[bot] log_level``) do not follow one; both would have to be
replaced. So the file is read here, and the variables are a table (``ENV_OVERRIDES``).
"""

from __future__ import annotations

import difflib
import ipaddress
import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from bot.engine.settings import ALIASES, SETTING_NAMES, SettingError, Settings
from bot.store.db import DEFAULT_DATABASE_URL, backend_of

TELEGRAM_API = "https://api.telegram.org/bot"

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class ConfigError(Exception):
    """The configuration cannot be used; ``str()`` is a one-line explanation."""


@dataclass(frozen=True)
class WebhookConfig:
    """Where Telegram delivers updates in webhook mode."""

    listen: str = "0.0.0.0"
    port: int = 8443
    public_url: str = ""
    secret_token: str = field(default="", repr=False)
    path: str = "telegram"


@dataclass(frozen=True)
class WebConfig:
    """The bot's own HTTP server: ``/healthz``, ``/readyz``, ``/metrics`` (and the operator
    console, when ``console`` is on). Off unless ``[web] listen`` names where to listen."""

    host: str = ""
    port: int = 0
    #: How the console's pages are reached from outside ("" = not said), for links.
    public_url: str = ""
    console: bool = False
    #: The reverse proxies in front of the server (addresses or networks): a request from
    #: one of them is counted, for the console's sign-in limit, under the client address
    #: its ``X-Forwarded-For`` names.
    trusted_proxies: tuple[IPNetwork, ...] = ()

    @property
    def enabled(self) -> bool:
        """Whether the server runs at all (``listen`` was given)."""
        return bool(self.host)

    @property
    def console_url(self) -> str | None:
        """Where the console's pages are reached, for the sign-in links ``/console``
        sends: ``public_url``, else the listen address itself (for use on this machine);
        ``None`` when the console is off."""
        if not (self.enabled and self.console):
            return None
        return self.public_url or f"http://{self.listen}"

    @property
    def listen(self) -> str:
        """``host:port`` as written in the file ("" when off); IPv6 hosts in brackets."""
        if not self.enabled:
            return ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


@dataclass(frozen=True)
class Config:
    """Everything the bot process needs."""

    database_url: str = DEFAULT_DATABASE_URL
    telegram_token: str = field(default="", repr=False)
    telegram_base_url: str = TELEGRAM_API
    mode: str = "polling"
    webhook: WebhookConfig = field(default_factory=WebhookConfig)
    web: WebConfig = field(default_factory=WebConfig)
    operators: frozenset[int] = frozenset()
    game: Settings = field(default_factory=Settings)
    sweep_seconds: float = 1.0
    board_edit_seconds: float = 3.0
    #: How long a worker holds the job of sending a board or results (the service's
    #: ``DELIVERY_LEASE_MS``, which says why): how late one whose sender died goes out.
    delivery_lease_seconds: float = 3.0
    admin_cache_seconds: float = 60.0
    #: Replies a group may get per minute (of Telegram's ~20 messages a minute, the rest
    #: is for boards and results); more answers than that wait and go out combined.
    replies_per_minute: int = 10
    log_level: str = "INFO"
    #: ``text`` (a line a person reads) or ``json`` (an object per line, for a collector).
    log_format: str = "text"

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


#: Environment variables that override a key of the file: variable -> (section, key).
ENV_OVERRIDES: dict[str, tuple[str, str]] = {
    "NIUNIU_TELEGRAM_TOKEN": ("telegram", "token"),
    "NIUNIU_TELEGRAM_BASE_URL": ("telegram", "base_url"),
    "NIUNIU_DATABASE_URL": ("database", "url"),
    "NIUNIU_MODE": ("telegram", "mode"),
    "NIUNIU_LOG_LEVEL": ("bot", "log_level"),
    "NIUNIU_LOG_FORMAT": ("bot", "log_format"),
    "NIUNIU_WEB_LISTEN": ("web", "listen"),
    "NIUNIU_WEB_PUBLIC_URL": ("web", "public_url"),
    "NIUNIU_WEB_CONSOLE": ("web", "console"),
    "NIUNIU_WEB_TRUSTED_PROXIES": ("web", "trusted_proxies"),
}
#: Variables for keys that are true or false in the file: a variable is text, so these
#: spellings (any case) say true or false; any other value is refused as the file's would be.
ENV_BOOLEAN_KEYS = frozenset({"NIUNIU_WEB_CONSOLE"})
#: Variables for keys that are lists in the file: comma-separated.
ENV_LIST_KEYS = frozenset({"NIUNIU_WEB_TRUSTED_PROXIES"})
ENV_BOOLEANS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
#: Keys whose value an error never repeats: the token and the webhook's secret, and the
#: database URL, which may hold a password.
SECRET_KEYS = frozenset({"token", "secret_token", "url"})

# -- the file's schema --------------------------------------------------------------------


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


def _check_network(network: str) -> str:
    try:
        ipaddress.ip_network(network, strict=False)
    except ValueError:
        raise _invalid(
            f'holds "{network}", which is not an IP address or network (like "10.0.0.0/8")'
        ) from None
    return network


def split_listen(listen: str) -> tuple[str, int]:
    """``host:port`` (checked) as the host, without IPv6 brackets, and the port."""
    host, _, port = listen.rpartition(":")
    return host.strip("[]"), int(port)


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _check_log_level(level: str) -> str:
    if level.upper() not in LOG_LEVELS:
        raise _invalid(f"must be one of {', '.join(LOG_LEVELS)} (in any case)")
    return level.upper()


Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Port = Annotated[int, AfterValidator(_check_port)]


class _Section(BaseModel):
    """A table of the file: strict types, and no key it does not know."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class DatabaseSection(_Section):
    """``[database]``."""

    url: Annotated[str, AfterValidator(_check_database_url), Field(repr=False)] = (
        DEFAULT_DATABASE_URL
    )


class WebhookSection(_Section):
    """``[telegram.webhook]``."""

    listen: str = WebhookConfig.listen
    port: Port = WebhookConfig.port
    public_url: str = WebhookConfig.public_url
    secret_token: Annotated[str, AfterValidator(_check_secret_token), Field(repr=False)] = ""
    path: str = WebhookConfig.path


class TelegramSection(_Section):
    """``[telegram]``."""

    token: Annotated[str, AfterValidator(_check_token), Field(repr=False)] = ""
    base_url: Annotated[str, AfterValidator(_check_http_url)] = TELEGRAM_API
    mode: Literal["polling", "webhook"] = "polling"
    operators: list[Annotated[int, Field(gt=0)]] = []
    webhook: WebhookSection = WebhookSection()


class BotSection(_Section):
    """``[bot]``."""

    sweep_seconds: Seconds = Config.sweep_seconds
    board_edit_seconds: Seconds = Config.board_edit_seconds
    delivery_lease_seconds: Seconds = Config.delivery_lease_seconds
    admin_cache_seconds: Seconds = Config.admin_cache_seconds
    replies_per_minute: Annotated[int, Field(ge=1, le=20)] = Config.replies_per_minute
    log_level: Annotated[str, AfterValidator(_check_log_level)] = Config.log_level
    log_format: Literal["text", "json"] = "text"


class WebSection(_Section):
    """``[web]``."""

    listen: Annotated[str, AfterValidator(_check_listen)] = ""
    public_url: Annotated[str, AfterValidator(_check_web_url)] = ""
    console: bool = False
    trusted_proxies: list[Annotated[str, AfterValidator(_check_network)]] = []


class ConfigFile(_Section):
    """The whole file. ``[game]`` is checked key by key as ``/set`` checks it
    (``game_settings``)."""

    database: DatabaseSection = DatabaseSection()
    telegram: TelegramSection = TelegramSection()
    bot: BotSection = BotSection()
    web: WebSection = WebSection()
    game: dict[str, Any] = {}


# -- one line per problem -----------------------------------------------------------------


def _suggestion(name: str, known: list[str]) -> str | None:
    matches = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.6)
    return matches[0] if matches else None


def _sections_of(model: type[BaseModel]) -> dict[str, type[BaseModel] | None]:
    """The fields of ``model`` that are tables: their model, or None for ``[game]``."""
    found: dict[str, type[BaseModel] | None] = {}
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found[name] = annotation
        elif model is ConfigFile:
            found[name] = None
    return found


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
    "finite_number": "must be a finite number",
    "model_type": "must be a section (a table), not a single value",
    "dict_type": "must be a section (a table), not a single value",
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


def _unknown(path: list[str], name: str, value: Any, model: type[BaseModel]) -> str:
    """The line for an unknown section or key, with the nearest known name."""
    sections = _sections_of(model)
    if not path and not isinstance(value, dict):
        # A key above every section: say which section has it, if one does.
        homes = [
            section
            for section, sub in _sections_of(ConfigFile).items()
            if sub is not None and name in sub.model_fields
        ]
        home = f"; it belongs in [{homes[0]}]" if homes else ""
        return f"key {name} is outside every section{home}"
    known = list(model.model_fields)
    suggestion = _suggestion(name, known)
    if isinstance(value, dict):
        # A table: [databse] or [telegram.webhok].
        where = ".".join([*path, name])
        hint = ""
        if suggestion in sections:
            hint = f"; did you mean [{'.'.join([*path, suggestion])}]?"
        elif not path:
            hint = f" (the sections are {', '.join(f'[{s}]' for s in sorted(sections))})"
        return f"unknown section [{where}]{hint}"
    where = ".".join(path)
    if suggestion is not None:
        shown = f"[{where}.{suggestion}]" if suggestion in sections else suggestion
        return f"unknown key [{where}] {name}; did you mean {shown}?"
    keys = ", ".join(key for key in known if key not in sections)
    return f"unknown key [{where}] {name} (the keys of [{where}] are {keys})"


def _problem_line(problem: ErrorDetails, origins: Mapping[tuple[str, str], str]) -> str:
    """One line for one of pydantic's errors: ``[section] key`` (or the variable) first."""
    location = [str(part) for part in problem["loc"]]
    model: type[BaseModel] = ConfigFile
    path: list[str] = []
    for part in location:
        sections = _sections_of(model)
        if part not in sections:
            break
        path.append(part)
        sub = sections[part]
        if sub is None:
            break
        model = sub
    rest = location[len(path) :]
    if problem["type"] == "extra_forbidden":
        return _unknown(path, rest[0], problem["input"], model)
    key = rest[0] if rest else ""
    name = f"[{'.'.join(path)}]" + (f" {key}" if key else "")
    if len(path) == 1 and key and (path[0], key) in origins:
        name = origins[(path[0], key)]
    if len(rest) > 1:
        name += f" (item {int(rest[1]) + 1})" if rest[1].isdigit() else f" {rest[1]}"
    line = f"{name} {_predicate(problem)}"
    if key not in SECRET_KEYS and not isinstance(problem["input"], dict):
        line += f", got {_shown(problem['input'])}"
    return line


def describe_errors(error: ValidationError, origins: Mapping[tuple[str, str], str]) -> str:
    """The first problem of ``error`` in one line, and how many more there are."""
    problems = error.errors(include_url=False)
    line = _problem_line(problems[0], origins)
    more = len(problems) - 1
    if more:
        line += f" (and {more} more {'problem' if more == 1 else 'problems'})"
    return line


# -- loading ------------------------------------------------------------------------------

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


def load_config(
    path: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Config:
    """Read the config file (if any), apply environment overrides and check every value;
    a ``ConfigError`` names the first key that is wrong."""
    env = os.environ if environ is None else environ
    named_by = ""
    if not path and env.get("NIUNIU_CONFIG"):
        path, named_by = env["NIUNIU_CONFIG"], " (NIUNIU_CONFIG)"
    data = _read(path, named_by) if path else {}
    origins: dict[tuple[str, str], str] = {}
    for variable, (section, key) in ENV_OVERRIDES.items():
        value = env.get(variable)
        table = data.setdefault(section, {})
        if value and isinstance(table, dict):  # an empty variable overrides nothing
            table[key] = value
            origins[(section, key)] = variable
            if variable in ENV_BOOLEAN_KEYS:
                table[key] = ENV_BOOLEANS.get(value.strip().lower(), value)
            elif variable in ENV_LIST_KEYS:
                table[key] = [item.strip() for item in value.split(",") if item.strip()]
    try:
        parsed = ConfigFile.model_validate(data)
    except ValidationError as error:
        raise ConfigError(describe_errors(error, origins)) from None
    telegram, webhook, bot, web = parsed.telegram, parsed.telegram.webhook, parsed.bot, parsed.web
    host, port = split_listen(web.listen) if web.listen else ("", 0)
    config = Config(
        database_url=parsed.database.url,
        telegram_token=telegram.token,
        telegram_base_url=telegram.base_url,
        mode=telegram.mode,
        webhook=WebhookConfig(
            listen=webhook.listen,
            port=webhook.port,
            public_url=webhook.public_url,
            secret_token=webhook.secret_token,
            path=webhook.path,
        ),
        web=WebConfig(
            host=host,
            port=port,
            public_url=web.public_url,
            console=web.console,
            trusted_proxies=tuple(
                ipaddress.ip_network(network, strict=False) for network in web.trusted_proxies
            ),
        ),
        operators=frozenset(telegram.operators),
        game=game_settings(parsed.game),
        sweep_seconds=bot.sweep_seconds,
        board_edit_seconds=bot.board_edit_seconds,
        delivery_lease_seconds=bot.delivery_lease_seconds,
        admin_cache_seconds=bot.admin_cache_seconds,
        replies_per_minute=bot.replies_per_minute,
        log_level=bot.log_level,
        log_format=bot.log_format,
    )
    if config.mode == "webhook" and not config.webhook.public_url.startswith("https://"):
        raise ConfigError('webhook mode needs [telegram.webhook] public_url = "https://..."')
    if config.mode == "webhook" and not config.webhook.secret_token:
        # Without it anyone who finds the URL could post updates in an admin's name.
        raise ConfigError("webhook mode needs [telegram.webhook] secret_token")
    return config

"""The configuration's one model, ``Config``: every value the bot process needs, each
field with its check, its default and where it lives in the file (``In``).

Values under ``[game]`` are written as an admin types them in ``/set`` (``min_bid = "100"``
is 100.00, ``rake = "5%"``), are checked as ``/set`` checks them, and become every group's
defaults. ``Config(...)`` written in code is what it says; only ``load_config``
(``bot.config.loading``) reads the file and the environment.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    InstanceOf,
    PlainValidator,
    ValidationInfo,
    field_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError
from pydantic_settings import (
    BaseSettings,
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


def _check_listed_token(token: str) -> str:
    # In a list, "" is no token (``token = ""`` means none, as the example file has it).
    return _check_token(token or " ")


def bot_id_of(token: str) -> int:
    """The bot's own id, a token's numeric prefix (0 for no token)."""
    prefix = token.partition(":")[0]
    return int(prefix) if prefix.isascii() and prefix.isdecimal() else 0


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
    operator console, when ``console`` is on, and the Mini App, when ``miniapp`` is). Off
    unless ``listen`` names where to listen.

    Code may also give the address as ``host`` and ``port`` (in that order, then
    ``public_url``, ``console``, ``trusted_proxies`` and ``miniapp``)."""

    #: ``host:port`` as written in the file ("" when off); IPv6 hosts in brackets.
    listen: Annotated[str, AfterValidator(_check_listen)] = ""
    #: How the server is reached from outside ("" = not said), for links: the console's
    #: sign-in links, and the Mini App's buttons (``miniapp_url``).
    public_url: Annotated[str, AfterValidator(_check_web_url)] = ""
    console: bool = False
    #: The reverse proxies in front of the server (addresses or networks): a request from
    #: one of them is counted, for the console's sign-in limit, under the client address
    #: its ``X-Forwarded-For`` names.
    trusted_proxies: Annotated[tuple[Network, ...], BeforeValidator(_list_as_tuple), NoDecode] = ()
    #: The Mini App under ``/miniapp/`` (docs/miniapp.md).
    miniapp: bool = False

    def __init__(self, *args: Any, **values: Any) -> None:
        names = ("host", "port", "public_url", "console", "trusted_proxies", "miniapp")
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

    @property
    def miniapp_on(self) -> bool:
        """Whether the server serves the Mini App (``miniapp``, and a server at all)."""
        return self.enabled and self.miniapp

    @property
    def miniapp_url(self) -> str | None:
        """The Mini App's public address, which the bot's buttons open: under
        ``public_url``; ``None`` when the app is off or no public address is said (a
        listen address is no place Telegram opens)."""
        if not (self.miniapp_on and self.public_url):
            return None
        return f"{self.public_url.rstrip('/')}/miniapp/"


def nearest(name: str, known: list[str]) -> str | None:
    """The known name nearest ``name``, if one is near enough to be a misspelling."""
    matches = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.6)
    return matches[0] if matches else None


#: The names ``[game]`` accepts: the settings' own names and the short ones of ``/set``.
GAME_KEYS = (*SETTING_NAMES, *ALIASES)


def game_settings(values: Mapping[str, Any], base: Settings | None = None) -> Settings:
    """Settings from ``[game]`` values typed as an admin would type them."""
    settings = base or Settings()
    for key, value in values.items():
        if key.strip().lower() not in GAME_KEYS:
            suggestion = nearest(key, list(GAME_KEYS))
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
    #: More bots served by the same process, each its own ``Application``, budgets and
    #: workers on the one database (docs/operator.md, "Several bots"); ``token`` comes first.
    telegram_tokens: Annotated[
        tuple[Annotated[str, AfterValidator(_check_listed_token)], ...],
        BeforeValidator(_list_as_tuple),
        Field(repr=False),
        NoDecode,
        In("telegram", "tokens"),
    ] = ()
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

    @field_validator("telegram_tokens")
    @classmethod
    def _each_bot_once(cls, tokens: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        # Two tokens of one bot (the same token, or an old and a new one) would be two
        # shells answering each of that bot's updates.
        first = info.data.get("telegram_token")
        seen = {bot_id_of(first)} if first else set()
        for token in tokens:
            bot_id = bot_id_of(token)
            if bot_id in seen:
                again = "which token names too" if first and bot_id == bot_id_of(first) else "twice"
                raise _invalid(f"names bot {bot_id} {again}: give each bot's token once")
            seen.add(bot_id)
        return tokens

    @property
    def tokens(self) -> tuple[str, ...]:
        """Every bot token the process serves: ``token``, then ``tokens``."""
        first = (self.telegram_token,) if self.telegram_token else ()
        return (*first, *self.telegram_tokens)

    @property
    def bot_id(self) -> int:
        """The first bot's own id, its token's numeric prefix (0 without a token):
        processed updates are recorded per bot, so another token on the same database
        drops nothing."""
        return bot_id_of(self.tokens[0]) if self.tokens else 0

    def require_tokens(self) -> tuple[str, ...]:
        """Every bot token (at least one), or a ``ConfigError`` that says where to put one."""
        if not self.tokens:
            raise ConfigError(
                "no Telegram bot token: set NIUNIU_TELEGRAM_TOKEN or [telegram] token "
                "in the config file (get one from @BotFather; more bots: [telegram] tokens)"
            )
        return self.tokens

    def require_token(self) -> str:
        """The first bot token (the console's, see ``GameBot``), or a ``ConfigError``
        that says where to put one."""
        return self.require_tokens()[0]


def place_of(field: FieldInfo) -> In:
    """Where ``field`` of ``Config`` lives in the file."""
    return next(item for item in field.metadata if isinstance(item, In))

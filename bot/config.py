"""Configuration: a TOML file (``--config`` or ``NIUNIU_CONFIG``) with environment overrides.

Values under ``[game]`` are written as an admin types them in ``/set`` (``min_bid = "100"``
is 100.00, ``rake = "5%"``) and become every group's defaults.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.engine.settings import SettingError, Settings
from bot.store.db import DEFAULT_DATABASE_URL

TELEGRAM_API = "https://api.telegram.org/bot"


class ConfigError(Exception):
    """The configuration cannot be used; ``str()`` is a one-line explanation."""


@dataclass(frozen=True)
class WebhookConfig:
    """Where Telegram delivers updates in webhook mode."""

    listen: str = "0.0.0.0"
    port: int = 8443
    public_url: str = ""
    secret_token: str = ""
    path: str = "telegram"


@dataclass(frozen=True)
class Config:
    """Everything the bot process needs."""

    database_url: str = DEFAULT_DATABASE_URL
    telegram_token: str = field(default="", repr=False)
    telegram_base_url: str = TELEGRAM_API
    mode: str = "polling"
    webhook: WebhookConfig = field(default_factory=WebhookConfig)
    operators: frozenset[int] = frozenset()
    game: Settings = field(default_factory=Settings)
    sweep_seconds: float = 1.0
    board_edit_seconds: float = 3.0
    #: How long a worker holds the job of sending a board or results (the service's
    #: ``DELIVERY_LEASE_MS``, which says why): how late one whose sender died goes out.
    delivery_lease_seconds: float = 10.0
    admin_cache_seconds: float = 60.0
    #: Replies a group may get per minute (of Telegram's ~20 messages a minute, the rest
    #: is for boards and results); more answers than that wait and go out combined.
    replies_per_minute: int = 10
    log_level: str = "INFO"

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


def game_settings(values: Mapping[str, Any], base: Settings | None = None) -> Settings:
    """Settings from ``[game]`` values typed as an admin would type them."""
    settings = base or Settings()
    for key, value in values.items():
        text = ",".join(str(v) for v in value) if isinstance(value, list) else str(value)
        try:
            _, settings = settings.changed(key, text)
        except SettingError as error:
            raise ConfigError(f"[game] {error}") from None
    return settings


def load_config(
    path: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Config:
    """Read the config file (if any) and apply environment overrides."""
    env = os.environ if environ is None else environ
    path = path or env.get("NIUNIU_CONFIG")
    data: dict[str, Any] = {}
    if path:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"config file {path} does not exist") from None
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"config file {path}: {error}") from None
    database = data.get("database", {})
    telegram = data.get("telegram", {})
    webhook = telegram.get("webhook", {})
    bot_section = data.get("bot", {})
    try:
        operators = frozenset(int(user) for user in telegram.get("operators", []))
        webhook_config = WebhookConfig(
            listen=str(webhook.get("listen", "0.0.0.0")),
            port=int(webhook.get("port", 8443)),
            public_url=str(webhook.get("public_url", "")),
            secret_token=str(webhook.get("secret_token", "")),
            path=str(webhook.get("path", "telegram")),
        )
        config = Config(
            database_url=env.get("NIUNIU_DATABASE_URL")
            or database.get("url", DEFAULT_DATABASE_URL),
            telegram_token=env.get("NIUNIU_TELEGRAM_TOKEN") or telegram.get("token", ""),
            telegram_base_url=env.get("NIUNIU_TELEGRAM_BASE_URL")
            or telegram.get("base_url", TELEGRAM_API),
            mode=env.get("NIUNIU_MODE") or telegram.get("mode", "polling"),
            webhook=webhook_config,
            operators=operators,
            game=game_settings(data.get("game", {})),
            sweep_seconds=float(bot_section.get("sweep_seconds", 1.0)),
            board_edit_seconds=float(bot_section.get("board_edit_seconds", 3.0)),
            delivery_lease_seconds=float(bot_section.get("delivery_lease_seconds", 10.0)),
            admin_cache_seconds=float(bot_section.get("admin_cache_seconds", 60.0)),
            replies_per_minute=int(bot_section.get("replies_per_minute", 10)),
            log_level=str(env.get("NIUNIU_LOG_LEVEL") or bot_section.get("log_level", "INFO")),
        )
    except (TypeError, ValueError) as error:
        raise ConfigError(f"config: {error}") from None
    if not 1 <= config.replies_per_minute <= 20:
        raise ConfigError("[bot] replies_per_minute must be 1 to 20 (Telegram's limit)")
    if config.delivery_lease_seconds <= 0:
        raise ConfigError("[bot] delivery_lease_seconds must be positive")
    if config.mode not in ("polling", "webhook"):
        raise ConfigError(f"[telegram] mode is 'polling' or 'webhook', not {config.mode!r}")
    if config.mode == "webhook" and not config.webhook.public_url.startswith("https://"):
        raise ConfigError('webhook mode needs [telegram.webhook] public_url = "https://..."')
    if config.mode == "webhook" and not config.webhook.secret_token:
        # Without it anyone who finds the URL could post updates in an admin's name.
        raise ConfigError("webhook mode needs [telegram.webhook] secret_token")
    return config

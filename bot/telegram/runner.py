"""Running the bot for real: logging without secrets, migrations, polling or webhook."""

from __future__ import annotations

import logging
from typing import Any

from telegram import Update

from bot.config import Config
from bot.service.game import GameService
from bot.store.db import Database
from bot.store.migrate import upgrade
from bot.telegram.app import build_application


class RedactSecrets(logging.Filter):
    """Replaces secrets (the bot token) in every log record, wherever it appears."""

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = [secret for secret in secrets if secret]

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if any(secret in message for secret in self.secrets):
            for secret in self.secrets:
                message = message.replace(secret, "<redacted>")
            record.msg, record.args = message, None
        return True


def configure_logging(level: str, secrets: list[str]) -> None:
    """Log to stderr at ``level``; the token never reaches a log line."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactSecrets(secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # httpx logs every request URL, and Bot API URLs contain the token.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("apscheduler").setLevel(logging.WARNING)


def run_bot(config: Config) -> None:
    """Migrate the database, then serve updates until stopped (SIGINT/SIGTERM)."""
    token = config.require_token()
    configure_logging(config.log_level, [token])
    upgrade(config.database_url)
    database = Database.from_url(config.database_url)
    service = GameService(database, config.game)

    async def close_database(_: Any) -> None:
        await database.dispose()

    application, _ = build_application(config, service, on_shutdown=close_database)
    allowed = [Update.MESSAGE, Update.CALLBACK_QUERY]
    if config.mode == "webhook":
        webhook = config.webhook
        application.run_webhook(
            listen=webhook.listen,
            port=webhook.port,
            url_path=webhook.path,
            webhook_url=f"{webhook.public_url.rstrip('/')}/{webhook.path}",
            secret_token=webhook.secret_token or None,
            allowed_updates=allowed,
        )
    else:
        application.run_polling(allowed_updates=allowed, poll_interval=0.0, timeout=10)

"""Running the bot for real: logging without secrets, migrations, polling or webhook."""

from __future__ import annotations

import asyncio
import logging
import signal

from bot.bootstrap import assemble
from bot.config import Config
from bot.store.migrate import upgrade
from bot.telegram.serving import ALLOWED_UPDATES, running
from bot.telegram.webhook import WebhookServer

log = logging.getLogger(__name__)


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
        if record.exc_info and not record.exc_text:
            # A traceback's messages may hold the token too (PTB's InvalidToken does).
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            for secret in self.secrets:
                record.exc_text = record.exc_text.replace(secret, "<redacted>")
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
    """Migrate the database, then serve updates until SIGINT or SIGTERM."""
    token = config.require_token()
    configure_logging(config.log_level, [token])
    upgrade(config.database_url)
    asyncio.run(serve(config))


async def serve(config: Config) -> None:
    """Serve updates (long polling, or a webhook by setting) until a stop signal."""
    assembly = assemble(config)
    application, game = assembly.application, assembly.game
    webhook = config.mode == "webhook"
    try:
        async with running(application, game, polling=not webhook) as stop:
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, stop.set)
            server = None
            if webhook:
                settings = config.webhook
                server = WebhookServer(
                    application,
                    listen=settings.listen,
                    port=settings.port,
                    path=settings.path,
                    secret_token=settings.secret_token,
                )
                await server.start()
            try:
                if webhook:
                    await application.bot.set_webhook(
                        url=f"{settings.public_url.rstrip('/')}/{settings.path.strip('/')}",
                        secret_token=settings.secret_token,
                        allowed_updates=ALLOWED_UPDATES,
                    )
                log.info("serving (%s)", config.mode)
                await stop.wait()
            finally:
                if server is not None:
                    await server.stop()
    finally:
        await assembly.database.dispose()

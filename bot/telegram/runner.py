"""Running the bot for real: logging without secrets, migrations, polling or webhook,
and the bot's own web server (``bot.web``) beside it when ``[web] listen`` is set."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import signal
import time
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from functools import partial

from bot import event_loop
from bot.bootstrap import Assembly, assemble_bots, migrate, shown_database
from bot.config import Config
from bot.config.model import bot_id_of
from bot.pictures.fonts import missing_fonts, missing_fonts_line
from bot.telegram.collector import tune_garbage_collector
from bot.telegram.miniapp_catalogues import MiniAppCatalogues
from bot.telegram.pictures import DRAWING
from bot.telegram.serving import ALLOWED_UPDATES, UpdateIntake, running
from bot.telegram.shell import AnyApplication
from bot.telegram.webhook import WebhookServer, webhook_paths
from bot.web.console import build_console
from bot.web.listener import ListenerLimits
from bot.web.metrics import BotMetrics
from bot.web.miniapp import build_miniapp
from bot.web.miniapp.moves import MiniAppBot
from bot.web.server import Readiness, WebServer, build_web_app
from bot.web.signing import SIGNED_TOKEN

log = logging.getLogger(__name__)

#: What a secret is replaced with in a log line.
REDACTED = "<redacted>"


class RedactSecrets(logging.Filter):
    """Replaces secrets (the bot token) and whatever matches ``patterns`` (the console's
    sign-in links and session cookies) in every log record, wherever they appear: the
    message, a traceback, a stack."""

    def __init__(self, secrets: list[str], patterns: Sequence[re.Pattern[str]] = ()) -> None:
        super().__init__()
        self.secrets = [secret for secret in secrets if secret]
        self.patterns = list(patterns)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        for pattern in self.patterns:
            text = pattern.sub(REDACTED, text)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = self.redact(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            # A traceback's messages may hold the token too (PTB's InvalidToken does).
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


class JsonLogFormatter(logging.Formatter):
    """A record as one JSON object on one line: ``time`` (UTC, ISO 8601, milliseconds),
    ``level``, ``logger``, ``message`` and, when there is one, ``exc`` (the traceback).

    The standard library's, not python-json-logger's: that formatter renders a
    traceback anew from ``exc_info`` instead of taking ``exc_text``, where
    ``RedactSecrets`` has blanked the token, so a token in an exception's message (PTB's
    ``InvalidToken`` has it) would reach the log; and the dozen lines here need no
    dependency.
    """

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exc"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False)


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(level: str, secrets: list[str], log_format: str = "text") -> None:
    """Log to stderr at ``level``, as text lines or JSON objects (``log_format``); the
    token never reaches a log line, nor does a console sign-in link's token or session
    cookie (at DEBUG, python-telegram-bot logs each Bot API call's parameters and answer,
    and ``/console`` sends a working link). The filter is on the one handler, so it sees
    every record of every logger at every level."""
    handler = logging.StreamHandler()
    formatter = JsonLogFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    handler.setFormatter(formatter)
    handler.addFilter(RedactSecrets(secrets, [SIGNED_TOKEN]))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # httpx logs every request URL, and Bot API URLs contain the token.
    logging.getLogger("httpx").setLevel(logging.WARNING)


def run_bot(config: Config) -> None:
    """Migrate the database, then serve updates until SIGINT or SIGTERM."""
    tokens = config.require_tokens()
    configure_logging(config.log_level, list(tokens), config.log_format)
    missing = missing_fonts()
    if missing:
        log.warning("%s", missing_fonts_line(missing))
    migrate(config.database_url)
    event_loop.run(serve(config))


def known_username(application: AnyApplication) -> str:
    """The bot's @username once it asked Telegram at start-up, "" before."""
    try:
        username: str = application.bot.username
        return username
    except RuntimeError:  # not initialized yet
        return ""


def _not_receiving(intakes: Sequence[UpdateIntake]) -> str | None:
    """Why some bot's updates do not come in (``/readyz``), or None when every bot's do."""
    for intake in intakes:
        reason = intake.not_receiving()
        if reason is not None:
            name = known_username(intake.application)
            return f"@{name}: {reason}" if name and len(intakes) > 1 else reason
    return None


def _web_server(
    config: Config,
    assemblies: Sequence[Assembly],
    metrics: BotMetrics,
    intakes: Sequence[UpdateIntake],
    limits: ListenerLimits,
) -> WebServer:
    """The web server (``[web]``), one for every bot: the console is the first bot's (its
    token signs the sign-in links every bot sends), the Mini App any bot's page's."""
    first = assemblies[0]
    readiness = Readiness(first.service.database_refuses_writes, partial(_not_receiving, intakes))
    console = None
    if config.web.console_url is not None:
        console = build_console(
            service=first.service,
            bot_token=first.game.token,
            operators=config.operators,
            public_url=config.web.console_url,
            is_group_admin=first.game.admins.is_admin,
            clock=time.time,
            bot_username=partial(known_username, first.application),
            trusted_proxies=config.web.trusted_proxies,
        )
    miniapp = None
    if config.web.miniapp_on:
        bots = [
            MiniAppBot(each.game.token, each.game.members.is_member, each.game.miniapp_moves)
            for each in assemblies
        ]
        miniapp = build_miniapp(
            service=first.service,
            bots=bots,
            round_texts=first.game.miniapp_rounds,
            clock=time.time,
            catalogues=MiniAppCatalogues(),
            member_seconds=config.admin_cache_seconds,
        )
    return WebServer(
        build_web_app(metrics, readiness, console=console, miniapp=miniapp),
        host=config.web.host,
        port=config.web.port,
        limits=limits,
    )


async def serve(config: Config) -> None:
    """Serve updates of every bot (``[telegram] token`` and ``tokens``; long polling, or a
    webhook by setting) until a stop signal, with the web server (``[web]``) from before
    the bots start until after they stopped: ``/healthz`` answers during start-up, and
    ``/readyz`` says why the bots are not ready yet."""
    metrics = BotMetrics() if config.web.enabled else None
    assemblies = assemble_bots(config, metrics=metrics)
    webhook = config.mode == "webhook"
    intakes = [UpdateIntake(assembly.application) for assembly in assemblies]
    # Behind the reverse proxies in front, every client's connections come from them.
    limits = ListenerLimits(uncounted=config.web.trusted_proxies)
    web_server = None
    try:
        if metrics is not None:
            web_server = _web_server(config, assemblies, metrics, intakes, limits)
            await web_server.start()
        await assemblies[0].database.open_connections()
        async with contextlib.AsyncExitStack() as bots:
            stop, polls = asyncio.Event(), []
            for assembly, intake in zip(assemblies, intakes, strict=True):
                polls.append(
                    await bots.enter_async_context(
                        running(
                            assembly.application, assembly.game, polling=not webhook, intake=intake
                        )
                    )
                )
            # Every bot stops polling at once, before the first of them drains.
            for each in polls:
                bots.callback(each.set)
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, stop.set)
            if webhook:
                await bots.enter_async_context(_webhook(config, assemblies, intakes, limits))
            tune_garbage_collector()
            DRAWING.start()
            for assembly in assemblies:
                log.info(
                    "serving @%s in %s mode, database %s",
                    assembly.application.bot.username,
                    config.mode,
                    shown_database(config.database_url),
                )
            await stop.wait()
    finally:
        DRAWING.stop()
        if web_server is not None:
            await web_server.stop()
        await assemblies[0].database.dispose()


@contextlib.asynccontextmanager
async def _webhook(
    config: Config,
    assemblies: Sequence[Assembly],
    intakes: Sequence[UpdateIntake],
    limits: ListenerLimits,
) -> AsyncIterator[None]:
    """Listen for Telegram's updates, each bot's at its own path (``webhook_paths``), and
    tell Telegram where they are."""
    settings = config.webhook
    paths = webhook_paths(
        settings.path, [bot_id_of(assembly.game.token) for assembly in assemblies]
    )
    server = WebhookServer(
        {path: assembly.application for path, assembly in zip(paths, assemblies, strict=True)},
        listen=settings.listen,
        port=settings.port,
        secret_token=settings.secret_token,
        limits=limits,
    )
    await server.start()
    try:
        for path, assembly, intake in zip(paths, assemblies, intakes, strict=True):
            await assembly.application.bot.set_webhook(
                url=f"{settings.public_url.rstrip('/')}{path}",
                secret_token=settings.secret_token,
                allowed_updates=ALLOWED_UPDATES,
            )
            intake.webhook_set = True
        yield
    finally:
        await server.stop()

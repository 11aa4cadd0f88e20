"""The composition root: configuration → database → service → the Telegram shell on an
``Application``. Running for real, the webhook, the demo and the benches all start here;
what differs between them (the HTTP transport, the rate limiter, an observer of
deadlines) is a parameter, not a patch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from telegram.ext import Application, ApplicationBuilder
from telegram.request import BaseRequest

from bot.config import Config
from bot.service.game import GameService
from bot.store.db import Database
from bot.telegram.deadlines import DeadlineObserver
from bot.telegram.delivery import SendRateLimiter
from bot.telegram.ordering import ChatOrderedProcessor
from bot.telegram.shell import GameBot

AnyApplication = Application[Any, Any, Any, Any, Any, Any]


@dataclass(frozen=True, slots=True)
class Assembly:
    """What the composition root built; ``dispose`` the database when done."""

    database: Database
    service: GameService
    application: AnyApplication
    game: GameBot


def assemble(
    config: Config,
    *,
    database: Database | None = None,
    request: BaseRequest | None = None,
    get_updates_request: BaseRequest | None = None,
    rate_limiter: bool = True,
    deadline_observer: DeadlineObserver | None = None,
) -> Assembly:
    """The bot for ``config``; run it with ``bot.telegram.serving.running``.

    ``database`` reuses an open one; ``request``/``get_updates_request`` replace the HTTP
    transport (a bench talks to Telegram in memory); ``rate_limiter=False`` leaves out
    Telegram's limits (the fake Telegram has none).
    """
    database = database or Database.from_url(config.database_url)
    service = GameService(database, config.game, bot_id=config.bot_id)
    game = GameBot(config, service, deadline_observer=deadline_observer)
    builder: ApplicationBuilder[Any, Any, Any, Any, Any, Any] = (
        Application.builder()
        .token(config.require_token())
        .base_url(config.telegram_base_url)
        .concurrent_updates(ChatOrderedProcessor(game.locks))
    )
    if request is not None:
        builder = builder.request(request)
    if get_updates_request is not None:
        builder = builder.get_updates_request(get_updates_request)
    if rate_limiter:
        builder = builder.rate_limiter(SendRateLimiter(max_retries=5))
    application = builder.build()
    game.install(application)
    return Assembly(database, service, application, game)

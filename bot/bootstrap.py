"""The composition root: configuration → database → service → the Telegram shell on an
``Application``. Running for real, the webhook, the demo and the benches all start here;
what differs between them (the HTTP transport, the rate limiter, an observer of
deadlines) is a parameter, not a patch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.config import Config
from bot.service.game import GameService
from bot.store.db import Database
from bot.telegram.deadlines import DeadlineObserver
from bot.telegram.shell import AnyApplication, GameBot, build_application

if TYPE_CHECKING:  # only the shell imports python-telegram-bot (an import-linter contract)
    from telegram.request import BaseRequest


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
    console_url: str | None = None,
) -> Assembly:
    """The bot for ``config``; run it with ``bot.telegram.serving.running``.

    ``database`` reuses an open one; ``request``/``get_updates_request`` replace the HTTP
    transport (a bench talks to Telegram in memory); ``rate_limiter=False`` leaves out
    Telegram's limits (the fake Telegram has none); ``console_url`` is where the web
    console is served, for the links ``/console`` sends (``None``: the bot has none). The
    console itself is ``bot.web.console.build_console(service=..., is_group_admin=
    assembly.game.admins.is_admin, ...)``, mounted by the web server.
    """
    database = database or Database.from_url(config.database_url)
    service = GameService(database, config.game, bot_id=config.bot_id)
    game = GameBot(config, service, deadline_observer=deadline_observer, console_url=console_url)
    application = build_application(
        game,
        request=request,
        get_updates_request=get_updates_request,
        rate_limiter=rate_limiter,
    )
    return Assembly(database, service, application, game)

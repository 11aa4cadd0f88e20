"""The composition root: configuration → database → service → the Telegram shell on an
``Application``. Running for real, the webhook, the demo and the benches all start here;
what differs between them (the HTTP transport, the rate limiter, an observer of
deadlines, metrics) is a parameter, not a patch. Migrations run from here too, so the
shell never imports the store."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.config import Config
from bot.config.model import bot_id_of
from bot.engine.round import RoundState
from bot.service.game import CommandResult, GameService
from bot.service.round_changes import RoundChanges
from bot.store.db import Database
from bot.store.migrate import redact_url, upgrade, upgrade_async
from bot.telegram.deadlines import DeadlineObserver
from bot.telegram.shell import AnyApplication, GameBot, build_application
from bot.web.metrics import BotMetrics

if TYPE_CHECKING:  # only the shell imports python-telegram-bot (an import-linter contract)
    from telegram.request import BaseRequest


def migrate(database_url: str) -> None:
    """Bring the database at ``database_url`` to the newest schema (blocking); raises the
    store's ``MigrationFailed`` with the first line of why."""
    upgrade(database_url)


async def migrate_async(database_url: str) -> None:
    """``migrate`` from a running event loop."""
    await upgrade_async(database_url)


def shown_database(database_url: str) -> str:
    """The database URL fit for a log line: the password hidden."""
    return redact_url(database_url)


@dataclass(frozen=True, slots=True)
class Assembly:
    """What the composition root built; ``dispose`` the database when done."""

    database: Database
    service: GameService
    application: AnyApplication
    game: GameBot
    metrics: BotMetrics | None = None


class _EveryDeadlineObserver:
    """Tells several deadline observers (a bench's probe and the metrics) alike."""

    def __init__(self, *observers: DeadlineObserver) -> None:
        self.observers = observers

    def scheduled(self, state: RoundState) -> None:
        for observer in self.observers:
            observer.scheduled(state)

    def advanced(
        self,
        round_id: int,
        result: CommandResult,
        *,
        by_timer: bool,
        entered_ms: float,
        applied_ms: float,
    ) -> None:
        for observer in self.observers:
            observer.advanced(
                round_id, result, by_timer=by_timer, entered_ms=entered_ms, applied_ms=applied_ms
            )


def assemble(
    config: Config,
    *,
    token: str | None = None,
    database: Database | None = None,
    round_changes: RoundChanges | None = None,
    request: BaseRequest | None = None,
    get_updates_request: BaseRequest | None = None,
    rate_limiter: bool = True,
    deadline_observer: DeadlineObserver | None = None,
    metrics: BotMetrics | None = None,
) -> Assembly:
    """The bot of ``token`` (the config's first by default); run it with
    ``bot.telegram.serving.running``.

    ``database`` reuses an open one, ``round_changes`` another bot's service's;
    ``request``/``get_updates_request`` replace the HTTP transport (a bench talks to
    Telegram in memory); ``rate_limiter=False`` leaves out
    Telegram's limits (the fake Telegram has none), and with them the count of Bot API
    requests, which the rate limiter reports. ``metrics`` hears from the service, the
    shell and the deadlines, and reads the outbox and the database when scraped.
    """
    token = token or config.require_token()
    database = database or Database.from_url(config.database_url)
    service = GameService(
        database,
        config.game,
        bot_id=bot_id_of(token),
        observer=metrics,
        round_changes=round_changes,
    )
    if metrics is not None:
        deadline_observer = (
            metrics
            if deadline_observer is None
            else _EveryDeadlineObserver(deadline_observer, metrics)
        )
    game = GameBot(
        config, service, token=token, deadline_observer=deadline_observer, observer=metrics
    )
    application = build_application(
        game,
        request=request,
        get_updates_request=get_updates_request,
        rate_limiter=rate_limiter,
    )
    if metrics is not None:
        metrics.measure_outbox(lambda: game.outbox.depth)
        metrics.measure_database(service.vital_signs)
    return Assembly(database, service, application, game, metrics)


def assemble_bots(config: Config, *, metrics: BotMetrics | None = None) -> list[Assembly]:
    """A bot for each of the config's tokens (``[telegram] token`` and ``tokens``), in that
    order, on one database: each its own ``Application``, service, budgets and workers,
    each claiming only its own groups' work (``bot.store.chat_bots``). ``metrics`` hears
    from them all; its outbox depth is theirs added up."""
    first, *others = config.require_tokens()
    assemblies = [assemble(config, token=first, metrics=metrics)]
    database, changes = assemblies[0].database, assemblies[0].service.round_changes
    assemblies += [
        assemble(config, token=token, database=database, round_changes=changes, metrics=metrics)
        for token in others
    ]
    if metrics is not None:
        games = [assembly.game for assembly in assemblies]
        metrics.measure_outbox(lambda: sum(game.outbox.depth for game in games))
    return assemblies

"""The bot's vital signs as Prometheus metrics, on a registry of the bot's own.

``BotMetrics`` owns a ``CollectorRegistry`` (not prometheus-client's global default one),
so two bots in one process (tests, benches) count apart. It is the observer the layers
below report to, each through its own small protocol, so none of them imports
prometheus-client: the shell's ``ShellObserver`` (updates handled, Bot API requests and
failures, rounds ended), its ``DeadlineObserver`` (how late deadlines are applied) and the
service's ``ServiceObserver`` (transactions run again). The composition root wires them
(``bot.bootstrap.assemble``). Each report is a counter increment or a histogram
observation: cheap enough for the hot path.

What only the database knows (open rounds by phase and game, chips held) is read when
Prometheus scrapes, by one read-only query kept for ``DATABASE_GAUGES_SECONDS``: scrapes
stay cheap however often they come, and several workers on one database each report the
same totals (aggregate them with ``max``, not ``sum``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterator

from cachetools import LRUCache
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from bot.engine.round import Phase, RoundState
from bot.rules.ruleset import RULESETS
from bot.service.records import CommandResult, VitalSigns

log = logging.getLogger(__name__)

#: How long what the database said is reused before a scrape asks again.
DATABASE_GAUGES_SECONDS = 5.0
#: How long a scrape waits for the database before serving the other metrics without it.
DATABASE_TIMEOUT_SECONDS = 2.0
#: Rounds whose current deadline is remembered to measure its lateness: the open rounds,
#: with room to spare; beyond it the least recently scheduled are forgotten (unmeasured).
DEADLINES_REMEMBERED = 100_000

#: A command's handling: mostly milliseconds (a transaction), seconds when the database
#: queues.
DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: A deadline applied after it passed: a timer fires within milliseconds; the sweep (every
#: ``sweep_seconds``) catches what a timer missed; a restart, more.
LATENESS_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)

OPEN_PHASES = tuple(phase for phase in Phase if phase.is_open)

VitalSource = Callable[[], Awaitable[VitalSigns]]


class BotMetrics:
    """Every metric of one bot (see the module's docstring); ``registry`` is what
    ``/metrics`` shows."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.registry = CollectorRegistry()
        self._clock = clock
        registry = self.registry
        self.updates_handled = Counter(
            "niuniu_updates_handled_total",
            "Updates handled, by kind: the command's name, button or message.",
            ["kind"],
            registry=registry,
        )
        self.command_duration = Histogram(
            "niuniu_command_duration_seconds",
            "How long handling an update took, by kind (as niuniu_updates_handled_total).",
            ["kind"],
            buckets=DURATION_BUCKETS,
            registry=registry,
        )
        self.deadline_lateness = Histogram(
            "niuniu_deadline_lateness_seconds",
            "How long after a round's deadline its next phase was applied.",
            buckets=LATENESS_BUCKETS,
            registry=registry,
        )
        self.rounds_settled = Counter(
            "niuniu_rounds_settled_total",
            "Rounds settled by this process, by game (ruleset).",
            ["game"],
            registry=registry,
        )
        self.rounds_voided = Counter(
            "niuniu_rounds_voided_total",
            "Rounds voided by this process, by reason (no_bids, no_bets, redeal, error).",
            ["reason"],
            registry=registry,
        )
        self.telegram_requests = Counter(
            "niuniu_telegram_requests_total",
            "Bot API requests made (each retry again, each long poll), by method.",
            ["method"],
            registry=registry,
        )
        self.telegram_errors = Counter(
            "niuniu_telegram_errors_total",
            "Bot API requests that failed, by kind (retry_after is Telegram's 429).",
            ["kind"],
            registry=registry,
        )
        self.delivery_retries = Counter(
            "niuniu_delivery_retries_total",
            "Tries to deliver a message that failed on the way and were made again, by kind "
            "of message (results, phase, closing, answer, edit, toast, delete) and failure.",
            ["message", "failure"],
            registry=registry,
        )
        self.delivery_failures = Counter(
            "niuniu_delivery_failures_total",
            "Deliveries that stopped: refused by Telegram, failing for as long as they may "
            "be tried, or an answer waiting too long (too_old); by kind of message and failure.",
            ["message", "failure"],
            registry=registry,
        )
        self.database_retries = Counter(
            "niuniu_database_retries_total",
            "Round commands whose transaction ran again (the round changed under it).",
            registry=registry,
        )
        self.command_failures = Counter(
            "niuniu_round_command_failures_total",
            "Round commands that failed other than by the rules or an unavailable database "
            "(a bug, or a row the database refused), by path (hot, general): nothing they "
            "asked changed, and a round whose step failed was voided.",
            ["path"],
            registry=registry,
        )
        for path in ("hot", "general"):
            self.command_failures.labels(path=path)
        self.outbox_depth = Gauge(
            "niuniu_outbox_depth",
            "Messages, edits and answers queued in the chats' outboxes, not yet started.",
            registry=registry,
        )
        self._deadlines: LRUCache[int, int] = LRUCache(DEADLINES_REMEMBERED)
        self._vital_source: VitalSource | None = None
        self._vital_signs: VitalSigns | None = None
        self._vital_signs_at: float | None = None
        self._reading = asyncio.Lock()
        registry.register(_DatabaseGauges(self))

    # -- wiring (the composition root) -----------------------------------------------------

    def measure_outbox(self, depth: Callable[[], int]) -> None:
        """Report ``depth()`` as ``niuniu_outbox_depth`` at every scrape."""
        self.outbox_depth.set_function(lambda: float(depth()))

    def measure_database(self, source: VitalSource) -> None:
        """Read the database's gauges from ``source`` (at most every few seconds)."""
        self._vital_source = source

    # -- the database's gauges ---------------------------------------------------------------

    @property
    def vital_signs(self) -> VitalSigns | None:
        """What the database said last (None if it has not, or failed to, answer)."""
        return self._vital_signs

    async def refresh(self) -> None:
        """Ask the database again if what it said is older than ``DATABASE_GAUGES_SECONDS``
        (one query at a time, however many scrapes come at once). A database that fails
        or is slow leaves its gauges out of the scrape, and the rest is served."""
        if self._vital_source is None or self._fresh():
            return
        async with self._reading:
            if self._fresh():  # another scrape asked meanwhile
                return
            try:
                signs = await asyncio.wait_for(self._vital_source(), DATABASE_TIMEOUT_SECONDS)
            except Exception as error:
                log.warning("metrics: the database did not say the rounds and chips: %r", error)
                signs = None
            self._vital_signs, self._vital_signs_at = signs, self._clock()

    def _fresh(self) -> bool:
        at = self._vital_signs_at
        return at is not None and self._clock() - at < DATABASE_GAUGES_SECONDS

    # -- ShellObserver ----------------------------------------------------------------------

    def update_handled(self, kind: str, seconds: float) -> None:
        self.updates_handled.labels(kind).inc()
        self.command_duration.labels(kind).observe(seconds)

    def round_ended(self, round_id: int, game: str, void_reason: str | None) -> None:
        self._deadlines.pop(round_id, None)
        if void_reason is None:
            self.rounds_settled.labels(game).inc()
        else:
            self.rounds_voided.labels(void_reason).inc()

    def bot_api_called(self, method: str) -> None:
        self.telegram_requests.labels(method).inc()

    def bot_api_failed(self, method: str, kind: str) -> None:
        self.telegram_errors.labels(kind).inc()

    def delivery_retried(self, message: str, failure: str) -> None:
        self.delivery_retries.labels(message, failure).inc()

    def delivery_failed(self, message: str, failure: str) -> None:
        self.delivery_failures.labels(message, failure).inc()

    # -- DeadlineObserver -------------------------------------------------------------------

    def scheduled(self, state: RoundState) -> None:
        self._deadlines[state.id] = state.deadline_ms

    def advanced(
        self,
        round_id: int,
        result: CommandResult,
        *,
        by_timer: bool,
        entered_ms: float,
        applied_ms: float,
    ) -> None:
        """Observe how late the deadline was applied: only when this call applied it
        (events happened) and this process had scheduled it (a round overdue at start-up
        is applied before its deadline is scheduled, and goes unmeasured)."""
        if not result.events:
            return
        deadline_ms = self._deadlines.pop(round_id, None)
        if deadline_ms is not None and deadline_ms <= applied_ms:
            self.deadline_lateness.observe((applied_ms - deadline_ms) / 1000)

    # -- ServiceObserver --------------------------------------------------------------------

    def database_retried(self) -> None:
        self.database_retries.inc()

    def command_failed(self, path: str) -> None:
        self.command_failures.labels(path=path).inc()


class _DatabaseGauges(Collector):
    """``niuniu_rounds{phase,game}`` and ``niuniu_chips_in_play_cents`` from what the
    database said last (``BotMetrics.refresh``, which ``/metrics`` awaits first: a
    collector cannot wait for the database itself). Every open phase of every game is
    shown, 0 where none is, so that each series exists from the start."""

    def __init__(self, metrics: BotMetrics) -> None:
        self.metrics = metrics

    def describe(self) -> Iterator[GaugeMetricFamily]:
        yield from self._families(None)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        signs = self.metrics.vital_signs
        if signs is not None:
            yield from self._families(signs)

    @staticmethod
    def _families(signs: VitalSigns | None) -> Iterator[GaugeMetricFamily]:
        rounds = GaugeMetricFamily(
            "niuniu_rounds",
            "Open rounds in every group, by phase and game (ruleset).",
            labels=["phase", "game"],
        )
        chips = GaugeMetricFamily(
            "niuniu_chips_in_play_cents",
            "Chips held for bids and bets in every group, in cents.",
        )
        if signs is not None:
            counts = dict.fromkeys(((p, g) for p in OPEN_PHASES for g in sorted(RULESETS)), 0)
            counts.update(signs.open_rounds)
            for (phase, game), count in counts.items():
                rounds.add_metric([phase.value, game], count)
            chips.add_metric([], signs.chips_held_cents)
        yield rounds
        yield chips

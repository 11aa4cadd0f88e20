"""The bot's metrics: Prometheus's naming conventions, a registry per bot, and what each
report and the database's gauges show."""

from __future__ import annotations

import re
from dataclasses import replace

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from bot.engine.round import Phase, Round, RoundVoided, VoidReason
from bot.service.records import CommandResult, VitalSigns
from bot.web.metrics import DATABASE_GAUGES_SECONDS, BotMetrics
from tests.helpers.engine_rounds import started

#: Every metric the bot exposes, and its type.
EXPECTED = {
    "niuniu_updates_handled": "counter",
    "niuniu_command_duration_seconds": "histogram",
    "niuniu_deadline_lateness_seconds": "histogram",
    "niuniu_rounds_settled": "counter",
    "niuniu_rounds_voided": "counter",
    "niuniu_telegram_requests": "counter",
    "niuniu_telegram_errors": "counter",
    "niuniu_database_retries": "counter",
    "niuniu_outbox_depth": "gauge",
    "niuniu_rounds": "gauge",
    "niuniu_chips_in_play_cents": "gauge",
}
#: Prometheus's base units and the project's own (money in integer cents).
UNITS = ("seconds", "cents", "bytes")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def scraped(metrics: BotMetrics) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample as Prometheus would read it: (name, labels) -> value."""
    text = generate_latest(metrics.registry).decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(metrics: BotMetrics, name: str, **labels: str) -> float | None:
    return scraped(metrics).get((name, frozenset(labels.items())))


def round_due(round_id: int, deadline_ms: int) -> Round:
    """A round just started, its deadline at ``deadline_ms`` (what the deadline observer
    reads of it: its id and deadline)."""
    return replace(started(), id=round_id, deadline_ms=deadline_ms)


VOIDED = CommandResult(events=(RoundVoided(VoidReason.NO_BIDS, b"seed"),))


async def signs_source() -> VitalSigns:
    return VitalSigns({(Phase.BETTING, "envelope68"): 2}, 12_345)


async def test_every_metric_follows_prometheus_naming_conventions() -> None:
    metrics = BotMetrics()
    metrics.measure_database(signs_source)
    await metrics.refresh()
    families = {
        family.name: family
        for family in text_string_to_metric_families(generate_latest(metrics.registry).decode())
    }
    # prometheus-client adds when an unlabelled counter or histogram was created.
    created = {name for name in families if name.removesuffix("_created") in EXPECTED}
    assert all(families[name].type == "gauge" for name in created - EXPECTED.keys())
    families = {name: family for name, family in families.items() if name in EXPECTED}
    assert {name: family.type for name, family in families.items()} == EXPECTED
    for name, family in families.items():
        # One application prefix, snake case, no type in the name, a unit where one applies.
        assert re.fullmatch(r"niuniu(_[a-z]+)+", name), name
        assert not name.endswith(("_total", "_count", "_sum", "_bucket")), name
        if family.type == "histogram":
            assert name.endswith(UNITS), f"{name}: a histogram measures in a base unit"
        assert family.documentation, f"{name} has no help text"
        for sample in family.samples:
            if family.type == "counter":
                assert sample.name in (f"{name}_total", f"{name}_created"), sample.name
            for label in sample.labels:
                assert re.fullmatch(r"[a-z]+(_[a-z]+)*", label), (name, label)


def test_each_bot_counts_on_a_registry_of_its_own() -> None:
    first, second = BotMetrics(), BotMetrics()  # a global registry would refuse the second
    first.update_handled("open", 0.01)
    assert value(first, "niuniu_updates_handled_total", kind="open") == 1
    assert value(second, "niuniu_updates_handled_total", kind="open") is None


def test_updates_are_counted_and_timed_by_kind() -> None:
    metrics = BotMetrics()
    metrics.update_handled("bet", 0.003)
    metrics.update_handled("bet", 0.2)
    metrics.update_handled("button", 0.01)
    assert value(metrics, "niuniu_updates_handled_total", kind="bet") == 2
    assert value(metrics, "niuniu_updates_handled_total", kind="button") == 1
    assert value(metrics, "niuniu_command_duration_seconds_count", kind="bet") == 2
    assert value(metrics, "niuniu_command_duration_seconds_sum", kind="bet") == 0.203
    assert value(metrics, "niuniu_command_duration_seconds_bucket", kind="bet", le="0.005") == 1


def test_bot_api_requests_by_method_and_failures_by_kind() -> None:
    metrics = BotMetrics()
    for method in ("sendMessage", "sendMessage", "answerCallbackQuery"):
        metrics.bot_api_called(method)
    metrics.bot_api_failed("sendMessage", "retry_after")
    assert value(metrics, "niuniu_telegram_requests_total", method="sendMessage") == 2
    assert value(metrics, "niuniu_telegram_requests_total", method="answerCallbackQuery") == 1
    assert value(metrics, "niuniu_telegram_errors_total", kind="retry_after") == 1


def test_rounds_settled_by_game_and_voided_by_reason() -> None:
    metrics = BotMetrics()
    metrics.round_ended(1, "envelope68", None)
    metrics.round_ended(2, "bullbull", None)
    metrics.round_ended(3, "envelope68", "no_bets")
    assert value(metrics, "niuniu_rounds_settled_total", game="envelope68") == 1
    assert value(metrics, "niuniu_rounds_settled_total", game="bullbull") == 1
    assert value(metrics, "niuniu_rounds_voided_total", reason="no_bets") == 1


def test_deadline_lateness_is_from_the_deadline_scheduled_to_its_application() -> None:
    metrics = BotMetrics()
    metrics.scheduled(round_due(7, deadline_ms=10_000))
    metrics.advanced(7, VOIDED, by_timer=True, entered_ms=10_100.0, applied_ms=10_250.0)
    assert value(metrics, "niuniu_deadline_lateness_seconds_count") == 1
    assert value(metrics, "niuniu_deadline_lateness_seconds_sum") == 0.25
    assert value(metrics, "niuniu_deadline_lateness_seconds_bucket", le="0.25") == 1
    assert value(metrics, "niuniu_deadline_lateness_seconds_bucket", le="0.1") == 0


def test_a_deadline_not_applied_or_not_scheduled_here_is_not_measured() -> None:
    metrics = BotMetrics()
    metrics.scheduled(round_due(7, deadline_ms=10_000))
    # Someone else had applied it: no events.
    metrics.advanced(7, CommandResult(), by_timer=False, entered_ms=10_300.0, applied_ms=10_400.0)
    # A round overdue at start-up, never scheduled by this process.
    metrics.advanced(8, VOIDED, by_timer=False, entered_ms=10_300.0, applied_ms=10_400.0)
    # A round that ended by a command: its deadline is forgotten.
    metrics.scheduled(round_due(9, deadline_ms=10_000))
    metrics.round_ended(9, "envelope68", None)
    metrics.advanced(9, VOIDED, by_timer=True, entered_ms=10_300.0, applied_ms=10_400.0)
    assert value(metrics, "niuniu_deadline_lateness_seconds_count") == 0
    # The first round's deadline is still to be applied, and measured when it is.
    metrics.advanced(7, VOIDED, by_timer=True, entered_ms=10_500.0, applied_ms=10_500.0)
    assert value(metrics, "niuniu_deadline_lateness_seconds_count") == 1


def test_database_retries_and_the_outbox_depth() -> None:
    metrics = BotMetrics()
    queued = [3]
    metrics.measure_outbox(lambda: queued[0])
    metrics.database_retried()
    metrics.database_retried()
    assert value(metrics, "niuniu_database_retries_total") == 2
    assert value(metrics, "niuniu_outbox_depth") == 3
    queued[0] = 0
    assert value(metrics, "niuniu_outbox_depth") == 0


async def test_the_database_gauges_show_every_open_phase_of_every_game() -> None:
    metrics = BotMetrics()
    metrics.measure_database(signs_source)
    assert value(metrics, "niuniu_chips_in_play_cents") is None  # not asked yet
    await metrics.refresh()
    samples = scraped(metrics)
    rounds = {
        (dict(labels)["phase"], dict(labels)["game"]): count
        for (name, labels), count in samples.items()
        if name == "niuniu_rounds"
    }
    assert rounds[("betting", "envelope68")] == 2
    assert rounds[("bidding", "bullbull")] == 0
    assert {phase for phase, _ in rounds} == {"bidding", "betting", "grabbing"}
    assert sum(rounds.values()) == 2
    assert value(metrics, "niuniu_chips_in_play_cents") == 12_345


async def test_the_database_is_asked_at_most_every_few_seconds() -> None:
    clock = Clock()
    metrics = BotMetrics(clock=clock)
    asked: list[float] = []

    async def source() -> VitalSigns:
        asked.append(clock.now)
        return VitalSigns({}, len(asked))

    metrics.measure_database(source)
    await metrics.refresh()
    clock.now += DATABASE_GAUGES_SECONDS / 2
    await metrics.refresh()
    assert asked == [100.0]
    clock.now += DATABASE_GAUGES_SECONDS / 2
    await metrics.refresh()
    assert len(asked) == 2
    assert value(metrics, "niuniu_chips_in_play_cents") == 2


async def test_a_failing_database_leaves_its_gauges_out_and_the_rest_served() -> None:
    metrics = BotMetrics()

    async def failing() -> VitalSigns:
        raise ConnectionRefusedError("no database")

    metrics.measure_database(failing)
    metrics.update_handled("open", 0.01)
    await metrics.refresh()
    assert metrics.vital_signs is None
    assert value(metrics, "niuniu_chips_in_play_cents") is None
    assert value(metrics, "niuniu_updates_handled_total", kind="open") == 1

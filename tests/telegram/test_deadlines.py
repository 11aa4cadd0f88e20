"""Deadlines: one timer per open round at its deadline, rescheduled only when the
deadline changes, dropped when the round ends or its timer fired; the observer told. One
timer per table at its pause's end, which starts its next round."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from bot.engine.round import Phase, RoundState
from bot.service.game import CommandResult
from bot.telegram.deadlines import Deadlines
from tests.helpers.telegram import (
    GROUP,
    FakeTimers,
    MillisecondsClock,
    new_round,
    voided,
    with_bid,
)


class Observer:
    """Records the rounds whose timer was set."""

    def __init__(self) -> None:
        self.scheduled_rounds: list[tuple[int, int]] = []

    def scheduled(self, state: RoundState) -> None:
        self.scheduled_rounds.append((state.id, state.deadline_ms))

    def advanced(
        self,
        round_id: int,
        result: CommandResult,
        *,
        by_timer: bool,
        entered_ms: float,
        applied_ms: float,
    ) -> None:
        raise AssertionError("Deadlines only sets timers")


class Timers:
    """Deadlines on fake timers; timers that fire call ``applied``."""

    def __init__(self) -> None:
        self.clock = MillisecondsClock()
        self.queue = FakeTimers()
        self.observer = Observer()
        self.deadlines = Deadlines(self.clock, self.observer)
        self.applied: list[tuple[int, int, dict[str, Any]]] = []
        self.started: list[int] = []
        self.deadlines.attach(self.queue, self.apply, self.start)

    async def apply(self, round_id: int, chat_id: int, **flags: Any) -> None:
        self.applied.append((round_id, chat_id, flags))

    async def start(self, chat_id: int) -> None:
        self.started.append(chat_id)


@pytest.fixture
def timers() -> Timers:
    return Timers()


def test_an_open_round_gets_one_timer_at_its_deadline(timers: Timers) -> None:
    state = new_round(7).round  # bidding: 18 s from now
    timers.clock.now_ms += 3_000

    timers.deadlines.schedule(state)

    (job,) = timers.queue.jobs
    assert job.when == 15.0
    assert job.name == "deadline:7"
    assert job.data == (7, GROUP, Phase.BIDDING)  # the phase whose deadline it is
    assert len(timers.deadlines) == 1
    assert timers.observer.scheduled_rounds == [(7, state.deadline_ms)]


def test_a_deadline_already_past_fires_at_once(timers: Timers) -> None:
    state = new_round(7).round
    timers.clock.now_ms = state.deadline_ms + 5_000

    timers.deadlines.schedule(state)

    assert timers.queue.jobs[0].when == 0.0


def test_a_command_that_leaves_the_deadline_as_it_is_leaves_the_timer(timers: Timers) -> None:
    state = new_round(7).round
    timers.deadlines.schedule(state)

    timers.deadlines.schedule(with_bid(state, 11, 1_000))  # a bid: same deadline

    assert len(timers.queue.jobs) == 1
    assert timers.queue.active == timers.queue.jobs
    assert len(timers.observer.scheduled_rounds) == 1


def test_a_new_deadline_replaces_the_timer(timers: Timers) -> None:
    state = new_round(7).round
    timers.deadlines.schedule(state)
    later = dataclasses.replace(state, deadline_ms=state.deadline_ms + 40_000, version=2)

    timers.deadlines.schedule(later)

    old, new = timers.queue.jobs
    assert old.removed and not new.removed
    assert new.when == 58.0
    assert len(timers.deadlines) == 1
    assert timers.observer.scheduled_rounds == [
        (7, state.deadline_ms),
        (7, later.deadline_ms),
    ]


def test_a_timer_that_fired_before_the_sweep_moved_its_round_on_is_simply_replaced(
    timers: Timers,
) -> None:
    state = new_round(7).round
    timers.deadlines.schedule(state)
    (fired,) = timers.queue.jobs
    fired.removed = True  # the scheduler ran it; its call has not come yet
    later = dataclasses.replace(state, deadline_ms=state.deadline_ms + 40_000, version=2)

    timers.deadlines.schedule(later)  # the sweep applied the deadline first

    assert [job.removed for job in timers.queue.jobs] == [True, False]
    assert len(timers.deadlines) == 1


def test_a_round_that_ended_has_its_timer_dropped_and_gets_none(timers: Timers) -> None:
    state = new_round(7).round
    timers.deadlines.schedule(state)
    ended, _ = voided(state)

    timers.deadlines.schedule(ended)
    timers.deadlines.schedule(ended)

    assert timers.queue.active == []
    assert len(timers.queue.jobs) == 1
    assert len(timers.deadlines) == 0


def test_each_round_has_its_own_timer(timers: Timers) -> None:
    timers.deadlines.schedule(new_round(7).round)
    timers.deadlines.schedule(new_round(8, chat_id=-1002).round)

    assert [job.data[:2] for job in timers.queue.active] == [(7, GROUP), (8, -1002)]
    assert len(timers.deadlines) == 2


async def test_a_timer_that_fires_applies_the_deadline_and_is_forgotten(timers: Timers) -> None:
    timers.deadlines.schedule(new_round(7).round)

    await timers.queue.jobs[0].run()

    assert timers.applied == [(7, GROUP, {"by_timer": True, "phase": Phase.BIDDING})]
    assert len(timers.deadlines) == 0


async def test_a_replaced_timer_that_fires_anyway_leaves_the_new_one(timers: Timers) -> None:
    # A timer taken off once it fired, its callback not run yet, still runs. The
    # deadline it applies early is refused by the service (not due) or found done.
    state = new_round(7).round
    timers.deadlines.schedule(state)
    timers.deadlines.schedule(dataclasses.replace(state, deadline_ms=state.deadline_ms + 1_000))
    old, new = timers.queue.jobs

    await old.run()

    assert timers.applied == [(7, GROUP, {"by_timer": True, "phase": Phase.BIDDING})]
    assert len(timers.deadlines) == 1  # the new timer is still kept: it is dropped
    timers.deadlines.schedule(voided(state)[0])  # when the round ends
    assert new.removed


def test_nothing_is_scheduled_before_a_queue_is_attached() -> None:
    deadlines = Deadlines(MillisecondsClock())

    deadlines.schedule(new_round(7).round)

    assert len(deadlines) == 0


async def test_a_tables_pause_ends_by_its_own_timer_which_starts_the_next_round(
    timers: Timers,
) -> None:
    timers.deadlines.schedule_start(GROUP, timers.clock.now_ms + 2_000)

    (job,) = timers.queue.jobs
    assert (job.when, job.name, job.data) == (2.0, f"next round:{GROUP}", GROUP)
    assert len(timers.deadlines) == 1
    await job.run()
    assert timers.started == [GROUP]
    assert len(timers.deadlines) == 0


def test_a_tables_next_start_timed_again_replaces_its_timer(timers: Timers) -> None:
    timers.deadlines.schedule_start(GROUP, timers.clock.now_ms + 2_000)
    timers.deadlines.schedule_start(GROUP, timers.clock.now_ms + 5_000)

    old, new = timers.queue.jobs
    assert old.removed and not new.removed and new.when == 5.0
    assert len(timers.deadlines) == 1

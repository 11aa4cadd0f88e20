"""docs/rules.md §1: a window counts from when the group can see it. A board that reaches
the group more than ``WINDOW_LATE_MS`` after its window opened opens the window then:
its deadline moves later by as long, never earlier, and nothing else changes."""

from __future__ import annotations

import dataclasses

import pytest

from bot.engine import round as engine
from bot.engine.errors import NotDue
from bot.engine.round import WINDOW_LATE_MS, Phase, WindowMoved
from tests.helpers.engine_rounds import ALICE, RICH, SETTINGS, T0, betting, grabbing, started


@pytest.mark.parametrize(
    ("phase", "window_seconds"),
    [(Phase.BIDDING, SETTINGS.bid_seconds), (Phase.BETTING, SETTINGS.bet_seconds)],
)
def test_a_window_shown_late_opens_when_it_is_shown(phase: Phase, window_seconds: int) -> None:
    state = started() if phase is Phase.BIDDING else betting()[0]
    opened_at = state.deadline_ms - window_seconds * 1000
    shown_at = opened_at + 6_000  # its board reached the group 6 s late

    transition = engine.move_window(state, phase, shown_at)

    after = transition.round
    assert after.deadline_ms == shown_at + window_seconds * 1000
    assert transition.events == (WindowMoved(phase, after.deadline_ms),)
    assert transition.postings == ()
    assert after.version == state.version + 1
    # Nothing but the deadline: the deal, the bets and the holds are as they were.
    assert dataclasses.replace(after, deadline_ms=state.deadline_ms, version=state.version) == state


def test_the_grabbing_window_moves_too() -> None:
    state, _ = grabbing({ALICE: 500})
    opened_at = state.deadline_ms - SETTINGS.grab_seconds * 1000

    after = engine.move_window(state, Phase.GRABBING, opened_at + 3_000).round

    assert after.deadline_ms == state.deadline_ms + 3_000
    assert after.shares == state.shares  # the envelope is the one committed to


def test_a_window_shown_on_time_is_not_moved() -> None:
    state = started()
    opened_at = state.deadline_ms - SETTINGS.bid_seconds * 1000

    with pytest.raises(NotDue):
        engine.move_window(state, Phase.BIDDING, opened_at + WINDOW_LATE_MS)
    with pytest.raises(NotDue):  # never earlier
        engine.move_window(state, Phase.BIDDING, opened_at - 5_000)
    moved = engine.move_window(state, Phase.BIDDING, opened_at + WINDOW_LATE_MS + 1)
    assert moved.round.deadline_ms == state.deadline_ms + WINDOW_LATE_MS + 1


def test_a_window_whose_phase_is_over_is_not_moved() -> None:
    state, _ = betting()

    with pytest.raises(NotDue):
        engine.move_window(state, Phase.BIDDING, T0 + 60_000)


def test_a_bet_placed_in_the_moved_window_is_taken_and_its_deadline_applies_later() -> None:
    state, _ = betting()
    original = state.deadline_ms
    state = engine.move_window(state, Phase.BETTING, original - 30_000).round  # +10 s
    assert state.deadline_ms == original + 10_000

    # Past the window as it first was, within the one the group saw.
    placed = engine.bet(state, ALICE, 500, free_chips=RICH, now_ms=original + 5_000).round
    assert placed.bet_of(ALICE) is not None
    with pytest.raises(NotDue):
        engine.advance(placed, original + 5_000, player_seeds={})
    assert engine.advance(placed, state.deadline_ms, player_seeds={}).round.phase is Phase.GRABBING

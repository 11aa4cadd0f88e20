"""A player's seat (``engine.Seat``: the round's state, the player's own bet and grab, and
the counts) takes a bid, a bet, a change, a cancel and a grab but the last exactly as the
whole round does: the same round state after, the same events, the same postings."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.engine import round as engine
from bot.engine.errors import RuleViolation
from bot.engine.round import Round, RoundState, Seat, Transition
from tests.helpers.engine_rounds import ALICE, BOB, CAROL, DEALER, RICH, T0, betting, grabbing


def seat_of(state: Round, user_id: int) -> Seat:
    """``state`` as ``user_id``'s command reads it on the hot path."""
    own = {field.name: getattr(state, field.name) for field in dataclasses.fields(RoundState)}
    return Seat(
        **own,
        player=user_id,
        bet=state.bet_of(user_id),
        grab=state.grab_of(user_id),
        bet_count=state.bet_count,
        grab_count=state.grab_count,
    )


def assert_same_step(whole: Transition[Round], seated: Transition[engine.RoundOrSeat]) -> None:
    """The seat's step is the whole round's, seen from the seat's player."""
    assert isinstance(seated.round, Seat)
    assert seated.events == whole.events
    assert seated.postings == whole.postings
    assert seated.round == seat_of(whole.round, seated.round.player)


PLAYERS = (ALICE, BOB, CAROL)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PLAYERS), st.sampled_from((0, 100, 250, 5_000)))))
def test_bets_changes_and_cancels_on_a_seat_are_the_whole_rounds(
    moves: list[tuple[int, int]],
) -> None:
    state, _ = betting()
    now = state.deadline_ms - 1
    for user, amount in moves:
        try:
            whole = engine.bet(state, user, amount, free_chips=RICH, now_ms=now)
        except RuleViolation as refusal:
            with pytest.raises(RuleViolation) as seat_refusal:
                engine.bet(seat_of(state, user), user, amount, free_chips=RICH, now_ms=now)
            assert seat_refusal.value.key == refusal.key
            continue
        seated = engine.bet(seat_of(state, user), user, amount, free_chips=RICH, now_ms=now)
        assert_same_step(whole, seated)
        state = whole.round


def test_a_bid_on_a_seat_is_the_whole_rounds() -> None:
    state = engine.start_round(
        round_id=7, chat_id=-100, settings=betting()[0].settings, seed=b"\x07" * 32, now_ms=T0
    ).round
    whole = engine.bid(state, DEALER, 2_000, free_chips=RICH, now_ms=T0 + 1)
    seated = engine.bid(seat_of(state, DEALER), DEALER, 2_000, free_chips=RICH, now_ms=T0 + 1)
    assert_same_step(whole, seated)


def test_every_grab_but_the_last_on_a_seat_is_the_whole_rounds() -> None:
    state, _ = grabbing({ALICE: 100, BOB: 200})
    now = state.deadline_ms - 1
    for user in (BOB, ALICE):  # the dealer's would be the last
        whole = engine.grab(state, user, now)
        assert_same_step(whole, engine.grab(seat_of(state, user), user, now))
        state = whole.round
    # The last grab settles, which takes every bet: a seat is refused, the round is not.
    with pytest.raises(ValueError, match="the last grab settles"):
        engine.grab(seat_of(state, DEALER), DEALER, now)
    assert engine.grab(state, DEALER, now).round.phase is engine.Phase.SETTLED


def test_a_seat_holds_its_players_bet_only() -> None:
    state, _ = grabbing({ALICE: 100, BOB: 200})
    seat = seat_of(state, ALICE)
    assert seat.bet_of(ALICE) == state.bet_of(ALICE)
    with pytest.raises(ValueError, match="asked for user"):
        seat.bet_of(BOB)
    with pytest.raises(ValueError, match="asked for user"):
        seat.grab_of(BOB)

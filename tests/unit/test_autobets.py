"""Standing bets placed as betting opens (bot/engine/autobets.py), on their own: each an
ordinary bet (its own transition, version one higher, balanced postings holding 18x the
stake), in order; the round's dealer and a player who bet already sit the round out; free
chips short, another game or amounts outside the limits stop them; a full table skips
them; a round not taking bets places nothing."""

from __future__ import annotations

import dataclasses

from bot.engine import round as engine
from bot.engine.autobets import Autobet, SkipReason, StopReason, place_autobets
from bot.engine.round import Phase, Round
from bot.engine.settings import Settings

SETTINGS = Settings(min_bid=1_000, bid_increment=1_000, min_bet=100, max_bet=5_000)
DEALER, ALICE, BOB, CAROL = 1, 2, 3, 4
T0 = 1_000_000
RICH = 10**9
GAME = SETTINGS.ruleset


def betting(settings: Settings = SETTINGS) -> Round:
    """A round whose betting just opened, DEALER dealing."""
    state = engine.start_round(
        round_id=7, chat_id=-5, settings=settings, seed=bytes(32), now_ms=T0
    ).round
    state = engine.bid(state, DEALER, 1_000, free_chips=RICH, now_ms=T0).round
    opened = engine.advance(state, T0 + settings.bid_seconds * 1000, player_seeds={}).round
    assert opened.phase is Phase.BETTING
    return opened


def test_each_standing_bet_is_an_ordinary_bet_of_its_own_in_the_order_given() -> None:
    state = betting()
    now = T0 + SETTINGS.bid_seconds * 1000 + 1
    run = place_autobets(
        state,
        [Autobet(BOB, 200, GAME), Autobet(ALICE, 300, GAME)],
        {ALICE: RICH, BOB: RICH},
        now,
    )
    assert [(b.user_id, b.amount, b.hold) for b in run.round.bets] == [
        (BOB, 200, 200 * 18),
        (ALICE, 300, 300 * 18),
    ]
    assert run.round.version == state.version + 2
    versions = [placed.transition.round.version for placed in run.placed]
    assert versions == [state.version + 1, state.version + 2]
    for placed in run.placed:
        postings = placed.transition.postings
        assert sum(posting.amount for posting in postings) == 0
        assert {posting.account for posting in postings} == {
            engine.available(placed.autobet.user_id),
            engine.held(placed.autobet.user_id),
        }
    assert run.stopped == () and run.skipped == ()


def test_the_dealer_and_a_player_who_bet_already_sit_the_round_out() -> None:
    now = T0 + SETTINGS.bid_seconds * 1000 + 1
    state = engine.bet(betting(), CAROL, 400, free_chips=RICH, now_ms=now).round
    run = place_autobets(state, [Autobet(DEALER, 200, GAME), Autobet(CAROL, 200, GAME)], {}, now)
    assert run.placed == () and run.stopped == ()
    assert [(s.autobet.user_id, s.reason) for s in run.skipped] == [
        (DEALER, SkipReason.DEALER),
        (CAROL, SkipReason.ALREADY_BET),
    ]
    assert run.round == state


def test_chips_short_another_game_or_limits_stop_a_standing_bet() -> None:
    now = T0 + SETTINGS.bid_seconds * 1000 + 1
    run = place_autobets(
        betting(),
        [
            Autobet(ALICE, 200, GAME),
            Autobet(BOB, 200, "bullbull"),
            Autobet(CAROL, 9_000, GAME),
        ],
        {ALICE: 200 * 18 - 1, BOB: RICH, CAROL: RICH},
        now,
    )
    assert run.placed == ()
    assert [(s.autobet.user_id, s.reason, s.needed) for s in run.stopped] == [
        (ALICE, StopReason.CHIPS, 200 * 18),
        (BOB, StopReason.GAME, 0),
        (CAROL, StopReason.LIMITS, 9_000 * 18),
    ]


def test_a_full_table_skips_the_rest() -> None:
    settings = dataclasses.replace(SETTINGS, ruleset="bullbull")
    state = betting(settings)
    now = T0 + settings.bid_seconds * 1000 + 1
    seats = state.ruleset.max_bettors
    assert seats is not None
    players = [10 + i for i in range(seats + 1)]
    run = place_autobets(
        state, [Autobet(p, 100, "bullbull") for p in players], dict.fromkeys(players, RICH), now
    )
    assert len(run.placed) == seats
    assert [(s.autobet.user_id, s.reason) for s in run.skipped] == [
        (players[-1], SkipReason.TABLE_FULL)
    ]


def test_a_round_not_taking_bets_places_nothing() -> None:
    state = betting()
    closed = place_autobets(state, [Autobet(ALICE, 200, GAME)], {ALICE: RICH}, state.deadline_ms)
    assert closed.considered == () and closed.round == state

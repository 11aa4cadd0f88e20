"""The house's edge at a table (bot.engine.edge) and which changes of settings must be
confirmed: below 0 (the table pays out more than it takes in) or above the 20 % limit, and
further than before (``docs/rules.md`` §8)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from bot.engine.edge import (
    HOUSE_EDGE_LIMIT_BPS,
    EdgeAlarm,
    edge_limit,
    edge_warning,
    house_edge,
)
from bot.engine.odds import table_odds
from bot.engine.settings import Settings

ENVELOPE = Settings()  # 68 NiuNiu at its defaults: rake 5 %, rebate 0.7 %
POKER = Settings(ruleset="poker29").with_table_defaults(ENVELOPE)  # no commission


def changed(settings: Settings, **values: Any) -> Settings:
    return dataclasses.replace(settings, **values)


def test_the_limit_is_20_percent_of_every_stake() -> None:
    assert HOUSE_EDGE_LIMIT_BPS == 2_000
    assert edge_limit() == 0.2


def test_with_players_bidding_the_house_takes_the_rake_less_rebates() -> None:
    found = house_edge(ENVELOPE)
    assert found.edge == found.odds.platform == table_odds(ENVELOPE).platform
    assert round(100 * found.edge, 3) == 35.192


def test_with_the_house_dealing_the_house_takes_what_the_players_lose() -> None:
    envelope = house_edge(changed(ENVELOPE, dealer="house"))
    assert envelope.edge == -envelope.odds.player
    assert round(100 * envelope.edge, 3) == 14.732
    poker = house_edge(changed(POKER, dealer="house"))
    assert round(100 * poker.edge, 3) == -30.308
    assert house_edge(changed(POKER, dealer="house", loss_pays="dealer")).edge == 0


def test_dealer_fees_count_against_one_smallest_bet_and_only_from_a_bidding_dealer() -> None:
    fees = changed(POKER, ruleset="bullbull", dealer_fee=50, service_fee=25, min_bet=500)
    assert house_edge(fees).edge == pytest.approx(75 / 500)
    assert house_edge(changed(fees, dealer="house")).edge == 0  # the bank pays itself no fees


def test_making_the_house_deal_niu_niu_poker_must_be_confirmed() -> None:
    warning = edge_warning(POKER, changed(POKER, dealer="house"))
    assert warning is not None and warning.alarm is EdgeAlarm.PAYS_OUT
    assert (warning.before.edge, round(100 * warning.after.edge, 3)) == (0, -30.308)
    assert warning.after.odds.ruleset == "poker29"
    # Bull Bull and Niu-Niu Poker with losses by the dealer's pattern are even: no warning.
    assert (
        edge_warning(
            changed(POKER, ruleset="bullbull"), changed(POKER, ruleset="bullbull", dealer="house")
        )
        is None
    )
    even = changed(POKER, loss_pays="dealer")
    assert edge_warning(even, changed(even, dealer="house")) is None


def test_a_change_that_makes_a_house_dealt_table_bleed_must_be_confirmed() -> None:
    house = changed(POKER, dealer="house", loss_pays="dealer")
    flat = edge_warning(house, changed(house, loss_pays="player"))
    assert flat is not None and flat.alarm is EdgeAlarm.PAYS_OUT
    bullbull = changed(house, ruleset="bullbull")
    game = edge_warning(bullbull, changed(bullbull, ruleset="poker29_vn", loss_pays="player"))
    assert game is not None and game.alarm is EdgeAlarm.PAYS_OUT


def test_a_rebate_above_the_rake_makes_the_house_pay_out() -> None:
    warning = edge_warning(ENVELOPE, changed(ENVELOPE, rake_bps=0, rebate_bps=100))
    assert warning is not None and warning.alarm is EdgeAlarm.PAYS_OUT


@pytest.mark.parametrize(
    ("before", "after", "alarm"),
    [
        (290, 300, None),  # 18.0 % -> 18.8 %: under the limit
        (300, 350, EdgeAlarm.TAKES_TOO_MUCH),  # 18.8 % -> 22.9 %: pushed past it
        (500, 600, EdgeAlarm.TAKES_TOO_MUCH),  # 35.2 % -> 43.4 %: further past it
        (500, 400, None),  # 35.2 % -> 27.0 %: back towards it
    ],
)
def test_a_rake_that_pushes_the_house_edge_past_the_limit_must_be_confirmed(
    before: int, after: int, alarm: EdgeAlarm | None
) -> None:
    warning = edge_warning(changed(ENVELOPE, rake_bps=before), changed(ENVELOPE, rake_bps=after))
    assert (warning.alarm if warning else None) is alarm


def test_a_dealer_fee_that_pushes_the_house_edge_past_the_limit_must_be_confirmed() -> None:
    card = changed(POKER, ruleset="bullbull", min_bet=1_000)
    assert edge_warning(card, changed(card, dealer_fee=100)) is None  # +10 % of a 10.00 bet
    warning = edge_warning(card, changed(card, dealer_fee=300))  # +30 %
    assert warning is not None and warning.alarm is EdgeAlarm.TAKES_TOO_MUCH
    assert warning.after.edge == pytest.approx(0.3)


def test_settings_the_edge_does_not_depend_on_never_need_confirming() -> None:
    bleeding = changed(POKER, dealer="house")
    for values in ({"bet_seconds": 30}, {"currency": "MYR"}, {"pictures": "off"}):
        assert edge_warning(bleeding, changed(bleeding, **values)) is None
    assert edge_warning(bleeding, bleeding) is None

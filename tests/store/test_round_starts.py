"""A round's start on the hot path (``bot.store.round_starts``): a group that played
before starts its round in one call on SQLite's writer thread (PostgreSQL: one
transaction through the bare driver), stores the same round the general path would, and
refuses what the general path refuses, writing nothing. What it does not cover (the
group's first round, a shoe to retire or create) goes to the general path."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest

from bot.engine.errors import RuleViolation
from bot.engine.round import Round, RoundStarted
from bot.service.game import GameService
from bot.service.round_starts import RoundStartUseCases
from bot.store.db import Database
from bot.store.round_commands import NotOnHotPath
from tests.helpers.controls import Clock
from tests.helpers.game import ADMIN, DEALER, GROUP, TEST_SETTINGS, fund, open_table
from tests.helpers.trips import counting, trips

OTHER_GROUP = GROUP - 1


async def _played_before(service: GameService, clock: Clock, chat_id: int = GROUP) -> None:
    """A round started (the general path: the house's account and the shoe are created)
    and voided for want of bids, so that the next start is an ordinary one."""
    first = await service.start_round(chat_id, actor=ADMIN)
    assert first.round is not None
    clock.advance(first.round.settings.bid_seconds)
    await service.advance(first.round.id)


def _one_start(db: Database, *, update: bool) -> Counter[str]:
    if db.dialect == "postgresql":
        # The read, the claim of the update, the insert, the table's pending start
        # cleared; BEGIN and COMMIT.
        statements = 4 if update else 3
        return Counter({"postgres": statements, "postgres BEGIN": 1, "postgres COMMIT": 1})
    return Counter({"sqlite": 1})


@pytest.mark.parametrize("ruleset", ["envelope68", "poker29_vn"])
async def test_a_group_that_played_before_starts_its_round_in_one_call(
    db: Database, clock: Clock, monkeypatch: pytest.MonkeyPatch, seeds: Any, ruleset: str
) -> None:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    await open_table(service)
    await service.change_setting(GROUP, ADMIN, "ruleset", ruleset)
    await _played_before(service, clock)
    await service.note_people([ADMIN])  # a regular: stored before

    with trips(monkeypatch) as seen:
        general = RoundStartUseCases._start_whole
        monkeypatch.setattr(
            RoundStartUseCases,
            "_start_whole",
            counting(seen, "general start", general),
        )
        started = await service.start_round(GROUP, actor=ADMIN, update_id=501)
    monkeypatch.undo()

    assert seen == _one_start(db, update=True)
    assert started.round is not None
    stored = await service.round(started.round.id)
    assert stored is not None and stored.phase.value == "bidding"
    assert stored.settings.ruleset == ruleset
    assert (stored.shoe is not None) == (ruleset == "poker29_vn")
    again = await service.start_round(GROUP, actor=ADMIN, update_id=501)
    assert again.duplicate


async def test_a_table_opened_starts_its_first_round_on_the_hot_path(
    db: Database, clock: Clock, monkeypatch: pytest.MonkeyPatch, seeds: Any
) -> None:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    await open_table(service)  # which creates the house's account, the rake's
    await service.note_people([ADMIN])

    with trips(monkeypatch) as seen:
        started = await service.start_round(GROUP, actor=ADMIN)
    monkeypatch.undo()

    assert seen == _one_start(db, update=False)
    assert started.round is not None and started.round.phase.value == "bidding"


def _as_started(state: Round) -> Round:
    """What a start stores, but for which round, group and shoe it is."""
    shoe = None if state.shoe is None else dataclasses.replace(state.shoe, id=0)
    return dataclasses.replace(state, id=0, chat_id=0, shoe=shoe)


@pytest.mark.parametrize("ruleset", ["envelope68", "poker29_vn"])
async def test_the_hot_start_stores_the_round_the_general_path_stores(
    db: Database, clock: Clock, monkeypatch: pytest.MonkeyPatch, seeds: Any, ruleset: str
) -> None:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=lambda: bytes(32))
    for chat_id in (GROUP, OTHER_GROUP):
        await open_table(service, chat_id)
        await service.change_setting(chat_id, ADMIN, "ruleset", ruleset)
        await _played_before(service, clock, chat_id)

    hot = await service.start_round(GROUP, actor=ADMIN)

    async def not_covered(*args: Any, **kwargs: Any) -> Any:
        raise NotOnHotPath("as if this start were not covered")

    monkeypatch.setattr(RoundStartUseCases, "_start_hot", not_covered)
    general = await service.start_round(OTHER_GROUP, actor=ADMIN)
    monkeypatch.undo()

    assert isinstance(hot.round, Round) and isinstance(general.round, Round)
    assert hot.events == general.events
    stored_hot = await service.round(hot.round.id)
    stored_general = await service.round(general.round.id)
    assert stored_hot is not None and stored_general is not None
    assert _as_started(stored_hot) == _as_started(stored_general)
    assert _as_started(hot.round) == _as_started(general.round)
    if ruleset == "poker29_vn":  # each group deals from a shoe of its own
        assert stored_hot.shoe is not None and stored_general.shoe is not None
        assert stored_hot.shoe.id != stored_general.shoe.id


async def test_the_hot_start_refuses_what_the_general_path_refuses_writing_nothing(
    db: Database, clock: Clock, seeds: Any
) -> None:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    await open_table(service)
    await _played_before(service, clock)
    running = await service.start_round(GROUP, actor=ADMIN, update_id=1)
    assert running.round is not None

    with pytest.raises(RuleViolation) as refused:
        await service.start_round(GROUP, actor=ADMIN, update_id=2)
    assert (refused.value.key, refused.value.params) == (
        "round_running",
        {"round_id": running.round.id},
    )
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(running.round.id)
    await service.set_open(GROUP, ADMIN, False)
    with pytest.raises(RuleViolation) as refused:
        await service.start_round(GROUP, actor=ADMIN, update_id=3)
    assert refused.value.key == "table_closed"
    # A group the bot never saw is closed; nothing is stored for it.
    with pytest.raises(RuleViolation) as refused:
        await service.start_round(OTHER_GROUP, actor=ADMIN, update_id=4)
    assert refused.value.key == "table_closed"
    assert await service.is_open(OTHER_GROUP) is False
    # Refused updates were not recorded: once the table opens, update 3 starts a round.
    await open_table(service)
    assert await service.current_round(GROUP) is None
    started = await service.start_round(GROUP, actor=ADMIN, update_id=3)
    assert started.round is not None and not started.duplicate


async def test_with_the_house_dealing_the_hot_start_opens_betting_on_the_bank(
    db: Database, clock: Clock, seeds: Any
) -> None:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    await open_table(service)
    await service.change_setting(GROUP, ADMIN, "ruleset", "bullbull")
    await service.change_setting(GROUP, ADMIN, "dealer", "house")
    await service.fund(GROUP, ADMIN, 20_000)
    await fund(service, DEALER, 10_000)
    first = await service.start_round(GROUP, actor=ADMIN)
    assert first.round is not None and first.round.phase.value == "betting"
    clock.advance(TEST_SETTINGS.bet_seconds)
    await service.advance(first.round.id)  # no bets: void

    second = await service.start_round(GROUP, actor=ADMIN)
    assert second.round is not None
    assert (second.round.phase.value, second.round.pool) == ("betting", 20_000)


async def test_a_shoe_to_retire_sends_the_start_to_the_general_path(
    db: Database, clock: Clock, monkeypatch: pytest.MonkeyPatch, seeds: Any
) -> None:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    await open_table(service)
    await service.change_setting(GROUP, ADMIN, "ruleset", "poker29_vn")
    await _played_before(service, clock)
    await service.change_setting(GROUP, ADMIN, "ruleset", "envelope68", confirmed=True)

    seen: Counter[str] = Counter()
    general = RoundStartUseCases._start_whole
    monkeypatch.setattr(
        RoundStartUseCases, "_start_whole", counting(seen, "general start", general)
    )
    started = await service.start_round(GROUP, actor=ADMIN)

    assert seen == Counter({"general start": 1})
    assert started.round is not None and started.round.shoe is None
    (event,) = started.events
    assert isinstance(event, RoundStarted) and event.retired_shoe is not None

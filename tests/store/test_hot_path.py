"""The hot path: a bid, a bet, a grab and every deadline of a round, its settlement too,
take one read and one write (PostgreSQL: two statements through the driver; SQLite: one
call on the writer's thread), and none of them falls back to loading the round whole."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections import Counter
from collections.abc import Awaitable
from typing import Any

import asyncpg
import pytest
from sqlalchemy import text

from bot.engine.errors import RuleViolation
from bot.engine.settings import Settings
from bot.service.game import GameService
from bot.service.round_steps import RoundSteps
from bot.store import round_commands, round_reads
from bot.store.db import Database
from bot.store.errors import TransientDatabaseError
from bot.store.ledger import Balance
from bot.store.round_commands import StepFailed, failing_as_step
from tests.helpers.controls import Clock
from tests.helpers.game import ADMIN, DEALER, GROUP, PLAYERS, TEST_SETTINGS, fund, open_table
from tests.helpers.trips import trips


async def _one_command(
    db: Database, monkeypatch: pytest.MonkeyPatch, command: Awaitable[Any]
) -> Counter[str]:
    with trips(monkeypatch) as seen:
        await command
    monkeypatch.undo()
    return seen


def _per_command(db: Database) -> Counter[str]:
    # PostgreSQL: the read and the write, no BEGIN or COMMIT; SQLite: one call on the
    # writer's thread.
    if db.dialect == "postgresql":
        return Counter({"postgres": 2})
    return Counter({"sqlite": 1})


def _per_deadline(db: Database, *, deals: bool = False) -> Counter[str]:
    # PostgreSQL: a deadline as a command; one that deals reads the round again, holding
    # it (SKIP LOCKED), and writes in a transaction.
    if db.dialect == "postgresql":
        if deals:
            return Counter({"postgres": 3, "postgres BEGIN": 1, "postgres COMMIT": 1})
        return Counter({"postgres": 2})
    return Counter({"sqlite": 1})


def _standing_bets_read(db: Database) -> Counter[str]:
    # One round trip of the hot path's kind: PostgreSQL, a statement on the bare driver's
    # pool (no transaction); SQLite, one call on the reader's thread.
    if db.dialect == "postgresql":
        return Counter({"postgres": 1})
    return Counter({"sqlite": 1})


@pytest.mark.parametrize("ruleset", ["envelope68", "bullbull", "poker29"])
async def test_every_step_of_a_round_takes_one_read_and_one_write(
    db: Database, clock: Clock, monkeypatch: pytest.MonkeyPatch, ruleset: str, seeds: Any
) -> None:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    await open_table(service)
    await service.change_setting(GROUP, ADMIN, "ruleset", ruleset)
    await fund(service, DEALER, 100_000)
    bettors = PLAYERS[:3]
    for player in bettors:
        await fund(service, player, 50_000)
    await service.note_people([DEALER, *bettors])  # regulars: stored before
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    round_id = started.round.id
    settings: Settings = started.round.settings
    expected = _per_command(db)
    deadline = _per_deadline(db)

    assert await _one_command(db, monkeypatch, service.bid(GROUP, DEALER, 10_000)) == expected
    clock.advance(settings.bid_seconds)
    # Opening betting is followed by a look for the group's standing bets (none here):
    # one read, which waits for no writer (bot/service/autobets.py).
    opened = await _one_command(db, monkeypatch, service.advance(round_id))
    assert opened == deadline + _standing_bets_read(db)
    for player in bettors:
        placed = service.bet(GROUP, player, settings.min_bet, update_id=player.id)
        assert await _one_command(db, monkeypatch, placed) == expected
    clock.advance(settings.bet_seconds)
    closed = await _one_command(db, monkeypatch, service.advance(round_id))
    # A game dealt from a shoe deals from it as betting closes.
    assert closed == _per_deadline(db, deals=ruleset == "poker29")
    if ruleset == "envelope68":  # grabs, the last of which settles the round
        for person in [*bettors, DEALER]:
            grabbed = service.grab(GROUP, person, round_id=round_id)
            assert await _one_command(db, monkeypatch, grabbed) == expected
    state = await service.round(round_id)
    assert state is not None and state.phase.value == "settled"
    assert len(await service.results(round_id)) == len(bettors) + 1


async def _betting_round(service: GameService, clock: Clock, player: Any, chips: int) -> int:
    """A round open for bets (the dealer's bid taken), ``player`` holding ``chips``."""
    await open_table(service)
    await fund(service, DEALER, 100_000)
    await fund(service, player, chips)
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    await service.bid(GROUP, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(started.round.id)
    return started.round.id


async def _stored_name(db: Database, user_id: int) -> str | None:
    async with db.engine.connect() as connection:
        found = await connection.execute(
            text("SELECT first_name FROM users WHERE id = :id"), {"id": user_id}
        )
        return found.scalar_one_or_none()


async def test_a_players_first_command_is_stored_with_its_write_in_the_same_round_trips(
    db: Database, clock: Clock, monkeypatch: pytest.MonkeyPatch, seeds: Any
) -> None:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    await _betting_round(service, clock, PLAYERS[0], 50_000)
    newcomer = dataclasses.replace(PLAYERS[0], first_name="Newcomer")
    # Refused by the engine: nothing is written, the player's new name neither.
    with pytest.raises(RuleViolation):
        await service.bet(GROUP, newcomer, 10**9, update_id=501)
    assert await _stored_name(db, newcomer.id) != "Newcomer"

    placed = service.bet(GROUP, newcomer, TEST_SETTINGS.min_bet, update_id=502)
    assert await _one_command(db, monkeypatch, placed) == _per_command(db)
    assert await _stored_name(db, newcomer.id) == "Newcomer"
    # Stored as they are: the next command does not store them again.
    changed = service.bet(GROUP, newcomer, TEST_SETTINGS.min_bet * 2, update_id=503)
    assert await _one_command(db, monkeypatch, changed) == _per_command(db)


async def test_a_command_refused_for_want_of_a_round_stores_nobody(
    db: Database, clock: Clock, seeds: Any
) -> None:
    # As on the general path, whose unit of work the refusal rolls back (found by
    # tests/service/test_paths_agree.py: SQLite's hot path stored the player first).
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    await open_table(service)
    with pytest.raises(RuleViolation, match="no_round"):
        await service.bet(GROUP, PLAYERS[0], TEST_SETTINGS.min_bet, update_id=601)
    assert await _stored_name(db, PLAYERS[0].id) is None


async def test_chips_spent_since_the_read_refuse_the_bet_and_change_nothing(
    db: Database, clock: Clock, monkeypatch: pytest.MonkeyPatch, seeds: Any
) -> None:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    player = PLAYERS[0]
    round_id = await _betting_round(service, clock, player, 1_000)
    # The read says the player has far more than they have, as if a credit had been
    # taken back by a debit after it: the balance's CHECK is what refuses the bet.
    parse_read = round_reads.parse_read

    def richer(*args: Any, **kwargs: Any) -> round_reads.RoundRead:
        read = parse_read(*args, **kwargs)
        return dataclasses.replace(read, free_chips=read.free_chips + 10**9)

    monkeypatch.setattr(round_commands, "parse_read", richer)
    with pytest.raises(RuleViolation) as refused:
        await service.bet(GROUP, player, 500, update_id=77)
    assert refused.value.key == "chips_changed"
    monkeypatch.undo()
    assert await service.balance(GROUP, player.id) == Balance(1_000, 0)
    state = await service.round(round_id)
    assert state is not None and state.bets == ()
    # Nothing recorded the update either: sent again, it is refused for want of chips.
    with pytest.raises(RuleViolation) as again:
        await service.bet(GROUP, player, 500, update_id=77)
    assert again.value.key == "not_enough_chips_to_bet"


@pytest.mark.parametrize("path", ["hot", "general"])
async def test_the_step_that_settles_a_round_says_when_the_next_one_starts(
    db: Database, clock: Clock, monkeypatch: pytest.MonkeyPatch, seeds: Any, path: str
) -> None:
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds)
    await open_table(service)
    await fund(service, DEALER, 100_000)
    await fund(service, PLAYERS[0], 50_000)
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    round_id = started.round.id
    await service.bid(GROUP, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    opened = await service.advance(round_id)
    assert opened.next_round_at_ms is None  # the round goes on
    await service.bet(GROUP, PLAYERS[0], TEST_SETTINGS.min_bet)
    clock.advance(TEST_SETTINGS.bet_seconds)
    await service.advance(round_id)
    if path == "general":

        async def not_covered(*args: Any, **kwargs: Any) -> Any:
            raise round_commands.NotOnHotPath("as if this step were not covered")

        monkeypatch.setattr(RoundSteps, "_run_hot", not_covered)
    clock.advance(TEST_SETTINGS.grab_seconds)
    settled = await service.advance(round_id)

    assert settled.round is not None and settled.round.phase.value == "settled"
    pause_ends = clock.now_ms + TEST_SETTINGS.pause_seconds * 1000
    assert settled.next_round_at_ms == pause_ends
    clock.advance(TEST_SETTINGS.pause_seconds)
    assert await service.due_chat_ids() == [GROUP]


def test_a_step_that_fails_by_a_bug_is_a_step_failed_naming_its_round() -> None:
    with pytest.raises(StepFailed) as failure, failing_as_step(7):
        raise RuntimeError("a bug")
    assert failure.value.round_id == 7
    assert isinstance(failure.value.__cause__, RuntimeError)


@pytest.mark.parametrize(
    "error",
    [
        asyncpg.exceptions.DeadlockDetectedError("deadlock detected"),
        asyncpg.exceptions.SerializationError("could not serialize access"),
        ConnectionResetError("connection reset"),
        sqlite3.OperationalError("database is locked"),
    ],
)
def test_a_step_the_database_could_not_take_now_is_tried_again_not_voided(
    error: Exception,
) -> None:
    with pytest.raises((TransientDatabaseError, type(error))) as raised, failing_as_step(7):
        raise error
    assert not isinstance(raised.value, StepFailed)

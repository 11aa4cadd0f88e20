"""What the metrics read from the database (``GameService.vital_signs``), and the
readiness probe's write, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest

from bot.engine.round import Phase, VoidReason
from bot.engine.settings import Settings
from bot.service.game import GameService
from bot.store import round_commands
from bot.store.db import Database
from bot.store.errors import StaleRound
from bot.store.models import READINESS_PROBE_ID, ReadinessProbe
from tests.helpers.controls import Clock, Seeds
from tests.helpers.game import ADMIN, DEALER, GROUP, PLAYERS, TEST_SETTINGS, fund, open_table

OTHER_GROUP = GROUP - 1


async def test_chips_credited_to_an_open_table_without_a_round_are_not_held(
    service: GameService,
) -> None:
    """Chips that are only available, at a table with no round, are neither an open
    round nor chips in play (the gauges read the held accounts and open rounds only)."""
    await open_table(service)
    await fund(service, DEALER, 100_000)
    assert (await service.balance(GROUP, DEALER.id)).available == 100_000
    signs = await service.vital_signs()
    assert signs.open_rounds == {}
    assert signs.chips_held_cents == 0


async def test_open_rounds_are_counted_by_phase_and_game_and_held_chips_summed(
    service: GameService, db: Database, clock: Clock
) -> None:
    # A red-envelope round in betting with two bets, and a Bull Bull round still bidding.
    await open_table(service)
    await fund(service, DEALER, 100_000)
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None
    await service.bid(GROUP, DEALER, 2_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    betting = await service.advance(started.round.id)
    assert betting.round is not None and betting.round.phase is Phase.BETTING
    for player, stake in zip(PLAYERS[:2], (100, 300), strict=True):
        await fund(service, player, 50_000)
        await service.bet(GROUP, player, stake)

    await open_table(service, OTHER_GROUP)
    await service.change_setting(OTHER_GROUP, ADMIN, "ruleset", "bullbull")
    other = await service.start_round(OTHER_GROUP, actor=DEALER)
    assert other.round is not None and other.round.settings.ruleset == "bullbull"

    signs = await service.vital_signs()

    assert signs.open_rounds == {(Phase.BETTING, "envelope68"): 1, (Phase.BIDDING, "bullbull"): 1}
    # Each bet holds its stake times the largest loss multiplier (18), and the dealer's
    # bid is held as it stands: the same as the held balances the service reports.
    held = [await service.balance(GROUP, person.id) for person in (DEALER, *PLAYERS[:2])]
    assert signs.chips_held_cents == sum(balance.held for balance in held)
    assert signs.chips_held_cents == 2_000 + 18 * (100 + 300)


async def test_a_settled_round_is_no_longer_counted(
    service: GameService, db: Database, clock: Clock
) -> None:
    await open_table(service)
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None
    assert (await service.vital_signs()).open_rounds == {(Phase.BIDDING, "envelope68"): 1}
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(started.round.id)  # nobody bid: void
    signs = await service.vital_signs()
    assert signs.open_rounds == {}
    assert signs.chips_held_cents == 0


async def test_the_readiness_probe_writes_its_row_each_time(db: Database) -> None:
    clock = iter([1_000, 2_000])
    service = GameService(db, Settings(), clock=lambda: next(clock))
    for written in (1_000, 2_000):  # inserted, then updated
        assert await service.database_refuses_writes() is None
        async with db.reading() as session:
            probe = await session.get(ReadinessProbe, READINESS_PROBE_ID)
            assert probe is not None and probe.probed_at_ms == written


class RetryCounter:
    """A service observer that counts the transactions run again, and the failures."""

    def __init__(self) -> None:
        self.retries = 0
        self.failures: list[str] = []

    def database_retried(self) -> None:
        self.retries += 1

    def command_failed(self, path: str) -> None:
        self.failures.append(path)


async def test_a_command_whose_round_changed_under_it_runs_again_and_is_reported(
    db: Database, clock: Clock, seeds: Seeds, monkeypatch: pytest.MonkeyPatch
) -> None:
    observer = RetryCounter()
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds, observer=observer)
    await open_table(service)
    await fund(service, DEALER, 100_000)
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None and observer.retries == 0
    round_id = started.round.id
    run = service.store.round_commands.run
    lost_once: list[int] = []

    async def lose_the_first_race(*args: Any, **kwargs: Any) -> Any:
        if not lost_once:
            lost_once.append(1)
            raise StaleRound(round_id)
        return await run(*args, **kwargs)

    monkeypatch.setattr(service.store.round_commands, "run", lose_the_first_race)
    result = await service.bid(GROUP, DEALER, 2_000)
    assert result.round is not None and result.round.high_bid == 2_000
    assert observer.retries == 1


async def test_a_hot_path_step_that_fails_voids_its_round_and_is_counted_not_run_again(
    db: Database, clock: Clock, seeds: Seeds, monkeypatch: pytest.MonkeyPatch
) -> None:
    observer = RetryCounter()
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds, observer=observer)
    await open_table(service)
    await fund(service, DEALER, 100_000)
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None

    def broken_write(*args: object, **kwargs: object) -> object:
        raise RuntimeError("a bug in the hot path's write")

    monkeypatch.setattr(round_commands, "describe", broken_write)
    result = await service.bid(GROUP, DEALER, 2_000)

    assert result.round is not None and result.round.phase is Phase.VOID
    assert result.round.void_reason is VoidReason.ERROR
    assert observer.failures == ["hot"]
    assert observer.retries == 0
    assert (await service.balance(GROUP, DEALER.id)).available == 100_000


async def test_a_command_that_fails_before_finding_its_round_is_an_error_naming_it(
    db: Database, clock: Clock, seeds: Seeds, monkeypatch: pytest.MonkeyPatch
) -> None:
    observer = RetryCounter()
    service = GameService(db, TEST_SETTINGS, clock=clock, seed_source=seeds, observer=observer)
    await open_table(service)
    await fund(service, DEALER, 100_000)
    await service.start_round(GROUP, actor=DEALER)

    def broken_read(*args: object, **kwargs: object) -> object:
        raise RuntimeError("a bug in reading the round")

    monkeypatch.setattr(round_commands, "parse_read", broken_read)
    with pytest.raises(RuntimeError, match="a bug in reading the round") as failure:
        await service.bid(GROUP, DEALER, 2_000)

    assert f"a round command in chat {GROUP} (round None)" in failure.value.__notes__
    assert observer.failures == ["hot"]
    current = await service.current_round(GROUP)
    assert current is not None and current.phase is Phase.BIDDING and current.high_bid == 0

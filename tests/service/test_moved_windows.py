"""docs/rules.md §1 on both databases: a window whose board reached the group late opens
then. The moved deadline is stored by compare-and-set like any step; the deadline's
timer, the sweep and bets all go by it; the ledger is untouched."""

from __future__ import annotations

from bot.engine.round import Phase, Round
from bot.service.game import GameService
from bot.store.db import Database
from tests.helpers.controls import Clock
from tests.helpers.game import (
    DEALER,
    GROUP,
    PLAYERS,
    TEST_SETTINGS,
    check_ledger,
    fund,
    open_table,
)

P0 = PLAYERS[0]


async def betting_round(service: GameService, clock: Clock) -> int:
    await open_table(service)
    await fund(service, DEALER, 100_000)
    await fund(service, P0, 100_000)
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None
    await service.bid(GROUP, DEALER, 2_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(started.round.id)
    return started.round.id


async def test_a_late_board_moves_the_window_and_every_path_goes_by_the_new_deadline(
    service: GameService, clock: Clock, db: Database
) -> None:
    round_id = await betting_round(service, clock)
    before = await service.round(round_id)
    assert before is not None and before.phase is Phase.BETTING
    clock.advance(6)  # the betting board reaches the group 6 s after betting opened

    moved = await service.move_window(round_id, Phase.BETTING, clock())

    assert moved.round is not None
    stored = await service.round(round_id)
    assert stored is not None
    assert stored.deadline_ms == before.deadline_ms + 6_000 == moved.round.deadline_ms
    assert stored.version == before.version + 1
    # Past the window as it first was: a bet is taken, the deadline is not due.
    clock.now_ms = before.deadline_ms + 1_000
    await service.bet(GROUP, P0, 500)
    assert (await service.advance(round_id)).events == ()
    assert await service.due_rounds() == []
    clock.now_ms = stored.deadline_ms
    assert await service.due_rounds() == [(round_id, GROUP)]
    advanced = await service.advance(round_id)
    assert isinstance(advanced.round, Round) and advanced.round.phase is Phase.GRABBING
    assert [bet.user_id for bet in advanced.round.bets] == [P0.id]
    await check_ledger(db)


async def test_a_board_on_time_or_of_a_phase_that_is_over_moves_nothing(
    service: GameService, clock: Clock
) -> None:
    round_id = await betting_round(service, clock)
    before = await service.round(round_id)
    assert before is not None

    assert (await service.move_window(round_id, Phase.BETTING, clock() + 500)).round is None
    assert (await service.move_window(round_id, Phase.BIDDING, clock() + 9_000)).round is None

    after = await service.round(round_id)
    assert after == before

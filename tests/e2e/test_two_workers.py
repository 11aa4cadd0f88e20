"""Two webhook workers on one PostgreSQL hold up while each is killed with SIGKILL in turn.

A minute of play in three groups (``tests/e2e/soak.py``: the workers behind a round-robin
load balancer, the players acting on the boards), a kill every few seconds, the killed
worker started again before the next kill. Then: every round that was open has a board in
its group (or its results, if it ended before any board went out), no ended round's board
keeps live buttons, no group got more than 20 messages in a minute, nothing the workers
started outlives the last kill, the ledger holds, no chip is lost and no round is stuck.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.soak import GROUP_LIMIT, Figures, Plan, logs, soak

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.postgres]

PLAN = Plan(
    groups=3,
    players=3,
    play_seconds=45.0,
    kill_every=(3.0, 6.0),
    alternate=True,
    end_seconds=30.0,
    catch_up_seconds=30.0,
)


async def test_two_workers_killed_in_turn_lose_no_board_chip_or_round(
    tmp_path: Path, soak_database_url: str
) -> None:
    figures: Figures = await soak(PLAN, tmp_path, soak_database_url)
    print(figures.summary())
    detail = f"{figures.summary()}\n{figures.details()}\n{logs(tmp_path)}"
    # The run did what it is for: rounds played through kills of both workers.
    assert figures.kills >= 4, detail
    assert figures.settled >= PLAN.groups, detail
    assert figures.without_board == [], detail
    assert figures.live_after_end == [], detail
    assert figures.most_a_minute <= GROUP_LIMIT, detail
    assert figures.strays == [], detail
    assert figures.ledger_problems == [], detail
    assert figures.chips_lost == 0, detail
    assert figures.stuck == [], detail

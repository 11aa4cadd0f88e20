"""Two bots (tokens) on one PostgreSQL, two groups each: one webhook worker each, killed
with SIGKILL in turn, or one worker serving both tokens (``[telegram] tokens``), killed
again and again (``tests/e2e/soak.py``). Every message goes out through the group's own
bot, and as with one bot no round loses its board, no chip is lost and no round is stuck.
Every group is known to both fakes (a player said hello in it to both bots), so a bot
that swept, delivered or answered in another bot's group would be seen doing it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.e2e.soak import GROUP_LIMIT, Figures, Plan, logs, soak

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.postgres]

PLAN = Plan(
    groups=2,
    players=2,
    play_seconds=24.0,
    kill_every=(3.0, 5.0),
    alternate=True,
    end_seconds=25.0,
    catch_up_seconds=25.0,
    workers=1,
    bots=2,
)


#: Killed as often as each of the two processes above is.
ONE_PROCESS = replace(PLAN, one_process=True, kill_every=(6.0, 10.0))


@pytest.mark.parametrize("plan", [PLAN, ONE_PROCESS], ids=["process_each", "one_process"])
async def test_two_bots_killed_in_turn_each_speak_only_in_their_own_groups(
    plan: Plan, tmp_path: Path, soak_database_url: str
) -> None:
    figures: Figures = await soak(plan, tmp_path, soak_database_url)
    print(figures.summary())
    detail = f"{figures.summary()}\n{figures.details()}\n{logs(tmp_path)}"
    assert figures.kills >= 2, detail  # each bot's worker (or the one) killed at least once
    assert figures.settled >= plan.groups * plan.bots, detail
    assert figures.foreign == [], detail
    assert len(figures.own_sends) == plan.bots and min(figures.own_sends) > 0, detail
    assert figures.without_board == [], detail
    assert figures.live_after_end == [], detail
    assert figures.most_a_minute <= GROUP_LIMIT, detail
    assert figures.ledger_problems == [], detail
    assert figures.chips_lost == 0, detail
    assert figures.stuck == [], detail

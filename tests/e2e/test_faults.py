"""The real bot process through Telegram's bad moments: nothing the group should see is lost.

Three tables of 68 NiuNiu and one of Bull Bull, four players each, play quick rounds
(``/bid``, ``/bet``, a quick-bet button, ``/balance``, the Grab button) while the fake
Telegram answers a tenth of the bot's calls with a 429 (1–4 s), a twentieth with a 502,
holds some answers past the bot's read timeout and resets some connections
(``FaultMix``, its seed fixed), and goes down altogether for ``OUTAGE_SECONDS`` in the
middle, less than the bot's 30 s of tries (bot/telegram/retries.py). Afterwards every
command has a visible answer, every phase a round reached was shown, no ended round keeps
live buttons and every round's results are in the group (``tests/e2e/fault_play.py``
says how each is read); and soon after the outage a command is answered and the rounds
move on.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import pytest
import pytest_asyncio

from bot.fakegram import FaultMix
from tests.e2e.fault_play import (
    Figures,
    Players,
    Recovery,
    faults_by_kind,
    first_move_after,
    kinds_asked,
    open_tables,
    probe_answer,
    settle_down,
    tables,
)
from tests.e2e.harness import E2E, FAST_GAME, user

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: The bot's own default: answers past it are combined, a line per person.
REPLIES_PER_MINUTE = 10
#: Windows a group's 20 messages a minute can show (a board a phase and the results) at
#: about the pace of ``FAST_GAME``.
GAME = {**FAST_GAME, "bid_seconds": 3, "bet_seconds": 4, "grab_seconds": 3, "pause_seconds": 2}
MIX = FaultMix(
    retry_after=0.10,
    retry_after_seconds=(1, 4),
    bad_gateway=0.05,
    late_answer=0.03,
    reset=0.02,
    seed=20_240_601,
)
TABLES = tables(4, 4, card_tables=1, first_id=8_000)
PLAY_SECONDS = 45.0
OUTAGE_AT_SECONDS = 15.0
OUTAGE_SECONDS = 8.0
#: How long after play the late answers, results and closing edits may take to go out.
SETTLE_SECONDS = 60.0
#: A few seconds: the bot polls again a second after a failed poll, and the answer's
#: first try needs no wait.
ANSWER_AFTER_OUTAGE_SECONDS = 8.0
#: The longest window of the tables, within which a round moves on once Telegram is back.
WINDOW_SECONDS = max(GAME["bid_seconds"], GAME["bet_seconds"], GAME["grab_seconds"])
PROBE_CHAT = -1_001_000_009_999
PROBE_USER = user(8_999, "Probe")


@dataclass
class Run:
    figures: Figures
    recovery: Recovery
    faults: dict[str, int]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def run(e2e: E2E) -> Run:
    await open_tables(e2e, TABLES)
    e2e.fake.set_faults(MIX)
    players = Players(e2e, TABLES, seed=MIX.seed)
    healed_at: list[float] = []
    answered: list[float | None] = []

    async def outage() -> None:
        await asyncio.sleep(OUTAGE_AT_SECONDS)
        e2e.fake.outage(OUTAGE_SECONDS)
        await asyncio.sleep(OUTAGE_SECONDS)
        await e2e.fake.wait_for(lambda: not e2e.fake.in_outage, timeout=5)
        healed_at.append(time.time())
        answered.append(await probe_answer(e2e, PROBE_CHAT, PROBE_USER, timeout=30))

    await asyncio.gather(players.run(PLAY_SECONDS), outage())
    figures = await settle_down(e2e, TABLES, players.play, timeout=SETTLE_SECONDS)
    recovery = Recovery(answered[0], first_move_after(e2e, TABLES, healed_at[0]))
    faults = faults_by_kind(e2e)
    print(
        f"\nfaults: {figures.line()}; commands by kind {kinds_asked(players.play)}; "
        f"after the {OUTAGE_SECONDS:g} s outage a command answered in "
        f"{recovery.answered_after} s, a round moved in {recovery.moved_after} s; "
        f"faults injected {faults}"
    )
    return Run(figures, recovery, faults)


async def test_the_scenario_played_under_every_fault(run: Run) -> None:
    assert run.figures.rounds >= 2 * len(TABLES), run.figures.line()
    assert run.figures.commands >= 10 * len(TABLES), run.figures.line()
    assert all(run.faults[kind] > 0 for kind in run.faults), run.faults


async def test_every_command_has_a_visible_answer(run: Run) -> None:
    assert len(run.figures.unanswered) == 0, run.figures.details()


async def test_every_phase_a_round_reached_was_shown(run: Run) -> None:
    assert len(run.figures.phases_unshown) == 0, run.figures.details()


async def test_no_ended_round_keeps_live_buttons(run: Run) -> None:
    assert len(run.figures.live_after_end) == 0, run.figures.details()


async def test_every_ended_round_has_its_results_in_the_group(run: Run) -> None:
    assert len(run.figures.still_open) == 0, run.figures.details()
    assert len(run.figures.results_lost) == 0, run.figures.details()


async def test_after_an_outage_commands_are_answered_and_rounds_move_again(run: Run) -> None:
    answered, moved = run.recovery.answered_after, run.recovery.moved_after
    assert answered is not None and answered <= ANSWER_AFTER_OUTAGE_SECONDS, run.recovery
    assert moved is not None and moved <= WINDOW_SECONDS, run.recovery

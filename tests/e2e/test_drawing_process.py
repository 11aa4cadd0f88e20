"""The drawing process ends with the bot, however the bot ends.

The real bot process, with pictures on, draws a round's results; then it is killed with
SIGKILL (no shutdown code runs) or stopped with SIGTERM. Every process it started for
the pictures (the forkserver, the drawing process forked from it, multiprocessing's
resource tracker) must be gone within a few seconds: a kill of the bot that leaves them
behind leaks them at every restart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.engine.round import Phase
from tests.e2e.harness import (
    E2E,
    FAST_GAME,
    eventually,
    grab_all,
    open_table,
    running_bot,
    user,
)

pytestmark = pytest.mark.asyncio(loop_scope="function")

GAME = {**FAST_GAME, "pictures": "on"}
ADMIN = user(721, "Ada", "ada_admin")
BETTORS = [user(722, "Bao"), user(723, "Chen")]
GROUP = -1_001_000_000_721
#: Longer than the drawing processes need to notice the bot is gone; a bound, not a speed.
GONE_WITHIN_SECONDS = 10.0


@dataclass(frozen=True)
class Running:
    """A process as ``/proc`` shows it; its start time tells it from a later process that
    reuses its id."""

    pid: int
    parent: int
    started: int
    command: str


def processes() -> dict[int, Running]:
    """Every process that is running (not a zombie), by id, read from ``/proc``."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
        except (FileNotFoundError, ProcessLookupError):
            continue  # it ended meanwhile
        # The command's name is in parentheses and may hold spaces or parentheses itself.
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] in ("Z", "X"):
            continue
        pid = int(entry)
        found[pid] = Running(pid, int(fields[1]), int(fields[19]), command.decode().strip())
    return found


def descendants(pid: int) -> list[Running]:
    """The processes ``pid`` started, and theirs, and so on."""
    running = processes()
    children: dict[int, list[Running]] = {}
    for process in running.values():
        children.setdefault(process.parent, []).append(process)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child.pid)
    return found


def still_running(started: list[Running]) -> list[Running]:
    """Those of ``started`` that run yet (the same process: same id and start time)."""
    running = processes()
    return [p for p in started if (now := running.get(p.pid)) and now.started == p.started]


async def draw_a_picture(e2e: E2E) -> list[Running]:
    """Play a round to its results photo; the bot's descendants then, each checked to be
    one of the processes the pictures need."""
    await open_table(e2e, GROUP, ADMIN, BETTORS)
    e2e.say(GROUP, BETTORS[0], "/newround")
    await e2e.wait_phase(GROUP, Phase.BIDDING)
    e2e.say(GROUP, BETTORS[0], "/bid 100")
    state = await e2e.wait_phase(GROUP, Phase.BETTING)
    e2e.say(GROUP, BETTORS[1], "/bet 5")
    await e2e.wait_bets(GROUP, 1)
    await grab_all(e2e, GROUP, state, BETTORS)
    await e2e.wait_ended(state.id)
    await eventually(
        lambda: any((s["media"] or {}).get("kind") == "photo" for s in e2e.sends(GROUP)),
        what="the results as a photo",
        on_timeout=e2e.bot.log,
    )
    assert e2e.bot.process is not None
    started = descendants(e2e.bot.process.pid)
    commands = " | ".join(p.command for p in started)
    assert "multiprocessing.forkserver" in commands, commands
    assert "multiprocessing.resource_tracker" in commands, commands
    # The forkserver, the drawing process forked from it, the resource tracker.
    assert len(started) == 3, commands
    return started


async def gone(started: list[Running]) -> None:
    await eventually(
        lambda: not still_running(started),
        timeout=GONE_WITHIN_SECONDS,
        what="the drawing processes to end",
        on_timeout=lambda: "\n".join(p.command for p in still_running(started)),
    )


async def test_a_killed_bot_leaves_no_drawing_process_behind(tmp_path: Path) -> None:
    async with running_bot(tmp_path, game=GAME) as e2e:
        started = await draw_a_picture(e2e)
        await e2e.bot.kill()
        await gone(started)
        assert still_running(started) == []


async def test_a_stopped_bot_leaves_no_drawing_process_behind(tmp_path: Path) -> None:
    async with running_bot(tmp_path, game=GAME) as e2e:
        started = await draw_a_picture(e2e)
        assert await e2e.bot.terminate() == 0
        await gone(started)
        assert still_running(started) == []

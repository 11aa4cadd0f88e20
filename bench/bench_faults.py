"""Fault bench: groups playing through Telegram's bad moments, and what they saw of it.

    python bench/bench_faults.py [--groups 6] [--players 5] [--card-tables 1]
                                 [--seconds 180] [--outage 20] [--seed 20240601]

The real bot process (``python -m bot run``, as ``tests/e2e/harness.py`` starts it, on a
temporary SQLite file) against the fake Telegram, which answers a tenth of the bot's
calls with a 429 (1–4 s), a twentieth with a 502, holds 3 % of the answers past the bot's
read timeout and resets 2 % of the connections (``FaultMix``, seeded), and is down
altogether for ``--outage`` seconds in the middle of the play. ``--groups`` tables (the
last ``--card-tables`` of them Bull Bull) of ``--players`` each play rounds with windows
of bid 6 s, bet 10 s, grab 6 s, pause 2 s for ``--seconds``, acting on the boards they see
(``tests/e2e/fault_play.py``: the dealer bids by command or button, the others bet by
command or the quick-bet button, one asks ``/balance``, everyone grabs on the board).
Then the tables close and the bench waits (at most 120 s) until nothing it looks for is
missing any more.

It prints, for the run with faults:

1. commands sent (by kind) and rounds played;
2. commands without a visible answer, phase boards never shown, ended rounds whose board
   still has live buttons, results lost, rounds still open (each 0 when all is well), and
   the last phases shown by the results alone (not a failure);
3. seconds from the outage's end to the answer of a ``/balance`` asked then in a quiet
   group, and to the first round a group saw move on (a new phase's board, or results);
4. the faults injected, by kind;

and the floor: the same scenario with no faults and no outage, in the same run before it,
its commands and rounds beside those of the run with faults.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.engine.round import Phase
from bot.fakegram import FaultMix
from tests.e2e.fault_play import (
    Figures,
    Players,
    Recovery,
    Table,
    faults_by_kind,
    first_move_after,
    kinds_asked,
    open_tables,
    probe_answer,
    rounds_of,
    settle_down,
    tables,
)
from tests.e2e.harness import FAST_GAME, running_bot, user

GAME: dict[str, Any] = {
    **FAST_GAME,
    "bid_seconds": 6,
    "bet_seconds": 10,
    "grab_seconds": 6,
    "pause_seconds": 2,
}
#: The bot's own default share of a group's minute for answers.
REPLIES_PER_MINUTE = 10
SETTLE_SECONDS = 120.0
PROBE_CHAT = -1_001_000_099_999
PROBE_USER = user(99_999, "Probe")


@dataclass
class Result:
    figures: Figures
    kinds: dict[str, int]
    ended: dict[str, int]
    seconds: float
    recovery: Recovery | None = None
    faults: dict[str, int] | None = None


async def play(args: argparse.Namespace, work: Path, mix: FaultMix | None) -> Result:
    """One run of the scenario: with ``mix`` and the outage, or with neither."""
    chosen: list[Table] = tables(
        args.groups, args.players, card_tables=args.card_tables, first_id=90_000
    )
    async with running_bot(work, game=GAME, replies_per_minute=REPLIES_PER_MINUTE) as e2e:
        await open_tables(e2e, chosen)
        e2e.fake.set_faults(mix)
        players = Players(e2e, chosen, seed=args.seed)
        healed: list[float] = []
        answered: list[float | None] = []

        async def outage() -> None:
            await asyncio.sleep((args.seconds - args.outage) / 2)
            e2e.fake.outage(args.outage)
            await asyncio.sleep(args.outage)
            await e2e.fake.wait_for(lambda: not e2e.fake.in_outage, timeout=10)
            healed.append(time.time())
            answered.append(await probe_answer(e2e, PROBE_CHAT, PROBE_USER, timeout=60))

        started = time.monotonic()
        outages = [outage()] if mix is not None else []
        await asyncio.gather(players.run(args.seconds), *outages)
        seconds = time.monotonic() - started
        figures = await settle_down(e2e, chosen, players.play, timeout=SETTLE_SECONDS)
        rounds = await rounds_of(e2e, [table.chat_id for table in chosen])
        ended: dict[str, int] = {}
        for state in rounds:
            how = (
                state.phase.value if state.phase is not Phase.VOID else f"void {state.void_reason}"
            )
            ended[how] = ended.get(how, 0) + 1
        result = Result(figures, kinds_asked(players.play), ended, seconds)
        if mix is not None:
            result.recovery = Recovery(answered[0], first_move_after(e2e, chosen, healed[0]))
            result.faults = faults_by_kind(e2e)
        return result


def seconds_text(value: float | None) -> str:
    return "never" if value is None else f"{value:.1f} s"


def report(args: argparse.Namespace, floor: Result, faulty: Result) -> None:
    f = faulty.figures
    print(
        f"\n{args.groups} groups ({args.card_tables} Bull Bull) x {args.players} players, "
        f"{args.seconds:g} s of play, windows bid {GAME['bid_seconds']} s, bet "
        f"{GAME['bet_seconds']} s, grab {GAME['grab_seconds']} s, pause "
        f"{GAME['pause_seconds']} s; seed {args.seed}"
    )
    print(f"(1) commands: {f.commands} {faulty.kinds}")
    print(f"    rounds: {f.rounds} {faulty.ended}")
    print(f"(2) commands without a visible answer: {len(f.unanswered)}")
    print(f"    phase boards never shown: {len(f.phases_unshown)}")
    print(f"    ended rounds with live buttons: {len(f.live_after_end)}")
    print(f"    results lost: {len(f.results_lost)}; rounds still open: {len(f.still_open)}")
    print(f"    last phases shown by the results alone: {f.shown_by_results}")
    if not f.clean:
        print("    " + f.details().replace("\n", "\n    "))
    recovery = faulty.recovery
    assert recovery is not None
    print(
        f"(3) after the {args.outage:g} s outage: a command answered in "
        f"{seconds_text(recovery.answered_after)}, a round moved on in "
        f"{seconds_text(recovery.moved_after)}"
    )
    print(f"(4) faults injected: {faulty.faults}")
    fl = floor.figures
    print(
        f"floor, no faults: {fl.commands} commands {floor.kinds}, {fl.rounds} rounds "
        f"{floor.ended}; {len(fl.unanswered)} without a visible answer, "
        f"{len(fl.phases_unshown)} phases never shown, {len(fl.live_after_end)} live "
        f"buttons, {len(fl.results_lost)} results lost"
    )
    if fl.commands and fl.rounds:
        print(
            f"    with faults / floor: commands {f.commands / fl.commands:.2f}x, "
            f"rounds {f.rounds / fl.rounds:.2f}x"
        )
    print(f"load average after: {os.getloadavg()}")


async def main_async(args: argparse.Namespace) -> None:
    mix = FaultMix(
        retry_after=0.10,
        retry_after_seconds=(1, 4),
        bad_gateway=0.05,
        late_answer=0.03,
        reset=0.02,
        seed=args.seed,
    )
    print(f"load before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="bench-faults-") as tmp:
        floor_dir, faults_dir = Path(tmp, "floor"), Path(tmp, "faults")
        floor_dir.mkdir()
        faults_dir.mkdir()
        floor = await play(args, floor_dir, None)
        print(f"floor: {floor.figures.line()}")
        faulty = await play(args, faults_dir, mix)
        print(f"faults: {faulty.figures.line()}")
    report(args, floor, faulty)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=int, default=6)
    parser.add_argument("--players", type=int, default=5)
    parser.add_argument("--card-tables", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=180.0, help="of play")
    parser.add_argument("--outage", type=float, default=20.0, help="seconds Telegram is down")
    parser.add_argument("--seed", type=int, default=20_240_601, help="of the faults and players")
    args = parser.parse_args(argv)
    if not 1 <= args.groups <= 90:
        parser.error("--groups must be 1 to 90")
    if not 2 <= args.players <= 99:
        parser.error("--players must be 2 to 99 (a dealer and bettors)")
    if not 0 <= args.card_tables <= args.groups:
        parser.error("--card-tables must be 0 to --groups")
    if not 0 < args.outage < args.seconds:
        parser.error("--outage must be more than 0 and less than --seconds")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()

"""Bench: when many groups' rounds end together, Telegram's ~30 messages a second for the
whole bot is the limit, and what matters most goes first.

    python bench/bench_send_priority.py [--groups 500] [--rate 30]

Each of ``--groups`` groups has, at the same instant, the four kinds of message a round's
end brings, queued in a shuffled order: its results (``Priority.RESULTS``), the next
round's board (``PHASE``), a combined answer (``ANSWER``) and an edit of a board
(``EDIT``). They go through the bot's own ``Messenger`` (its per-group window and its
overall ``SendRate``) to an in-memory Bot that notes when each call arrives.

It prints, per kind, when the first, the median and the last of them went out, and the
floor: what the messages count for (an edit ``EDIT_COST``), less the second's worth the
rate lets go at once, over the rate: the least any order could take; the ratio of the
whole run to it shows what the ordering costs (nothing, if it is 1.0x). Then the same
messages with one priority for all (first come, first served: what a FIFO limiter does),
to show what the order buys: how much sooner every group has its results.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
import statistics
import time
from dataclasses import dataclass
from typing import Any, cast

from telegram import Bot

from bot.telegram.budget import Priority, SendRate
from bot.telegram.messenger import EDIT_COST, Messenger

KINDS = [Priority.RESULTS, Priority.PHASE, Priority.ANSWER, Priority.EDIT]


@dataclass
class Sent:
    message_id: int


class MemoryBot:
    """Answers sends and edits at once, noting when each arrived."""

    def __init__(self) -> None:
        self.arrivals: dict[str, float] = {}
        self.started = time.perf_counter()

    async def send_message(self, chat_id: int, text: str, **_: Any) -> Sent:
        self.arrivals[text] = time.perf_counter() - self.started
        return Sent(len(self.arrivals))

    async def edit_message_text(self, text: str, **_: Any) -> bool:
        self.arrivals[text] = time.perf_counter() - self.started
        return True


async def run(groups: int, rate: float, *, ordered: bool, seed: int) -> dict[Priority, list[float]]:
    """Seconds from the start at which each message of each kind reached the Bot."""
    bot = MemoryBot()
    messenger = Messenger(rate=SendRate(rate))
    messenger.attach(cast(Bot, bot))
    work = [(group, kind) for group in range(groups) for kind in KINDS]
    random.Random(seed).shuffle(work)

    async def one(group: int, kind: Priority) -> None:
        chat_id = -1_000_000_000 - group
        text = f"{kind.name} {group}"
        if not ordered:  # one queue for all: what a FIFO limiter does
            await messenger.send(chat_id, text, priority=Priority.ANSWER)
        elif kind is Priority.EDIT:
            await messenger.edit(chat_id, 1, text, None)
        else:
            await messenger.send(chat_id, text, priority=kind)

    bot.started = time.perf_counter()
    await asyncio.gather(*(one(group, kind) for group, kind in work))
    return {
        kind: sorted(bot.arrivals[f"{kind.name} {group}"] for group in range(groups))
        for kind in KINDS
    }


def report(title: str, times: dict[Priority, list[float]], floor: float) -> None:
    print(f"\n{title}")
    print(f"  {'kind':<8} {'first':>8} {'median':>8} {'last':>8}")
    for kind, seconds in times.items():
        print(
            f"  {kind.name:<8} {seconds[0]:>7.2f}s {statistics.median(seconds):>7.2f}s "
            f"{seconds[-1]:>7.2f}s"
        )
    total = max(seconds[-1] for seconds in times.values())
    print(f"  all sent in {total:.2f} s; floor {floor:.2f} s; ratio {total / floor:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=500)
    parser.add_argument("--rate", type=float, default=30.0, help="messages a second overall")
    parser.add_argument("--seed", type=int, default=68)
    args = parser.parse_args()
    counted = args.groups * (len(KINDS) - 1 + EDIT_COST)
    floor = (counted - args.rate) / args.rate
    print(
        f"{args.groups} groups' rounds ending together: {len(KINDS) * args.groups} messages "
        f"at {args.rate:g} a second"
    )
    ordered = asyncio.run(run(args.groups, args.rate, ordered=True, seed=args.seed))
    report("by priority (the bot):", ordered, floor)
    # The very first message goes at once whatever it is (nothing waits yet); after it,
    # no message may go before a more urgent one that was waiting.
    first = min(seconds[0] for seconds in ordered.values())
    out_of_order = sum(
        1
        for urgent, less in itertools.combinations(KINDS, 2)
        for moment in ordered[less]
        if first < moment < ordered[urgent][-1]
    )
    print(f"  messages that went before a more urgent one waiting: {out_of_order}")
    fifo = asyncio.run(run(args.groups, args.rate, ordered=False, seed=args.seed))
    report("first come, first served (for comparison):", fifo, floor)
    print(
        f"\nthe last group had its results after {ordered[Priority.RESULTS][-1]:.2f} s by "
        f"priority, {fifo[Priority.RESULTS][-1]:.2f} s first come first served"
    )


if __name__ == "__main__":
    main()

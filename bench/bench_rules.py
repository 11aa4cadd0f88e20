"""Micro-benchmarks of the pure rules: ``python bench/bench_rules.py``.

Prints hands evaluated per second, comparisons per second, the median time to settle a
round of 1,000 stakes (target: under 5 ms) and the median time to split an envelope into
1,000 shares; then, for each card game, packed hands evaluated per second and the time to
evaluate all 2,598,960 five-card hands of one deck (target: under 10 s each). Not a test:
numbers depend on the machine. ``--quick`` skips the exhaustive card runs.
"""

from __future__ import annotations

import hashlib
import itertools
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from bot.engine.settlement import Stake, settle
from bot.rules import bullbull, poker29
from bot.rules.cards import CARDS, deal_packed
from bot.rules.envelope import compare, evaluate
from bot.rules.split import split_envelope

REPEATS = 7
SETTLE_TARGET_MS = 5.0
ALL_HANDS_TARGET_S = 10.0
#: The card games' evaluators of five cards, by ruleset name.
CARD_EVALUATORS: dict[str, Callable[[Any], object]] = {
    "bullbull": bullbull.evaluate_cards,
    "poker29": poker29.evaluate_cards,
    "poker29_vn": lambda cards: poker29.evaluate_cards(cards, card_tie_break=False),
}
CARD_RULESETS = {"bullbull": bullbull.BULLBULL, "poker29": poker29.POKER29}
CARD_RULESETS["poker29_vn"] = poker29.POKER29_VN


def timings(action: Callable[[], object], repeats: int = REPEATS) -> list[float]:
    """Seconds taken by each of ``repeats`` runs of ``action`` (after one warm-up run)."""
    action()
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        out.append(time.perf_counter() - start)
    return out


def pseudo_random(n: int, salt: bytes) -> list[int]:
    """n reproducible numbers 0..2^32-1 (no global randomness, so runs are comparable)."""
    return [
        int.from_bytes(hashlib.sha256(salt + i.to_bytes(4, "big")).digest()[:4], "big")
        for i in range(n)
    ]


def bench_evaluate() -> float:
    amounts = [1 + r % 999 for r in pseudo_random(100_000, b"evaluate")]

    def run() -> None:
        for amount in amounts:
            evaluate(amount)

    return len(amounts) / statistics.median(timings(run))


def bench_compare() -> float:
    numbers = pseudo_random(200_000, b"compare")
    pairs = [
        (evaluate(1 + a % 999), evaluate(1 + b % 999))
        for a, b in zip(numbers[::2], numbers[1::2], strict=True)
    ]

    def run() -> None:
        for a, b in pairs:
            compare(a, b)

    return len(pairs) / statistics.median(timings(run))


def round_of(count: int) -> dict[str, object]:
    numbers = pseudo_random(2 * count, b"settle")
    stakes = [
        Stake(
            player_id=i, amount=100 + numbers[2 * i] % 10_000, outcome=1 + numbers[2 * i + 1] % 999
        )
        for i in range(count)
    ]
    return {
        "dealer_outcome": 14,  # 0.14, 5 points: roughly half the players win
        "pool": 1_000_000,  # 10,000.00: not enough for every winner, so some drink
        "stakes": stakes,
        "rake_bps": 500,
        "rebate_bps": 70,
        "dealer_fees": 300,
    }


def bench_settle(count: int = 1_000) -> tuple[float, dict[str, int]]:
    round_ = round_of(count)
    result = settle(**round_)  # type: ignore[arg-type]
    mix: dict[str, int] = {}
    for outcome in result.outcomes.values():
        mix[outcome.result.value] = mix.get(outcome.result.value, 0) + 1
    seconds = statistics.median(timings(lambda: settle(**round_), repeats=51))  # type: ignore[arg-type]
    return seconds * 1000, mix


def bench_split(count: int = 1_000) -> float:
    seeds = [hashlib.sha256(i.to_bytes(4, "big")).digest() for i in range(REPEATS + 1)]
    it = iter(seeds)
    total = count * 500
    seconds = statistics.median(timings(lambda: split_envelope(next(it), count, total)))
    return seconds * 1000


def dealt_outcomes(name: str, rounds: int = 2_000) -> list[int]:
    """Packed hands as the engine deals them: ten hands a round from fresh seeds."""
    ruleset = CARD_RULESETS[name]
    outcomes: list[int] = []
    for i in range(rounds):
        seed = hashlib.sha256(b"cards" + i.to_bytes(4, "big")).digest()
        outcomes += ruleset.deal(seed, 10, mean_share=0)
    return outcomes


def bench_card_evaluate(name: str) -> float:
    """Packed hands evaluated per second by the ruleset (``Ruleset.evaluate``)."""
    evaluate_outcome = CARD_RULESETS[name].evaluate
    outcomes = dealt_outcomes(name)

    def run() -> None:
        for outcome in outcomes:
            evaluate_outcome(outcome)

    return len(outcomes) / statistics.median(timings(run))


def bench_card_deal(name: str) -> float:
    """Median milliseconds to deal a round of 31 hands (a fresh shuffle each time)."""
    ruleset = CARD_RULESETS[name]
    count = 10 if ruleset.shoe_decks == 0 else 31
    seeds = iter(hashlib.sha256(i.to_bytes(4, "big")).digest() for i in range(REPEATS + 1))
    decks = ruleset.shoe_decks or 1
    return statistics.median(timings(lambda: deal_packed(next(seeds), decks, count))) * 1000


def bench_all_hands(name: str) -> tuple[float, int]:
    """Seconds to evaluate all C(52, 5) hands of one deck once, and how many there were."""
    evaluate_cards = CARD_EVALUATORS[name]
    start = time.perf_counter()
    count = 0
    for five in itertools.combinations(CARDS, 5):
        evaluate_cards(five)
        count += 1
    return time.perf_counter() - start, count


def main() -> int:
    print(f"niuniu-bot rules benchmark  (Python {sys.version.split()[0]}, median of repeats)")
    print(f"  evaluate():          {bench_evaluate():>14,.0f} hands/s")
    print(f"  compare():           {bench_compare():>14,.0f} comparisons/s")
    settle_ms, mix = bench_settle()
    met = "MET" if settle_ms < SETTLE_TARGET_MS else "NOT MET"
    print(
        f"  settle(1,000 stakes): {settle_ms:>12.3f} ms   target < {SETTLE_TARGET_MS:g} ms: {met}"
    )
    print("      outcome mix: " + ", ".join(f"{k} {v}" for k, v in sorted(mix.items())))
    print(f"  split_envelope(1,000 shares): {bench_split():>6.3f} ms")
    ok = settle_ms < SETTLE_TARGET_MS
    for name in CARD_RULESETS:
        print(f"  {name}:")
        print(f"    evaluate(outcome):     {bench_card_evaluate(name):>12,.0f} hands/s")
        hands = 10 if CARD_RULESETS[name].shoe_decks == 0 else 31
        print(f"    deal({hands} hands, new seed): {bench_card_deal(name):>8.3f} ms")
        if "--quick" in sys.argv[1:]:
            continue
        seconds, count = bench_all_hands(name)
        met = "MET" if seconds < ALL_HANDS_TARGET_S else "NOT MET"
        print(
            f"    all {count:,} hands:  {seconds:>8.2f} s ({count / seconds:,.0f} hands/s)"
            f"   target < {ALL_HANDS_TARGET_S:g} s: {met}"
        )
        ok = ok and seconds < ALL_HANDS_TARGET_S
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

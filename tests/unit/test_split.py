"""Splitting an envelope from a seed: the documented algorithm, bounds, determinism, fairness.

``DocumentedSplit`` below is written from the module docstring of ``bot.rules.split`` only;
that it reproduces ``split_envelope`` exactly is what lets anyone verify a round's split.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import statistics

import pytest

import bot.rules.split as split_module
from bot.rules.split import commitment, split_envelope

# --- an independent implementation of the documented algorithm ------------------------------


class DocumentedSplit:
    """Version 1 of the split, as the docstring describes it."""

    DOMAIN = b"niuniu/split/v1"

    def __init__(self, seed: bytes) -> None:
        self.seed = seed
        self.stream = bytearray()
        self.position = 0
        self.blocks = 0

    def take(self, size: int) -> bytes:
        # Step 1: block i = HMAC-SHA256(key=seed, msg=DOMAIN + i as 8 bytes big-endian);
        # the stream is the blocks one after another.
        while len(self.stream) - self.position < size:
            message = self.DOMAIN + self.blocks.to_bytes(8, "big")
            self.stream += hmac.digest(self.seed, message, "sha256")
            self.blocks += 1
        chunk = bytes(self.stream[self.position : self.position + size])
        self.position += size
        return chunk

    def below(self, n: int) -> int:
        # Step 2: ceil(bits(n-1)/8) bytes, big-endian, low bits(n-1) bits, retry while >= n.
        if n == 1:
            return 0
        bits = len(bin(n - 1)) - 2
        while True:
            candidate = int.from_bytes(self.take(math.ceil(bits / 8)), "big") % (1 << bits)
            if candidate < n:
                return candidate

    def split(self, count: int, total: int, max_share: int) -> list[int]:
        # Step 3: the double-mean draw, bounded so the rest can always be filled.
        shares = []
        remaining = total
        for left in range(count, 1, -1):
            low = max(1, remaining - (left - 1) * max_share)
            high = min(max_share, remaining - (left - 1), max(low, 2 * (remaining // left)))
            share = low + self.below(high - low + 1)
            shares.append(share)
            remaining -= share
        shares.append(remaining)
        # Step 4: Fisher-Yates, for i from count-1 down to 1, swap i with below(i+1).
        for i in reversed(range(1, count)):
            j = self.below(i + 1)
            shares[i], shares[j] = shares[j], shares[i]
        return shares


def cases() -> list[tuple[bytes, int, int, int]]:
    """Many (seed, count, total, max_share): small and large counts, tight and loose bounds."""
    out = []
    for i in range(300):
        seed = hashlib.sha256(b"case" + i.to_bytes(4, "big")).digest()[: 1 + i % 32]
        count = 1 + (i * 7919) % 60
        max_share = (1, 2, 7, 100, 255, 256, 257, 999)[i % 8]
        low, high = count, count * max_share
        total = low + (i * 104729) % (high - low + 1)
        out.append((seed, count, total, max_share))
    # Big counts: many HMAC blocks, two-byte below() reads, shuffle over 1000 positions.
    out.append((b"\x00", 1000, 250_000, 999))
    out.append((b"big" * 20, 1000, 1000, 999))  # every share exactly 1
    out.append((bytes(range(32)), 1000, 999_000, 999))  # every share exactly 999
    out.append((bytes(range(32)), 500, 2_500_00, 65_535))
    return out


def test_the_docstring_documents_this_algorithm() -> None:
    doc = split_module.__doc__ or ""
    for phrase in ("HMAC-SHA256", 'b"niuniu/split/v1"', "8 bytes big-endian", "Fisher-Yates"):
        assert phrase in doc, phrase


def test_documented_algorithm_recomputes_identical_splits() -> None:
    for seed, count, total, max_share in cases():
        expected = DocumentedSplit(seed).split(count, total, max_share)
        assert split_envelope(seed, count, total, max_share=max_share) == expected, (
            seed.hex(),
            count,
            total,
            max_share,
        )


# --- the split's guarantees ---------------------------------------------------------------


def test_shares_sum_exactly_to_the_total() -> None:
    for seed, count, total, max_share in cases():
        assert sum(split_envelope(seed, count, total, max_share=max_share)) == total


def test_every_share_is_between_1_and_max_share() -> None:
    for seed, count, total, max_share in cases():
        shares = split_envelope(seed, count, total, max_share=max_share)
        assert len(shares) == count
        assert all(1 <= share <= max_share for share in shares)


def test_default_max_share_is_999_cents() -> None:
    assert split_envelope(b"x", 3, 2997) == [999, 999, 999]
    with pytest.raises(ValueError):
        split_envelope(b"x", 3, 2998)


def test_the_same_seed_always_gives_the_same_split() -> None:
    first = [split_envelope(bytes([i + 1]), 10, 5000) for i in range(50)]
    again = [split_envelope(bytes([i + 1]), 10, 5000) for i in range(50)]
    assert first == again


def test_different_seeds_give_different_splits() -> None:
    splits = {tuple(split_envelope(i.to_bytes(4, "big"), 10, 5000)) for i in range(200)}
    assert len(splits) == 200


def test_a_single_share_is_the_whole_total() -> None:
    assert split_envelope(b"seed", 1, 777) == [777]


def test_tight_totals_have_only_one_split() -> None:
    assert split_envelope(b"seed", 5, 5) == [1] * 5
    assert split_envelope(b"seed", 5, 50, max_share=10) == [10] * 5


@pytest.mark.parametrize(
    ("count", "total", "max_share"),
    [
        (0, 100, 999),  # count < 1
        (-3, 100, 999),
        (5, 4, 999),  # total < count
        (1, 0, 999),
        (5, 5 * 999 + 1, 999),  # total > count x max_share
        (3, 31, 10),
        (1, 1000, 999),
    ],
)
def test_impossible_splits_raise_value_error(count: int, total: int, max_share: int) -> None:
    with pytest.raises(ValueError):
        split_envelope(b"seed", count, total, max_share=max_share)


def test_every_position_has_the_same_expected_share() -> None:
    # 4000 fixed seeds: deterministic, so this cannot flake. Each position's mean must lie
    # within 5 standard errors of total / count. (Without the shuffle, positions 2-5 of
    # this double-mean split are off by about 7 standard errors.)
    count, total, rounds = 5, 2500, 4000
    columns: list[list[int]] = [[] for _ in range(count)]
    for i in range(rounds):
        for position, share in enumerate(split_envelope(i.to_bytes(4, "big"), count, total)):
            columns[position].append(share)
    expected = total / count
    for position, column in enumerate(columns, start=1):
        standard_error = statistics.stdev(column) / math.sqrt(rounds)
        assert abs(statistics.mean(column) - expected) <= 5 * standard_error, position


def test_every_position_has_the_same_spread() -> None:
    # Same fixed seeds; the chance of a share above 9.00 is the same at every position
    # (within 5 standard errors of the overall rate).
    count, total, rounds = 5, 2500, 4000
    hits = [0] * count
    for i in range(rounds):
        for position, share in enumerate(split_envelope(i.to_bytes(4, "big"), count, total)):
            hits[position] += share > 900
    rate = sum(hits) / (count * rounds)
    standard_error = math.sqrt(rate * (1 - rate) / rounds)
    for position, hit in enumerate(hits, start=1):
        assert abs(hit / rounds - rate) <= 5 * standard_error, position


# --- commitment ---------------------------------------------------------------------------


def test_commitment_is_the_hex_sha256_of_the_seed() -> None:
    assert commitment(b"abc") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
    seed = bytes(range(32))
    assert commitment(seed) == hashlib.sha256(seed).hexdigest()

"""Splitting a red envelope into shares, deterministically from a round's seed.

Anyone holding the revealed seed can recompute a round's split. The algorithm, version 1:

1. **Random stream.** Block ``i`` (i = 0, 1, 2, ...) is
   ``HMAC-SHA256(key=seed, msg=b"niuniu/split/v1" + i as 8 bytes big-endian)``; the stream
   is the concatenation of the blocks.
2. **Unbiased integers.** ``below(n)`` for n >= 1 takes ``ceil(bits(n-1) / 8)`` bytes from
   the stream as a big-endian integer, keeps its low ``bits(n-1)`` bits and retries while
   the result is >= n (rejection sampling, so every value in 0..n-1 is equally likely).
   ``below(1)`` is 0 and reads nothing.
3. **Draw.** With ``remaining`` cents for ``left`` shares still to draw, each share but the
   last is ``low + below(high - low + 1)``, where ``low = max(1, remaining - (left-1) x
   max_share)`` and ``high = min(max_share, remaining - (left-1), max(low, 2 x (remaining //
   left)))`` (the "double mean" rule, bounded so the rest can always be filled). The last
   share is what remains.
4. **Shuffle.** A Fisher-Yates shuffle (``for i from count-1 down to 1: swap i with
   below(i+1)``) puts the shares in grab order. Because every order is equally likely,
   every grab position has the same distribution, hence the same expected share
   (total / count): grabbing early or late gives no edge.
"""

from __future__ import annotations

import hashlib
import hmac

_DOMAIN = b"niuniu/split/v1"
SEED_BYTES = 32


class SeedStream:
    """The deterministic random stream of step 1-2 above, keyed by a seed."""

    def __init__(self, seed: bytes, domain: bytes = _DOMAIN) -> None:
        if not seed:
            raise ValueError("a seed must not be empty")
        self._seed = bytes(seed)
        self._domain = domain
        self._counter = 0
        self._buffer = b""

    def read(self, size: int) -> bytes:
        """The next ``size`` bytes of the stream."""
        while len(self._buffer) < size:
            block = hmac.new(
                self._seed, self._domain + self._counter.to_bytes(8, "big"), hashlib.sha256
            ).digest()
            self._counter += 1
            self._buffer += block
        taken, self._buffer = self._buffer[:size], self._buffer[size:]
        return taken

    def below(self, n: int) -> int:
        """A uniformly distributed integer in ``0..n-1`` (rejection sampling, no modulo bias)."""
        if n < 1:
            raise ValueError(f"below() needs n >= 1, got {n}")
        if n == 1:
            return 0
        bits = (n - 1).bit_length()
        size = (bits + 7) // 8
        mask = (1 << bits) - 1
        while True:
            value = int.from_bytes(self.read(size), "big") & mask
            if value < n:
                return value


def split_envelope(seed: bytes, count: int, total: int, *, max_share: int = 999) -> list[int]:
    """Split ``total`` cents into ``count`` shares in grab order, each ``1..max_share``.

    The same seed always gives the same split, the shares sum exactly to ``total``, and
    every position has the same expected share. Raises ``ValueError`` when no such split
    exists (``count < 1``, ``total < count`` or ``total > count x max_share``).
    """
    if count < 1:
        raise ValueError(f"an envelope needs at least one share, not {count}")
    if max_share < 1:
        raise ValueError(f"max_share must be at least 1 cent, not {max_share}")
    if total < count:
        raise ValueError(f"{total} cents cannot give {count} shares of at least 1 cent")
    if total > count * max_share:
        raise ValueError(f"{total} cents cannot fit in {count} shares of at most {max_share}")
    stream = SeedStream(seed)
    shares: list[int] = []
    remaining = total
    for left in range(count, 1, -1):
        low = max(1, remaining - (left - 1) * max_share)
        high = min(max_share, remaining - (left - 1), max(low, 2 * (remaining // left)))
        share = low + stream.below(high - low + 1)
        shares.append(share)
        remaining -= share
    shares.append(remaining)
    for i in range(count - 1, 0, -1):
        j = stream.below(i + 1)
        shares[i], shares[j] = shares[j], shares[i]
    return shares


def commitment(seed: bytes) -> str:
    """The hex SHA-256 of a seed, published before a round so the seed cannot change later."""
    return hashlib.sha256(seed).hexdigest()

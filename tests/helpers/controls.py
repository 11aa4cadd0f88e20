"""What the tests move by hand: the service's clock and its round seeds."""

from __future__ import annotations


class Clock:
    """A clock the tests move by hand (milliseconds since the epoch)."""

    def __init__(self, start_ms: int = 1_800_000_000_000) -> None:
        self.now_ms = start_ms

    def __call__(self) -> int:
        return self.now_ms

    def advance(self, seconds: float) -> None:
        self.now_ms += int(seconds * 1000)


class Seeds:
    """Deterministic round seeds: 32 bytes from a counter, or queued seeds first."""

    def __init__(self) -> None:
        self.counter = 0
        self.queued: list[bytes] = []

    def __call__(self) -> bytes:
        if self.queued:
            return self.queued.pop(0)
        self.counter += 1
        return self.counter.to_bytes(32, "big")

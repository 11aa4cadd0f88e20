"""A worker's lease on sending a board or the results, kept while it waits to send."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

log = logging.getLogger(__name__)
_T = TypeVar("_T")


class DeliveryLease:
    """The service's claim on a round's message (its board, its results) lasts
    ``lease_ms``: one worker sends each, and one whose worker died is sent by the sweep
    once the lease ran out."""

    def __init__(self, lease_seconds: float) -> None:
        self.lease_ms = round(lease_seconds * 1000)

    async def keeping(
        self,
        renew: Callable[..., Awaitable[bool]],
        round_id: int,
        send: Callable[[], Awaitable[_T]],
    ) -> _T:
        """Run ``send`` holding the round's lease on it: renewed every third of its length,
        so that a message waiting behind Telegram's rate limits keeps its job and no other
        worker sends it too. A process that dies stops renewing, and the lease runs out."""
        sent = asyncio.Event()

        async def renew_until_sent() -> None:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(sent.wait(), self.lease_ms / 3000)
                    return
                try:
                    if not await renew(round_id, lease_ms=self.lease_ms):
                        return  # delivered meanwhile, by a worker that took it over
                except Exception:
                    log.exception("round %s: renewing a delivery lease failed", round_id)

        renewing = asyncio.get_running_loop().create_task(renew_until_sent())
        try:
            return await send()
        finally:
            sent.set()
            await renewing

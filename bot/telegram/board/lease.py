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
        worker sends it too. A process that dies stops renewing, and the lease runs out.

        Every message of the process renews at the same ticks of the loop's clock (the
        first at least half a third after the claim), so that the store writes the
        renewals of a tick together: while the budget is tight, scores of boards wait."""
        sent = asyncio.Event()
        loop = asyncio.get_running_loop()
        period = self.lease_ms / 3000

        async def renew_until_sent() -> None:
            while True:
                delay = period - loop.time() % period
                if delay < period / 2:  # a tick just past, or a renewal that took long
                    delay += period
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(sent.wait(), delay)
                    return
                try:
                    if not await renew(round_id, lease_ms=self.lease_ms):
                        return  # delivered meanwhile, by a worker that took it over
                except Exception:
                    log.exception("round %s: renewing a delivery lease failed", round_id)

        renewing = loop.create_task(renew_until_sent())
        try:
            return await send()
        finally:
            sent.set()
            await renewing

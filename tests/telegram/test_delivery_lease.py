"""A worker's leases on the messages it is sending: renewed while each waits, every
message of the process at the same ticks (so that the store writes a tick's renewals
together), and no more once it is sent."""

from __future__ import annotations

import asyncio

from bot.telegram.board.lease import DeliveryLease


async def test_messages_waiting_together_renew_at_the_same_ticks_until_each_is_sent() -> None:
    lease = DeliveryLease(0.06)  # renewed every 20 ms
    loop = asyncio.get_running_loop()
    renewed: list[int] = []
    at: dict[int, list[float]] = {1: [], 2: []}
    sent = {round_id: asyncio.Event() for round_id in (1, 2)}

    async def renew(round_id: int, *, lease_ms: int) -> bool:
        assert lease_ms == 60
        renewed.append(round_id)
        at[round_id].append(loop.time())
        return True

    async def send(round_id: int) -> int:
        await sent[round_id].wait()
        return round_id

    first = asyncio.create_task(lease.keeping(renew, 1, lambda: send(1)))
    await asyncio.sleep(0.007)  # the second claimed a third of a tick later
    second = asyncio.create_task(lease.keeping(renew, 2, lambda: send(2)))
    while renewed.count(2) < 3:
        await asyncio.sleep(0.005)
    sent[2].set()
    assert await second == 2
    after_second = len(renewed)
    while renewed.count(1) < 6:
        await asyncio.sleep(0.005)
    sent[1].set()
    assert await first == 1
    await asyncio.sleep(0.05)

    # Each of the second's renewals came at a tick of the first's: in the same turn of the
    # loop, however late the loop ran it.
    assert all(min(abs(t - t1) for t1 in at[1]) < 0.002 for t in at[2])
    assert 2 not in renewed[after_second:]  # none once it was sent
    final = len(renewed)
    await asyncio.sleep(0.05)
    assert len(renewed) == final  # nor once the last was

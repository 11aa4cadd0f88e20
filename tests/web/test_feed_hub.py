"""The live feed's hub (``bot.web.miniapp.feed.FeedHub``) over a table it reads from a
stand-in: one read per group per change, shared by its viewers; bursts coalesced; each
viewer offered only what is newer than it saw (catch-up after a reconnect); a slow viewer
holds one event, the newest."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

from bot.engine.settings import Settings
from bot.service.game import Balance, TableSnapshot
from bot.service.round_changes import NO_ROUND, RoundChange, RoundKey
from bot.web.miniapp.feed import FeedHub, Viewer, sse_event

GROUP, OTHER_GROUP = -100, -200


class Tables:
    """The groups' tables as the database holds them: where each stands, and each
    viewer's chips. A read can be held (``hold``) to see what comes while it runs."""

    def __init__(self) -> None:
        self.keys: dict[int, RoundKey] = {}
        self.reads: list[tuple[int, tuple[int, ...]]] = []
        self.gate: asyncio.Event | None = None
        self.started = asyncio.Event()

    def hold(self) -> None:
        self.gate = asyncio.Event()
        self.started = asyncio.Event()

    def release(self) -> None:
        assert self.gate is not None
        self.gate.set()
        self.gate = None

    async def read(self, chat_id: int, viewers: Sequence[int]) -> TableSnapshot:
        key = self.keys.get(chat_id, NO_ROUND)  # as the read begins
        self.reads.append((chat_id, tuple(viewers)))
        self.started.set()
        if self.gate is not None:
            await self.gate.wait()
        balances = {user: Balance(user * 100, 0) for user in viewers}
        return TableSnapshot(chat_id, key, None, Settings(), balances, {})

    def commit(self, hub: FeedHub, chat_id: int, key: RoundKey) -> None:
        self.keys[chat_id] = key
        hub.changed(RoundChange(chat_id, key))


def render(snapshot: TableSnapshot, user_id: int) -> bytes:
    chips = snapshot.balances[user_id].available
    return sse_event(str(snapshot.key), "table", json.dumps({"user": user_id, "chips": chips}))


def hub_over(tables: Tables) -> FeedHub:
    return FeedHub(tables.read, render)


async def settled(hub: FeedHub) -> None:
    """Let the hub's reads run to their end."""
    for _ in range(20):
        await asyncio.sleep(0)


async def events(viewer: Viewer) -> list[str]:
    """The event ids waiting for the viewer (at most one: the newest)."""
    got = []
    while (event := await viewer.next_event(0)) is not None:
        got.append(event.decode().split("\n")[0].removeprefix("id: "))
    return got


async def test_a_change_is_read_once_for_all_of_a_groups_viewers_each_seeing_their_chips() -> None:
    tables = Tables()
    hub = hub_over(tables)
    viewers = [hub.join(GROUP, user, None) for user in (1, 2, 3)]
    await settled(hub)
    assert len(tables.reads) == 1  # the three joined together: one read
    assert [await events(v) for v in viewers] == [["0.0"]] * 3

    tables.commit(hub, GROUP, RoundKey(7, 1))
    await settled(hub)
    assert len(tables.reads) == 2 and sorted(tables.reads[1][1]) == [1, 2, 3]
    for user, viewer in zip((1, 2, 3), viewers, strict=True):
        event = await viewer.next_event(0)
        assert event is not None
        assert json.loads(event.decode().split("data: ")[1]) == {"user": user, "chips": user * 100}


async def test_a_burst_during_a_read_costs_one_read_more_not_one_each() -> None:
    tables = Tables()
    hub = hub_over(tables)
    viewer = hub.join(GROUP, 1, None)
    await settled(hub)
    tables.hold()
    tables.commit(hub, GROUP, RoundKey(1, 1))
    await tables.started.wait()
    for version in range(2, 12):  # ten more while the first read is held
        tables.commit(hub, GROUP, RoundKey(1, version))
    tables.release()
    await settled(hub)
    assert len(tables.reads) == 3  # the join's, the held one, one for the burst
    assert await events(viewer) == ["1.11"]  # the newest only: the slow page skips states


async def test_a_change_a_read_already_shows_costs_no_read() -> None:
    tables = Tables()
    hub = hub_over(tables)
    hub.join(GROUP, 1, None)
    await settled(hub)
    tables.keys[GROUP] = RoundKey(3, 2)  # two steps committed; the first one's notice:
    hub.changed(RoundChange(GROUP, RoundKey(3, 1)))
    await settled(hub)
    reads = len(tables.reads)
    # Its notice, and an older one, come after the read that showed them.
    hub.changed(RoundChange(GROUP, RoundKey(3, 2)))
    hub.changed(RoundChange(GROUP, RoundKey(3, 1)))
    await settled(hub)
    assert len(tables.reads) == reads


async def test_a_group_nobody_watches_is_never_read() -> None:
    tables = Tables()
    hub = hub_over(tables)
    hub.join(GROUP, 1, None)
    await settled(hub)
    tables.commit(hub, OTHER_GROUP, RoundKey(1, 1))
    await settled(hub)
    assert [chat for chat, _ in tables.reads] == [GROUP]


async def test_a_page_that_comes_back_gets_the_table_at_once_only_if_it_changed() -> None:
    tables = Tables()
    hub = hub_over(tables)
    tables.keys[GROUP] = RoundKey(5, 3)
    up_to_date = hub.join(GROUP, 1, RoundKey(5, 3))
    behind = hub.join(GROUP, 2, RoundKey(5, 1))
    ended_since = hub.join(GROUP, 3, RoundKey(4, 9))  # its round ended, a new one began
    await settled(hub)
    assert await events(up_to_date) == []
    assert await events(behind) == ["5.3"]
    assert await events(ended_since) == ["5.3"]
    tables.commit(hub, GROUP, RoundKey(5, 4))
    await settled(hub)
    assert [await events(v) for v in (up_to_date, behind, ended_since)] == [["5.4"]] * 3


async def test_a_viewer_joining_during_a_read_is_read_for_with_its_chips() -> None:
    tables = Tables()
    hub = hub_over(tables)
    first = hub.join(GROUP, 1, None)
    await tables.started.wait()
    late = hub.join(GROUP, 2, None)  # after the read began: its chips were not asked for
    await settled(hub)
    assert [sorted(viewers) for _, viewers in tables.reads] == [[1], [1, 2]]
    assert await events(first) == ["0.0"]
    assert await events(late) == ["0.0"]


async def test_a_resync_reads_every_watched_group_and_sends_only_what_changed() -> None:
    tables = Tables()
    hub = hub_over(tables)
    quiet, missed = hub.join(GROUP, 1, None), hub.join(OTHER_GROUP, 2, None)
    await settled(hub)
    await events(quiet), await events(missed)
    tables.keys[OTHER_GROUP] = RoundKey(2, 1)  # its notice was lost with the connection
    hub.resync()
    await settled(hub)
    assert sorted(chat for chat, _ in tables.reads[2:]) == [OTHER_GROUP, GROUP]
    assert await events(quiet) == []
    assert await events(missed) == ["2.1"]


async def test_leaving_and_closing_end_the_viewers_and_forget_the_group() -> None:
    tables = Tables()
    hub = hub_over(tables)
    gone, staying = hub.join(GROUP, 1, None), hub.join(GROUP, 2, None)
    await settled(hub)
    hub.leave(gone)
    assert gone.closed and hub.viewers == 1
    tables.commit(hub, GROUP, RoundKey(1, 1))
    await settled(hub)
    assert tables.reads[-1][1] == (2,)
    await hub.close()
    assert staying.closed and hub.viewers == 0
    assert await staying.next_event(0) is None

"""The Mini App's live feed: each group's table pushed to the pages watching it.

The service tells the hub of every round change (``RoundChanges.watch``: a chat and
where its table stands, a ``RoundKey``). The hub reads the group's table once per change
(``table_snapshot``: one read for everyone watching that group, their chips included)
and offers each viewer its own event. Changes that come while the group is being read
cost one read more, not one each; a read that already shows them costs none. A viewer
holds at most one event not yet written: a newer one replaces it, so a slow page skips
states rather than falling behind or holding memory.

A viewer sees a state only if it is newer than the last it saw (``since``: the
``Last-Event-ID`` of a page reconnecting), so a page that comes back gets the current
state at once if it missed anything, and nothing twice. A player's chips changed outside
a round (``chips_changed``: an admin's ``/credit``) leave the round as it was: the group
is read again, and that player's pages get the table again at the same key.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from functools import partial

from bot.service.game import TableSnapshot
from bot.service.round_changes import ChipsChange, RoundChange, RoundKey

log = logging.getLogger(__name__)

#: Reads the group's table with these viewers' chips.
ReadTable = Callable[[int, Sequence[int]], Awaitable[TableSnapshot]]
#: A snapshot as one viewer's event (the bytes written to its page).
Render = Callable[[TableSnapshot, int], bytes]

#: Groups read at once: a burst of changes in many groups queues here, not in the pool.
READS_AT_ONCE = 4
#: How long after a failed read the group is read again.
RETRY_SECONDS = 1.0
#: Reads in a row that may fall short of a change heard before it is given up on.
SHORT_READS = 3


class Viewer:
    """One page watching a group: ``user_id`` in ``chat_id``, which last saw ``seen``."""

    __slots__ = ("_pending", "_ready", "chat_id", "closed", "seen", "user_id")

    def __init__(self, chat_id: int, user_id: int, seen: RoundKey | None) -> None:
        self.chat_id = chat_id
        self.user_id = user_id
        self.seen = seen
        self.closed = False
        self._pending: bytes | None = None
        self._ready = asyncio.Event()

    def offer(self, key: RoundKey, event: Callable[[], bytes], *, again: bool = False) -> None:
        """The table at ``key``, if newer than the last this page saw, or as new (``again``:
        the viewer's chips changed) (``event`` is made only then)."""
        if self.seen is not None and (key < self.seen or (key == self.seen and not again)):
            return
        self.seen = key
        self._pending = event()
        self._ready.set()

    async def next_event(self, timeout: float) -> bytes | None:
        """The next event to write, or ``None`` when none came within ``timeout`` seconds
        or the feed closed (``closed``)."""
        if self._pending is None and not self.closed:
            try:
                await asyncio.wait_for(self._ready.wait(), timeout)
            except TimeoutError:
                return None
        self._ready.clear()
        event, self._pending = self._pending, None
        return None if self.closed else event

    def close(self) -> None:
        self.closed = True
        self._ready.set()


class _Group:
    """The viewers of one group, and where its reading stands."""

    __slots__ = ("chips", "joined", "reading", "stale", "viewers", "wanted")

    def __init__(self) -> None:
        self.viewers: set[Viewer] = set()
        #: The newest state heard of or read.
        self.wanted: RoundKey | None = None
        #: Whether the group must be read (again).
        self.stale = False
        #: Whether a viewer joined (or a resync asked) since the last read began.
        self.joined = False
        self.reading = False
        #: Viewers whose chips changed outside a round since the last read began.
        self.chips: set[int] = set()


class FeedHub:
    """The groups being watched and their viewers (see the module's docstring)."""

    def __init__(
        self, read_table: ReadTable, render: Render, *, reads_at_once: int = READS_AT_ONCE
    ) -> None:
        self._read_table = read_table
        self._render = render
        self._reads = asyncio.Semaphore(reads_at_once)
        self._groups: dict[int, _Group] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        #: Groups read so far (for the tests and the bench).
        self.reads = 0

    @property
    def viewers(self) -> int:
        """Pages watching now."""
        return sum(len(group.viewers) for group in self._groups.values())

    def join(self, chat_id: int, user_id: int, since: RoundKey | None) -> Viewer:
        """A page of ``user_id`` watches ``chat_id``, having seen ``since`` (None: nothing);
        it is offered the group's current state as soon as it is read."""
        viewer = Viewer(chat_id, user_id, since)
        group = self._groups.setdefault(chat_id, _Group())
        group.viewers.add(viewer)
        group.joined = True
        self._refresh(chat_id, group)
        return viewer

    def leave(self, viewer: Viewer) -> None:
        viewer.close()
        group = self._groups.get(viewer.chat_id)
        if group is None:
            return
        group.viewers.discard(viewer)
        if not group.viewers and not group.reading:
            del self._groups[viewer.chat_id]

    def changed(self, change: RoundChange) -> None:
        """A round of a group now stands at ``change.key`` (``RoundChanges``' watcher)."""
        group = self._groups.get(change.chat_id)
        if group is None or (group.wanted is not None and change.key <= group.wanted):
            return  # nobody watches, or the group was read (or is due) at least this far
        group.wanted = change.key
        self._refresh(change.chat_id, group)

    def chips_changed(self, change: ChipsChange) -> None:
        """A player's chips changed outside a round (``RoundChanges``' chips watcher)."""
        group = self._groups.get(change.chat_id)
        if group is None or all(viewer.user_id != change.user_id for viewer in group.viewers):
            return
        group.chips.add(change.user_id)
        self._refresh(change.chat_id, group)

    def resync(self) -> None:
        """Changes may have been missed: read every watched group again."""
        for chat_id, group in self._groups.items():
            group.joined = True
            self._refresh(chat_id, group)

    async def close(self) -> None:
        """Close every viewer (their pages' streams end) and stop reading."""
        for group in self._groups.values():
            for viewer in group.viewers:
                viewer.close()
        self._groups.clear()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _refresh(self, chat_id: int, group: _Group) -> None:
        group.stale = True
        if group.reading:
            return  # the read under way goes round again
        group.reading = True
        task = asyncio.create_task(self._keep_read(chat_id, group), name=f"feed-{chat_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _keep_read(self, chat_id: int, group: _Group) -> None:
        """Read the group while it is stale and watched, offering each read to its viewers."""
        short = 0
        try:
            while group.stale and group.viewers:
                group.stale = group.joined = False
                viewers, heard = list(group.viewers), group.wanted
                chips, group.chips = group.chips, set()
                try:
                    async with self._reads:
                        snapshot = await self._read_table(chat_id, [v.user_id for v in viewers])
                except Exception:
                    log.exception("live feed: reading group %s failed", chat_id)
                    await asyncio.sleep(RETRY_SECONDS)
                    group.stale = True
                    group.chips |= chips
                    continue
                self.reads += 1
                self._offer(snapshot, viewers, group, chips)
                short = self._settle(snapshot.key, group, heard, short)
        finally:
            group.reading = False
            if not group.viewers and self._groups.get(chat_id) is group:
                del self._groups[chat_id]

    def _offer(
        self, snapshot: TableSnapshot, viewers: list[Viewer], group: _Group, chips: set[int]
    ) -> None:
        for viewer in viewers:
            if viewer in group.viewers:
                event = partial(self._render, snapshot, viewer.user_id)
                viewer.offer(snapshot.key, event, again=viewer.user_id in chips)

    def _settle(self, key: RoundKey, group: _Group, heard: RoundKey | None, short: int) -> int:
        """Whether the group must be read again after a read at ``key`` (``heard`` the
        newest change heard as it began): only if it fell short of a change heard, or a
        viewer joined or a player's chips changed meanwhile, not for changes it shows
        already. Returns the reads in a row that fell short of what was heard before they
        began (a notice of a state the database does not show: given up on after
        ``SHORT_READS``)."""
        if group.wanted is None or key >= group.wanted:
            group.wanted = key
            group.stale = group.joined or bool(group.chips)
            return 0
        if group.wanted != heard:
            group.stale = True  # a change came during the read
            return 0
        short += 1
        if short >= SHORT_READS:
            log.warning("live feed: group read at %s, short of %s heard", key, group.wanted)
            group.wanted = key
            return 0
        group.stale = True
        return short


def sse_event(event_id: str, name: str, data: str) -> bytes:
    """One Server-Sent Event: its ``id`` (a reconnecting page sends it back as
    ``Last-Event-ID``), its name and its data, on one line (JSON has no line breaks)."""
    return f"id: {event_id}\nevent: {name}\ndata: {data}\n\n".encode()

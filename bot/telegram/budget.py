"""Telegram's limits on what a bot sends: about 20 messages a minute in one group
(``SendBudget``, a sliding window per group) and about 30 a second overall (``SendRate``,
which lets the most urgent messages go first)."""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
from collections import deque
from collections.abc import Callable
from enum import IntEnum

from cachetools import TTLCache

#: Telegram's limit on messages a bot sends to one group a minute.
GROUP_SENDS_PER_MINUTE = 20
#: Telegram's limit on messages a bot sends a second, all chats together.
OVERALL_SENDS_PER_SECOND = 30.0
#: What the bucket of ``SendRate`` may hold beyond its size: float arithmetic on times
#: leaves a message's worth short by a hair after exactly its interval.
_ROUNDING = 1e-9
#: Sends a group's minute must still have for a show that can be done without (a new
#: board message where an edit would do, the dealer's cards turning over): what a
#: round's results and the next round's board need.
ROOM_KEPT_FOR_ROUNDS = 3
#: Groups whose recent sends are counted at once (a group quiet for a minute has none).
GROUPS_COUNTED = 100_000
#: The bot's budget is tight (``SendRate.tight``) once its last ``TIGHT_WINDOW_SECONDS``
#: used this share of its rate: past it, what can be done without (a new board where an
#: edit would do, a stake's confirmation the board shows, the dealer's cards turning over)
#: would make the next deadline's messages wait.
TIGHT_SHARE = 0.5
TIGHT_WINDOW_SECONDS = 2.0


class SendBudget:
    """Sends per chat within a sliding window: ``take`` one if fewer than ``limit`` went
    out in the last ``seconds``, else say how long until one may. A chat quiet for the
    whole window is forgotten."""

    def __init__(
        self, limit: int, seconds: float = 60.0, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit
        self.seconds = seconds
        self.clock = clock
        self._sent: TTLCache[int, deque[float]] = TTLCache(GROUPS_COUNTED, seconds, timer=clock)

    def __len__(self) -> int:
        return len(self._sent)

    def forget_quiet(self) -> None:
        """Forget the chats sent nothing for the whole window."""
        self._sent.expire()

    def wait(self, chat_id: int) -> float:
        """Seconds until the chat may be sent one more (0: now)."""
        now = self.clock()
        sent = self._sent.get(chat_id)
        if sent is None:
            return 0.0
        while sent and sent[0] <= now - self.seconds:
            sent.popleft()
        return 0.0 if len(sent) < self.limit else sent[0] + self.seconds - now

    def room(self, chat_id: int) -> int:
        """How many more the chat may be sent now."""
        if self.wait(chat_id) > 0:
            return 0
        sent = self._sent.get(chat_id)
        return self.limit - (len(sent) if sent is not None else 0)

    def spent_for(self, chat_id: int, seconds: float) -> None:
        """Count the chat's window as spent for ``seconds`` more (what others sent, as a
        count every worker shares says): no room until then (that count is asked again
        then). The sends counted already stay as they were."""
        now = self.clock()
        frees_at = now + seconds - self.seconds
        sent = self._sent.get(chat_id) or deque()
        kept = [moment for moment in sent if moment > frees_at]
        self._sent[chat_id] = deque(sorted([frees_at] * max(1, self.limit - len(kept)) + kept))

    def retime(self, chat_id: int, taken_at: float) -> None:
        """The send counted at ``taken_at`` reached the chat now: count it from now, as
        Telegram does (it waited for its turn, or was tried again)."""
        sent = self._sent.get(chat_id)
        if sent is None or taken_at not in sent:
            return
        sent.remove(taken_at)
        sent.append(self.clock())

    def take(self, chat_id: int) -> float:
        """Count one send to the chat now; when that was (its clock)."""
        sent = self._sent.get(chat_id) or deque()
        now = self.clock()
        sent.append(now)
        self._sent[chat_id] = sent  # (re)set: the entry lives a window past its last send
        return now


class Priority(IntEnum):
    """What goes first when the bot's overall rate is the limit: a round's results, then
    phase notices (a new board, a new phase edited in), then the last edit of an ended
    round's board (which takes away buttons that no longer work), then answers to people,
    then the bet lists' edits."""

    RESULTS = 0
    PHASE = 1
    CLOSING = 2
    ANSWER = 3
    EDIT = 4


class SendRate:
    """At most ``per_second`` Bot API messages a second from the whole bot (Telegram's
    ~30), handed out most urgent first (``Priority``), first come first served within a
    priority. Nothing is refused: a message waits for its turn.

    A leaky bucket holding ``burst`` messages (by default a second's worth), as
    aiolimiter's ``AsyncLimiter`` under python-telegram-bot's ``AIORateLimiter`` is: a
    burst (rounds of many groups ending together) goes out at once, the rate holds over
    time, and a dispatcher woken late by a busy event loop loses none of the rate (what
    drained meanwhile is there to use). The last ``reserve`` of the bucket is for what
    shows a deadline (``Priority.PHASE`` and more urgent): answers and edits that keep
    the bot at its rate never make a round's results or its next phase wait for room.
    The rate is ``tight`` while its recent turns used much of it.

    Written by hand: ``AsyncLimiter`` and ``asyncio.Semaphore`` serve waiters in arrival
    order only, and no maintained limiter we found orders waiters by priority.
    """

    def __init__(
        self,
        per_second: float = OVERALL_SENDS_PER_SECOND,
        *,
        burst: float | None = None,
        reserve: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval = 1.0 / per_second
        #: What the bucket holds: at least one message, else none could ever go.
        self.burst = max(1.0, per_second if burst is None else burst)
        #: What answers and edits may fill: a message at least.
        self.ordinary_room = max(1.0, self.burst - (self.burst / 3 if reserve is None else reserve))
        self.clock = clock
        self._level = 0.0  # what the bucket holds at ``_level_at``
        self._level_at = clock()
        self._waiting: list[tuple[int, int, float, asyncio.Future[None]]] = []
        #: What the messages waiting count for, by priority (cancelled ones included
        #: until they are skipped).
        self._waiting_cost = [0.0] * len(Priority)
        self._arrivals = itertools.count()
        self._dispatcher: asyncio.Task[None] | None = None
        #: Set when a message comes that goes before the one the dispatcher waits for.
        self._new_head = asyncio.Event()
        #: The turns given in the last ``TIGHT_WINDOW_SECONDS`` (when, cost) and their sum.
        self._given: deque[tuple[float, float]] = deque()
        self._given_cost = 0.0
        self._tight_cost = TIGHT_SHARE * per_second * TIGHT_WINDOW_SECONDS

    @property
    def tight(self) -> bool:
        """Whether the bot's budget is tight: the turns of the last
        ``TIGHT_WINDOW_SECONDS`` used ``TIGHT_SHARE`` of the rate or more. A message
        waiting a moment for its turn is not: one group's burst (a phase's board and its
        edits) would otherwise leave its confirmations to the board; a backlog is seen by
        ``wait_ahead``, which the callers ask too."""
        since = self.clock() - TIGHT_WINDOW_SECONDS
        given = self._given
        while given and given[0][0] <= since:
            self._given_cost -= given.popleft()[1]
        if not given:
            self._given_cost = 0.0  # no float drift left over
        return self._given_cost >= self._tight_cost - _ROUNDING

    @property
    def waiting(self) -> int:
        """Messages waiting for their turn (cancelled ones until they are skipped)."""
        return len(self._waiting)

    @property
    def backlog_seconds(self) -> float:
        """How long a message that comes now would wait, at the least (behind every
        message waiting)."""
        return self.wait_ahead(Priority.EDIT)

    def wait_ahead(self, priority: Priority) -> float:
        """How long a message of ``priority`` that comes now would wait, at the least:
        behind those waiting that go before it (more urgent, or as urgent and earlier)."""
        ahead = sum(self._waiting_cost[: priority + 1])
        overflow = self._drained() + ahead + 1.0 - self._room(priority)
        return max(0.0, overflow) * self.interval

    async def acquire(self, priority: Priority, cost: float = 1.0) -> None:
        """Wait for this message's turn (``cost``: what it counts for; an edit counts for
        less than a message sent)."""
        first = not self._waiting or priority < self._waiting[0][0]
        if first and self._drained() + cost <= self._room(priority) + _ROUNDING:
            self._give(cost)
            return
        turn = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (priority, next(self._arrivals), cost, turn))
        self._waiting_cost[priority] += cost
        if self._dispatcher is None or self._dispatcher.done():
            self._dispatcher = asyncio.get_running_loop().create_task(self._dispatch())
        elif self._waiting[0][3] is turn:
            self._new_head.set()
        await turn

    def _room(self, priority: Priority) -> float:
        return self.burst if priority <= Priority.PHASE else self.ordinary_room

    def _drained(self) -> float:
        """What the bucket holds now (updating it for what leaked since last asked)."""
        now = self.clock()
        self._level = max(0.0, self._level - (now - self._level_at) / self.interval)
        self._level_at = now
        return self._level

    async def _dispatch(self) -> None:
        while self._waiting:
            priority, _, cost, turn = self._waiting[0]
            if turn.done():  # skip those cancelled while waiting
                heapq.heappop(self._waiting)
                self._waiting_cost[priority] -= cost
                continue
            overflow = self._drained() + cost - self._room(Priority(priority))
            if overflow > _ROUNDING:
                self._new_head.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._new_head.wait(), overflow * self.interval)
                continue  # the room it waited for, or a more urgent message came
            heapq.heappop(self._waiting)
            self._waiting_cost[priority] -= cost
            self._give(cost)
            turn.set_result(None)

    def _give(self, cost: float) -> None:
        """A message's turn came: it fills the bucket and counts as a recent turn."""
        self._level += cost
        self._given.append((self._level_at, cost))
        self._given_cost += cost

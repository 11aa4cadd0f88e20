"""Answers waiting for their group's next send (``Answer``), folded into messages of
whole answers (``batches``), and kept in the database while they wait
(``AnswerKeeping``), so that a worker that dies loses none of them: another worker, or
the restarted one, sends them once its claim on them ran out (``bot.service.answers``).

An answer that goes out at once is not written: only one that has to wait for the
group's budget, or whose send is slow or failed, is. An update is confirmed to Telegram
only once the answers it left waiting are written (``AnswerKeeping.written``). A write
that fails (the database is down) leaves the answer in memory, to be sent all the same
unless the process dies too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

from bot.service.game import KeptRecord, NewAnswer
from bot.telegram.messenger import MAX_MESSAGE_LENGTH

log = logging.getLogger(__name__)

#: How often the answers this worker keeps have their claim renewed (a third of it).
RENEW_SECONDS = 3.0
#: How many answers had been given to ``AnswerKeeping.keep`` when the running task (an
#: update's handling) last gave one: what that task's ``written`` waits for.
_kept_through: ContextVar[int] = ContextVar("niuniu_kept_through", default=0)


@dataclass(slots=True)
class Answer:
    """An answer waiting for its chat's next send: to whom (as shown), in reply to what
    (0: nothing), since when (the replies' clock); its row once kept (``kept_id``), and
    whether it is done with (sent, or given up), which a row written later forgets."""

    name: str
    text: str
    reply_to: int
    since: float = 0.0
    kept_id: int | None = None
    done: bool = False

    @property
    def line(self) -> str:
        """The answer as a line of a combined message, led by whom it answers."""
        return f"<b>{self.name}</b>: {self.text}" if self.name else self.text


def combined(answers: list[Answer]) -> str:
    """Several answers as one message: a line each, led by whom it answers."""
    return "\n".join(answer.line for answer in answers)


def batches(answers: list[Answer], limit: int = MAX_MESSAGE_LENGTH) -> list[list[Answer]]:
    """The answers in messages of at most ``limit`` characters each, in order (an answer
    longer than that alone in its own): each message is sent, or kept, whole."""
    found: list[list[Answer]] = []
    size = 0
    for answer in answers:
        length = len(answer.line) + 1
        if found and size + length <= limit + 1:
            found[-1].append(answer)
            size += length
        else:
            found.append([answer])
            size = length
    return found


class AnswerStore(Protocol):
    """Where answers are kept (``bot.service.answers.KeptAnswers``)."""

    async def keep(self, answers: Sequence[NewAnswer]) -> list[int]: ...

    async def sent(self, ids: Sequence[int]) -> None: ...

    async def renew(self, ids: Sequence[int]) -> None: ...

    async def take_over(self) -> list[tuple[KeptRecord, float]]: ...


class AnswerKeeping:
    """Writes waiting answers to ``store`` (those that come together in one write),
    forgets them once done with, renews this worker's claim on them, and takes over the
    answers whose claim ran out. Without a store, it keeps nothing."""

    def __init__(
        self,
        store: AnswerStore | None,
        *,
        renew_seconds: float = RENEW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.renew_seconds = renew_seconds
        self.clock = clock
        #: The answers kept and held by this worker, by row id.
        self._held: dict[int, Answer] = {}
        #: Answers to write, with their chats, and the task writing them.
        self._to_keep: list[tuple[int, Answer]] = []
        self._writing: asyncio.Task[None] | None = None
        #: Answers given to ``keep`` so far, those of them written (or whose write
        #: failed), and who waits until a number of them is (``written``).
        self._queued = 0
        self._through = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._renewed_at = clock()
        self._tasks: set[asyncio.Task[None]] = set()
        #: Rows of answers done with, to forget, and the task forgetting them.
        self._to_forget: list[int] = []
        self._forgetting: asyncio.Task[None] | None = None

    @property
    def held(self) -> int:
        """Answers kept and held by this worker."""
        return len(self._held)

    def keep(self, chat_id: int, answer: Answer) -> None:
        """Write ``answer`` soon (with the others that come meanwhile), unless it is kept
        already or done with by then."""
        if self.store is None or answer.kept_id is not None:
            return
        self._to_keep.append((chat_id, answer))
        self._queued += 1
        _kept_through.set(self._queued)
        if self._writing is None or self._writing.done():
            self._writing = asyncio.get_running_loop().create_task(self._write())

    async def written(self) -> None:
        """Wait until the answers this task (an update's handling) gave to ``keep`` are
        written (or their write failed), not those given later nor by other tasks: an
        update is confirmed to Telegram only then, so that a worker that dies before has
        the update sent again rather than its answer lost. An update that kept none (a
        button's press, answered by a toast) holds its chat's turn for no one's write."""
        through = _kept_through.get()
        if self._through >= through:
            return
        future = asyncio.get_running_loop().create_future()
        self._waiters.append((through, future))
        await future

    def done(self, answers: Sequence[Answer]) -> None:
        """These answers went out (or are given up): forget their rows."""
        ids = []
        for answer in answers:
            answer.done = True
            if answer.kept_id is not None:
                ids.append(answer.kept_id)
                self._held.pop(answer.kept_id, None)
        if not ids:
            return
        self._to_forget.extend(ids)
        if self._forgetting is None or self._forgetting.done():
            self._forgetting = asyncio.get_running_loop().create_task(self._forget_all())
            self._in_background_task(self._forgetting)

    async def renew(self) -> None:
        """Renew this worker's claim on the answers it holds, if it is time to."""
        now = self.clock()
        if self.store is None or not self._held or now - self._renewed_at < self.renew_seconds:
            return
        self._renewed_at = now
        await self.store.renew(list(self._held))

    async def take_over(self) -> list[tuple[int, Answer]]:
        """The answers whose claim ran out, now held by this worker: (chat id, answer),
        oldest first; each waited as long as it says (``since``)."""
        if self.store is None:
            return []
        found = []
        now = self.clock()
        for record, waited in await self.store.take_over():
            if record.id in self._held:  # this worker's own, whose renewal came late
                continue
            answer = Answer(record.name, record.text, record.reply_to, now - waited, record.id)
            self._held[record.id] = answer
            found.append((record.chat_id, answer))
        return found

    async def drain(self, timeout: float) -> None:
        """Wait for the writes on their way (before stopping)."""
        busy = [task for task in (self._writing, *self._tasks) if task is not None]
        if busy:
            await asyncio.wait(busy, timeout=timeout)

    async def _write(self) -> None:
        assert self.store is not None
        while self._to_keep:
            taken, self._to_keep = self._to_keep, []
            try:
                await self._write_these(taken)
            finally:
                self._through += len(taken)
                self._wake_waiters()

    def _wake_waiters(self) -> None:
        waiting = []
        for through, future in self._waiters:
            if through <= self._through:
                if not future.done():
                    future.set_result(None)
            else:
                waiting.append((through, future))
        self._waiters = waiting

    async def _write_these(self, taken: list[tuple[int, Answer]]) -> None:
        assert self.store is not None
        waiting = [(chat_id, answer) for chat_id, answer in taken if not answer.done]
        if not waiting:
            return
        new = [NewAnswer(chat_id, a.name, a.text, a.reply_to) for chat_id, a in waiting]
        try:
            ids = await self.store.keep(new)
        except Exception as error:  # the database is down: kept in memory only
            log.warning("%d answers not kept in the database: %s", len(new), error)
            return
        sent_meanwhile = []
        for (_, answer), row_id in zip(waiting, ids, strict=True):
            if answer.done:
                sent_meanwhile.append(row_id)
            else:
                answer.kept_id = row_id
                self._held[row_id] = answer
        if sent_meanwhile:
            await self._forget(sent_meanwhile)

    async def _forget_all(self) -> None:
        """Forget the rows of the answers done with, those that come meanwhile in one
        write: under load a group's answers go out a message at a time, and a write each
        took the database's one writer (SQLite) as often as the bot sent."""
        while self._to_forget:
            taken, self._to_forget = self._to_forget, []
            await self._forget(taken)

    async def _forget(self, ids: list[int]) -> None:
        assert self.store is not None
        try:
            await self.store.sent(ids)
        except Exception as error:  # left to be sent again once the claim ran out
            log.warning("%d sent answers not forgotten in the database: %s", len(ids), error)

    def _in_background_task(self, task: asyncio.Task[None]) -> None:
        self._tasks.add(task)  # the loop keeps only weak references to tasks
        task.add_done_callback(self._tasks.discard)

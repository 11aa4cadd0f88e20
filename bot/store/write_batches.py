"""Group commit on SQLite: the hot path's transactions that queue up while the writer is
busy are written together, in one transaction of the writer's thread.

Under load a command's own SQL costs less than getting to the writer: the process's write
turn, a hop to the writer's thread and back (the GIL changes hands each way), BEGIN and
COMMIT. So the commands waiting for the writer go in one batch: one turn, one hop, one
commit, and a savepoint per command, so that a command the engine refuses or that finds
its round changed undoes only its own writes. Each caller hears of its own command only
once the batch committed, exactly as if it had run alone; if the commit fails, every
command of the batch fails and is retried like any transient error.

A batch takes urgent work (a deadline's advance, a board's lease) first and holds at most
``BATCH_MOST`` commands, so that a deadline waits behind one short batch, never a flood;
ordinary commands ride along with urgent work only while no writer of the general path
waits for the turn as ordinary work (else, while urgent work keeps coming, such a writer
would wait behind every command queued after it). A command that finds nothing else
writing or waiting (the write turn free) is written alone, in its
caller's task: no batch task to start and wake, so one command at a time costs only what
the command costs.

Written by hand: no driver or library batches independent callers' transactions.
"""

from __future__ import annotations

import asyncio
import contextvars
import sqlite3
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from bot.priority import PriorityTurn, is_urgent

_T = TypeVar("_T")

#: Commands written in one transaction at most: a batch costs well under a millisecond
#: a command, so a deadline behind a full one waits a few tens of milliseconds.
BATCH_MOST = 64

Body = Callable[[sqlite3.Connection], Any]
_Waiting = tuple[Body, "asyncio.Future[Any]"]


def run_each(connection: sqlite3.Connection, begin: str, bodies: list[Body]) -> list[Any]:
    """Run ``bodies`` in one transaction, each inside a savepoint; what each returned, or
    the exception it raised (its writes undone). A failure of the transaction itself (the
    BEGIN, a savepoint, the COMMIT) rolls everything back and raises."""
    if len(bodies) == 1:
        return [_run_alone(connection, begin, bodies[0])]
    outcomes: list[Any] = []
    connection.execute(begin)
    try:
        for body in bodies:
            connection.execute("SAVEPOINT command")
            try:
                outcomes.append(body(connection))
            except Exception as error:  # the command's own refusal or conflict
                connection.execute("ROLLBACK TO command")
                outcomes.append(_Raised(error))
            connection.execute("RELEASE command")
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return outcomes


def _run_alone(connection: sqlite3.Connection, begin: str, body: Body) -> Any:
    """One body in a transaction of its own: its refusal rolls the transaction back, so it
    needs no savepoint (two statements fewer than a body of a batch)."""
    connection.execute(begin)
    try:
        outcome = body(connection)
    except Exception as error:  # the command's own refusal or conflict
        connection.execute("ROLLBACK")
        return _Raised(error)
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    try:
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return outcome


class _Raised:
    """What a body raised, told apart from what a body returned."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


class WriteBatches:
    """Queues hot-path transactions and writes those that wait together (see the module).

    ``thread_run`` runs a function of the writer's connection on its thread (the
    ``SqliteThread``'s ``run_bare``); ``write_turn`` is the process's SQLite write turn,
    which the general path takes too: while someone holds or awaits it, a command
    queues, to be written with those that come meanwhile.
    """

    def __init__(
        self,
        thread_run: Callable[[Body], Any],
        write_turn: PriorityTurn,
        begin: str = "BEGIN IMMEDIATE",
        *,
        most: int = BATCH_MOST,
    ) -> None:
        self.thread_run = thread_run
        self.write_turn = write_turn
        self.begin = begin
        self.most = most
        self._urgent: deque[_Waiting] = deque()
        self._ordinary: deque[_Waiting] = deque()
        self._writing: asyncio.Task[None] | None = None
        #: A command being written alone, in its caller's task (``_write_alone``).
        self._alone = False
        #: Batches written and commands in them, for the benches.
        self.batches = 0
        self.commands = 0

    async def run(self, body: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``body(connection)`` in a transaction of the writer (perhaps with others');
        its result once that committed, or what it raised (its writes undone)."""
        if self._writing is None and not self._alone and not self.write_turn.locked():
            return await self._write_alone(body)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        (self._urgent if is_urgent() else self._ordinary).append((body, future))
        self._start_writing()
        result: _T = await future
        return result

    async def _write_alone(self, body: Callable[[sqlite3.Connection], _T]) -> _T:
        """A command while nothing else writes: written in its caller's task, a batch of
        one without the batch's task and future. Commands that come meanwhile queue up
        and are written together once it is done.

        The turn is taken and given back by hand, not with ``async with``: the two
        context managers cost as much as a tenth of a bet's own work on the event loop."""
        self._alone = True
        try:
            await self.write_turn.acquire(is_urgent())
            try:
                outcome = await self.thread_run(
                    lambda connection: _run_alone(connection, self.begin, body)
                )
            finally:
                self.write_turn.release()
        finally:
            self._alone = False
            self._start_writing()
        self.batches += 1
        self.commands += 1
        if isinstance(outcome, _Raised):
            raise outcome.error
        result: _T = outcome
        return result

    def _start_writing(self) -> None:
        if self._writing is None and not self._alone and (self._urgent or self._ordinary):
            # In a context of its own (nothing of whoever happened to start it): it takes
            # the write turn as urgent only while urgent work waits.
            self._writing = asyncio.get_running_loop().create_task(
                self._write_while_waiting(), context=contextvars.Context()
            )

    def _take(self, ordinary: bool) -> list[_Waiting]:
        batch: list[_Waiting] = []
        for queue in (self._urgent, self._ordinary) if ordinary else (self._urgent,):
            while queue and len(batch) < self.most:
                waiting = queue.popleft()
                if not waiting[1].done():  # its caller gave up before its turn
                    batch.append(waiting)
        return batch

    async def _write_while_waiting(self) -> None:
        try:
            while self._urgent or self._ordinary:
                urgent = bool(self._urgent)
                async with self.write_turn.turn(urgent):
                    # A turn taken as urgent went before the general path's writers that
                    # wait as ordinary work: the commands waiting as ordinary work do not
                    # ride along past them (else, while urgent work keeps coming, a
                    # group's /newround waited for seconds behind the bets).
                    batch = self._take(not urgent or not self.write_turn.ordinary_waiting)
                    if batch:
                        await self._write(batch)
        finally:
            self._writing = None

    async def _write(self, batch: list[_Waiting]) -> None:
        bodies = [body for body, _ in batch]
        try:
            outcomes = await self.thread_run(
                lambda connection: run_each(connection, self.begin, bodies)
            )
        except Exception as error:
            for _, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        except BaseException:  # the writing itself was cancelled: so are its commands
            for _, future in batch:
                future.cancel()
            raise
        self.batches += 1
        self.commands += len(batch)
        for (_, future), outcome in zip(batch, outcomes, strict=True):
            if future.done():
                continue
            if isinstance(outcome, _Raised):
                future.set_exception(outcome.error)
            else:
                future.set_result(outcome)

"""Deadlines, the sweep and recovery: what is overdue is found by one cheap read and
applied as a round command (``RoundCommandUseCases.advance``) or a start
(``RoundStartUseCases.start_due_round``), so a duplicate timer or a second worker's sweep
changes nothing twice."""

from __future__ import annotations

from collections.abc import Callable

from bot.engine.round import Round
from bot.service.records import CommandResult
from bot.service.round_commands import RoundCommandUseCases
from bot.service.round_starts import RoundStartUseCases
from bot.store.unit_of_work import Store


class RoundDeadlineUseCases:
    """Rounds' deadlines and the tables' pauses: found, applied by the sweep, and after a
    start recovered."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Callable[[], int],
        starts: RoundStartUseCases,
        commands: RoundCommandUseCases,
    ) -> None:
        self.store = store
        self.clock = clock
        self.starts = starts
        self.commands = commands

    async def due_rounds(self) -> list[tuple[int, int]]:
        """Open rounds whose deadline has passed: (round id, chat id), most overdue first."""
        return await self.store.due_lookup.rounds(self.clock())

    async def due_chat_ids(self) -> list[int]:
        """Open tables whose pause after a settled round is over."""
        return await self.store.due_lookup.chat_ids(self.clock())

    async def open_rounds(self) -> list[Round]:
        """Every open round (to reschedule their deadlines after a start), in a fixed number
        of statements however many there are."""
        async with self.store.reading() as uow:
            return await uow.queries.open_rounds()

    async def sweep(self) -> list[CommandResult]:
        """Advance every overdue round and start the rounds whose pause is over."""
        results = [await self.commands.advance(round_id) for round_id, _ in await self.due_rounds()]
        results += [
            await self.starts.start_due_round(chat_id) for chat_id in await self.due_chat_ids()
        ]
        return [result for result in results if result.events]

    async def recover(self) -> tuple[list[CommandResult], list[Round]]:
        """After a start: finish what is overdue, then list the open rounds to schedule."""
        results = await self.sweep()
        return results, await self.open_rounds()

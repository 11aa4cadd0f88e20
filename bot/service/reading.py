"""Read-only use cases: rounds, history, results, shoes, the audit log and names (and the
readiness probe, whose one row is the only thing here that writes)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.engine.round import Phase, Round, RoundSettled, RoundVoided
from bot.rules.ruleset import LEGACY_NAMES
from bot.service.records import (
    AuditLine,
    ParticipantResult,
    Person,
    RoundSummary,
    ShoeInfo,
    VitalSigns,
)
from bot.store.console import RoundFilter, RoundRowView
from bot.store.db import Database
from bot.store.round_commands import RoundOnBoard as RoundOnBoard
from bot.store.unit_of_work import Store


@dataclass(frozen=True, slots=True)
class PlayerRound:
    """A settled round as one player took part in it: the round, and their line of its
    results (``ParticipantResult``: their role, stake, result and net)."""

    round: RoundRowView
    line: ParticipantResult


class ReadingUseCases:
    """What the bot shows; nothing here writes but the readiness probe."""

    def __init__(self, store: Store, *, db: Database, clock: Callable[[], int]) -> None:
        self.store = store
        self.db = db
        self.clock = clock

    async def round(self, round_id: int) -> Round | None:
        """A round as stored (its seed is secret while it is open: callers must not show it)."""
        return await self.store.round_commands.whole(round_id)

    async def round_on_board(self, round_id: int) -> RoundOnBoard | None:
        """A round as stored, as ``round`` reads it, with its board's message id as recorded
        in the same read."""
        return await self.store.round_commands.on_board(round_id)

    async def current_round(self, chat_id: int) -> Round | None:
        """The chat's open round, if any, with every bet."""
        async with self.store.reading() as uow:
            return await uow.rounds.load_open(chat_id, lock=False)

    async def current_phase(self, chat_id: int) -> Phase | None:
        """The phase of the chat's open round, if any (a cheap look: no bets loaded)."""
        async with self.store.reading() as uow:
            phase = await uow.queries.open_phase(chat_id)
        return None if phase is None else Phase(phase)

    async def shoe(self, shoe_id: int) -> ShoeInfo | None:
        """A shoe as the public may see it: its seed only once it has been replaced."""
        async with self.store.reading() as uow:
            shoe = await uow.shoes.get(shoe_id)
        if shoe is None:
            return None
        seed = shoe.seed if shoe.replaced_at_ms is not None else None
        return ShoeInfo(shoe.id, shoe.chat_id, shoe.decks, shoe.commitment, shoe.dealt, seed)

    async def history(self, chat_id: int, limit: int = 10) -> list[RoundSummary]:
        """The chat's latest rounds, newest first."""
        async with self.store.reading() as uow:
            return await uow.queries.history(chat_id, limit)

    async def ending(self, state: Round) -> RoundSettled | RoundVoided:
        """What ended a finished round (``state`` as ``round`` read it), rebuilt from its
        stored outcomes, as the results the group got were made from it."""
        assert not state.phase.is_open, "an open round has no ending"
        async with self.store.reading() as uow:
            return await uow.rounds.ending(state)

    async def player_rounds(
        self, chat_id: int, user_id: int, *, before_id: int | None = None, limit: int = 10
    ) -> list[PlayerRound]:
        """A player's own settled rounds in a group, newest first, ``limit`` of them with
        an id below ``before_id``: the console's walk of a player's rounds, and each
        round's results (the player's line of them)."""
        where = RoundFilter(chat_id=chat_id, user_id=user_id)
        found = []
        async with self.store.reading() as uow:
            rounds = await uow.console.rounds(where, before_id=before_id, limit=limit)
            for shown in rounds:
                lines = await uow.queries.results(shown.id)
                found += [PlayerRound(shown, line) for line in lines if line.user_id == user_id]
        return found

    async def results(self, round_id: int) -> list[ParticipantResult]:
        """Each participant's line of a settled round: bettors in bet order, then the dealer."""
        async with self.store.reading() as uow:
            return await uow.queries.results(round_id)

    async def audit_log(self, chat_id: int, limit: int = 10) -> list[AuditLine]:
        """The group's latest admin actions, newest first."""
        async with self.store.reading() as uow:
            return await uow.queries.audit_log(chat_id, limit)

    async def names(self, user_ids: Sequence[int]) -> dict[int, Person]:
        """What the bot knows of these users."""
        async with self.store.reading() as uow:
            return {row[0]: Person(*row) for row in await uow.queries.names(user_ids)}

    async def find_user(self, username: str) -> Person | None:
        """A user the bot has seen, by @username (case-insensitive)."""
        async with self.store.reading() as uow:
            found = await uow.queries.find_user(username.removeprefix("@"))
        return None if found is None else Person(*found)

    async def database_refuses_writes(self) -> str | None:
        """Write to the database's probe row: why it refused the write (a short name),
        None when it took it; raises whatever stops it from answering (the caller bounds
        how long it waits: a readiness probe)."""
        return await self.db.write_refused(self.clock())

    async def vital_signs(self) -> VitalSigns:
        """Open rounds by phase and game, and the chips held in every group (metrics)."""
        async with self.store.reading() as uow:
            counts = await uow.queries.vital_counts()
        rounds: dict[tuple[Phase, str], int] = {}
        for (phase, ruleset), count in counts.open_rounds.items():
            key = (Phase(phase), LEGACY_NAMES.get(ruleset, ruleset))
            rounds[key] = rounds.get(key, 0) + count
        return VitalSigns(rounds, counts.held_cents)

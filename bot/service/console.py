"""The console's use cases: what operators and group admins read in the browser, the one
setting change they make there, the one-time sign-in links they redeem and the sessions
those start (kept on the server, so that signing out ends them).

Reads go through ``bot.store.console`` (indexed, paged); a settings change goes through
``TableUseCases.change_setting``, the path ``/set`` takes, so the console validates and
audits exactly as the bot does. Who may see which group is the caller's to decide (the
web layer asks Telegram as the bot does); every read here takes the groups it may show.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.engine.round import Round
from bot.engine.settings import Settings
from bot.engine.verification import RevealedShoe, Verification, verify_round
from bot.service.game import (
    GameService,
    Person,
    SettingChange,
    StatementLine,
    UnconfirmedChange,
)
from bot.service.records import ParticipantResult
from bot.store.console import DAY_MS as DAY_MS
from bot.store.console import (
    AuditRow,
    Counts,
    DayTotals,
    GroupRow,
    PostingLine,
    RoundRowView,
)
from bot.store.console import RoundFilter as RoundFilter
from bot.store.ledger import Balance

#: The periods the overview sums, in days ending today (UTC).
PERIODS = (1, 7, 30)


@dataclass(frozen=True, slots=True)
class Overview:
    """The overview page's figures."""

    counts: Counts
    groups: list[GroupRow]
    #: Each of ``PERIODS`` summed: days -> totals (``day`` is the period's first day).
    periods: dict[int, DayTotals]
    #: The last 30 days, one entry per day (zeros where nothing was settled), oldest first.
    days: list[DayTotals]


@dataclass(frozen=True, slots=True)
class ShoeState:
    """A group's current shoe as the console may show it: never its seed."""

    id: int
    decks: int
    commitment: str
    dealt: int


@dataclass(frozen=True, slots=True)
class GroupState:
    """A group's page: its settings, the group's own accounts and its shoe."""

    group: GroupRow
    settings: Settings
    balances: dict[str, int]
    shoe: ShoeState | None
    open_phase: str | None


@dataclass(frozen=True, slots=True)
class RoundDetail:
    """A round's page. ``verification`` is ``None`` while the round is open (its seed is
    secret until it ends)."""

    round: Round
    results: list[ParticipantResult]
    postings: list[PostingLine]
    verification: Verification | None


def _sum_days(days: Sequence[DayTotals], first_day: int) -> DayTotals:
    chosen = [day for day in days if day.day >= first_day]
    return DayTotals(
        first_day,
        sum(d.rounds for d in chosen),
        sum(d.turnover for d in chosen),
        sum(d.rake for d in chosen),
        sum(d.rebates for d in chosen),
        sum(d.house for d in chosen),
        sum(d.bank for d in chosen),
    )


class ConsoleService:
    """The console's use cases over the bot's service (see the module's docstring)."""

    def __init__(self, game: GameService) -> None:
        self.game = game
        self.store = game.store

    async def groups_touched_by(self, user_id: int) -> list[int]:
        """Groups where a user has chips or acted as an admin (where to ask if they are)."""
        async with self.store.reading() as uow:
            return await uow.console.groups_touched_by(user_id)

    async def groups(self, chat_ids: Sequence[int] | None) -> list[GroupRow]:
        """Groups by title (all of them for ``None``)."""
        async with self.store.reading() as uow:
            return await uow.console.groups(chat_ids)

    async def overview(self, chat_ids: Sequence[int] | None, *, now_ms: int) -> Overview:
        """Counts now and money moved today, in 7 and in 30 days (UTC days)."""
        today = now_ms // DAY_MS
        first = today - max(PERIODS) + 1
        async with self.store.reading() as uow:
            counts = await uow.console.counts(chat_ids)
            groups = await uow.console.groups(chat_ids)
            found = await uow.console.daily_totals(
                chat_ids, from_ms=first * DAY_MS, until_ms=(today + 1) * DAY_MS
            )
        by_day = {d.day: d for d in found}
        days = [
            by_day.get(day, DayTotals(day, 0, 0, 0, 0, 0, 0)) for day in range(first, today + 1)
        ]
        periods = {n: _sum_days(days, today - n + 1) for n in PERIODS}
        return Overview(counts, groups, periods, days)

    async def group(self, chat_id: int) -> GroupState | None:
        """A group's settings, accounts and shoe; ``None`` if the bot has no such group."""
        async with self.store.reading() as uow:
            found = await uow.console.groups([chat_id])
            if not found:
                return None
            balances = await uow.console.account_balances(chat_id)
            shoe = await uow.shoes.current(chat_id, lock=False)
            phase = await uow.queries.open_phase(chat_id)
        settings = await self.game.settings(chat_id)
        shown = None
        if shoe is not None:  # its seed stays out: it is secret while the shoe is in use
            shown = ShoeState(shoe.id, shoe.decks, shoe.commitment, shoe.dealt)
        return GroupState(found[0], settings, balances, shown, phase)

    async def audit(self, chat_id: int, *, before_id: int | None, limit: int) -> list[AuditRow]:
        """A page of the group's audit log, newest first."""
        async with self.store.reading() as uow:
            return await uow.console.audit(chat_id, before_id=before_id, limit=limit)

    async def rounds(
        self, where: RoundFilter, *, before_id: int | None, limit: int
    ) -> list[RoundRowView]:
        """A page of rounds, newest first."""
        async with self.store.reading() as uow:
            return await uow.console.rounds(where, before_id=before_id, limit=limit)

    async def round_detail(self, round_id: int) -> RoundDetail | None:
        """A round with its results, postings and, once it ended, its verification."""
        state = await self.game.round(round_id)
        if state is None:
            return None
        async with self.store.reading() as uow:
            results = await uow.queries.results(round_id)
            postings = await uow.console.round_postings(round_id)
        verification = None
        if not state.phase.is_open:
            revealed = None
            if state.shoe is not None:
                shoe = await self.game.shoe(state.shoe.id)
                if shoe is not None and shoe.seed is not None:
                    revealed = RevealedShoe(shoe.seed, shoe.decks)
            verification = verify_round(state, revealed)
        return RoundDetail(state, results, postings, verification)

    async def balances(
        self, user_id: int, chat_ids: Sequence[int] | None
    ) -> list[tuple[int, str, Balance]]:
        """A player's chips in each group shown: (chat id, title, balance)."""
        async with self.store.reading() as uow:
            found = await uow.queries.balances_everywhere(user_id)
        return [entry for entry in found if chat_ids is None or entry[0] in chat_ids]

    async def statement(
        self, chat_id: int, user_id: int, *, before: int | None, limit: int
    ) -> list[StatementLine]:
        """A page of a player's statement in a group, newest first."""
        async with self.store.reading() as uow:
            return await uow.queries.statement(chat_id, user_id, limit, before=before)

    async def ledger(self, chat_id: int, *, after_id: int | None, limit: int) -> list[PostingLine]:
        """The postings of up to ``limit`` of a group's transactions after ``after_id``."""
        async with self.store.reading() as uow:
            return await uow.console.ledger(chat_id, after_id=after_id, limit=limit)

    async def names(self, user_ids: Sequence[int]) -> dict[int, Person]:
        """What the bot knows of these users."""
        return await self.game.names(user_ids)

    async def change_setting(
        self, chat_id: int, actor: Person, key: str, value: str, *, confirmed: bool = False
    ) -> SettingChange | UnconfirmedChange | None:
        """Change one setting as ``/set`` does (same validation, same audit line, the same
        confirmation asked for a change of the house's edge: ``UnconfirmedChange``);
        ``GameError("bad_setting.<reason>")`` for a bad key or value."""
        return await self.game.change_setting(chat_id, actor, key, value, confirmed=confirmed)

    async def claim_link(
        self, nonce: str, *, user_id: int, now_ms: int, expires_at_ms: int
    ) -> bool:
        """Mark a one-time link used; ``False`` if it was used before."""
        async with self.store.writing() as uow:
            return await uow.console_links.claim(
                nonce, user_id=user_id, now_ms=now_ms, expires_at_ms=expires_at_ms
            )

    async def start_session(
        self, session_id: str, *, user_id: int, now_ms: int, expires_at_ms: int
    ) -> None:
        """Record a session signed in (it signs in until it ends or expires)."""
        async with self.store.writing() as uow:
            await uow.console_sessions.start(
                session_id, user_id=user_id, now_ms=now_ms, expires_at_ms=expires_at_ms
            )

    async def session_live(self, session_id: str, *, user_id: int, now_ms: int) -> bool:
        """Whether a session of ``user_id`` is signed in still."""
        async with self.store.reading() as uow:
            return await uow.console_sessions.is_live(session_id, user_id=user_id, now_ms=now_ms)

    async def live_sessions(self, user_id: int, *, now_ms: int) -> int:
        """How many sessions of ``user_id`` are signed in."""
        async with self.store.reading() as uow:
            return await uow.console_sessions.live_count(user_id, now_ms=now_ms)

    async def end_session(self, session_id: str) -> None:
        """Sign one session out."""
        async with self.store.writing() as uow:
            await uow.console_sessions.end(session_id)

    async def end_sessions(self, user_id: int, *, now_ms: int) -> int:
        """Sign every session of ``user_id`` out; how many there were."""
        async with self.store.writing() as uow:
            return await uow.console_sessions.end_all(user_id, now_ms=now_ms)

"""The console's reads (what operators and group admins look at in the browser) and the
record of one-time sign-in links already used.

Read-only but for ``ConsoleLinkUses``. Lists are paged by keyset (``before`` an id, newest
first), each through an index (migration 0008), so a page costs the same at 100,000 rounds
as at ten. ``chat_ids`` narrows a read to the groups the viewer may see; ``None`` means
every group (an operator).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, func, select, union
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from bot.store.db import dialect_insert
from bot.store.models import (
    Account,
    AuditEntry,
    Chat,
    ConsoleLinkUse,
    LedgerTransaction,
    OutcomeRow,
    RoundRow,
)
from bot.store.models import Posting as PostingRow
from bot.store.round_writes import DEALER_ROLES
from bot.store.rounds import OPEN_PHASES

DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class GroupRow:
    """A group as the console lists it."""

    id: int
    title: str
    is_open: bool
    settings: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Counts:
    """How big the visible part of the bot is now."""

    groups: int
    open_rounds: int
    players: int


@dataclass(frozen=True, slots=True)
class DayTotals:
    """Money moved on one UTC day (``day`` is days since the epoch), in cents.

    ``turnover`` is the players' stakes of rounds settled that day; ``rake`` and
    ``rebates`` their outcomes' sums; ``house`` what the house account gained from
    settlements (rake less rebates plus dealers' fees) and ``bank`` what the group's bank
    gained or lost dealing."""

    day: int
    rounds: int
    turnover: int
    rake: int
    rebates: int
    house: int
    bank: int

    @property
    def fees(self) -> int:
        """Dealers' fees: what the house gained beyond rake less rebates."""
        return self.house - self.rake + self.rebates


@dataclass(frozen=True, slots=True)
class RoundFilter:
    """Which rounds a list shows; ``None`` leaves a criterion out. Times are ms."""

    chat_ids: Sequence[int] | None = None
    chat_id: int | None = None
    user_id: int | None = None
    ruleset: str | None = None
    started_from_ms: int | None = None
    started_before_ms: int | None = None


@dataclass(frozen=True, slots=True)
class RoundRowView:
    """A round in a list."""

    id: int
    chat_id: int
    phase: str
    ruleset: str
    dealer_id: int | None
    pool: int
    bet_count: int
    started_at_ms: int
    ended_at_ms: int | None


@dataclass(frozen=True, slots=True)
class PostingLine:
    """One posting with its transaction: what a round's or a group's ledger shows."""

    transaction_id: int
    kind: str
    round_id: int | None
    created_at_ms: int
    memo: str
    account_kind: str
    user_id: int
    amount: int


@dataclass(frozen=True, slots=True)
class AuditRow:
    """An admin action with its id (the key of the next page)."""

    id: int
    actor_id: int
    action: str
    details: dict[str, Any]
    created_at_ms: int


def _in_groups(column: Any, chat_ids: Sequence[int] | None) -> list[ColumnElement[bool]]:
    return [] if chat_ids is None else [column.in_(list(chat_ids))]


_POSTING_COLUMNS = (
    LedgerTransaction.id,
    LedgerTransaction.kind,
    LedgerTransaction.round_id,
    LedgerTransaction.created_at_ms,
    LedgerTransaction.memo,
    Account.kind,
    Account.user_id,
    PostingRow.amount,
)


class ConsoleQueries:
    """The console's reads in one unit of work (see the module's docstring)."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def groups(self, chat_ids: Sequence[int] | None) -> list[GroupRow]:
        """Groups (chats with a table), by title."""
        rows = await self.session.execute(
            select(Chat.id, Chat.title, Chat.is_open, Chat.settings)
            .where(Chat.is_group.is_(True), *_in_groups(Chat.id, chat_ids))
            .order_by(Chat.title, Chat.id)
        )
        return [GroupRow(*row) for row in rows.tuples()]

    async def groups_touched_by(self, user_id: int) -> list[int]:
        """Groups where a user has chips or did an admin action: where to ask whether they
        administer it."""
        rows = await self.session.scalars(
            union(
                select(Account.chat_id).where(Account.user_id == user_id),
                select(AuditEntry.chat_id).where(AuditEntry.actor_id == user_id),
            )
        )
        return sorted(rows)

    async def counts(self, chat_ids: Sequence[int] | None) -> Counts:
        """Groups, open rounds and players (with an account) now."""
        groups = await self.session.scalar(
            select(func.count())
            .select_from(Chat)
            .where(Chat.is_group.is_(True), *_in_groups(Chat.id, chat_ids))
        )
        open_rounds = await self.session.scalar(
            select(func.count())
            .select_from(RoundRow)
            .where(RoundRow.phase.in_(OPEN_PHASES), *_in_groups(RoundRow.chat_id, chat_ids))
        )
        players = await self.session.scalar(
            select(func.count(func.distinct(Account.user_id))).where(
                Account.kind == "available", *_in_groups(Account.chat_id, chat_ids)
            )
        )
        return Counts(groups or 0, open_rounds or 0, players or 0)

    async def daily_totals(
        self, chat_ids: Sequence[int] | None, *, from_ms: int, until_ms: int
    ) -> list[DayTotals]:
        """Totals per UTC day of rounds settled in [from_ms, until_ms), oldest day first
        (days without a round left out). Reads the rounds through ix_rounds_ended_at_ms and
        the ledger through ix_ledger_transactions_created_at_ms."""
        day = (RoundRow.ended_at_ms // DAY_MS).label("day")
        bettor = OutcomeRow.role.not_in(DEALER_ROLES)
        outcome_rows = await self.session.execute(
            select(
                day,
                func.count(func.distinct(RoundRow.id)),
                func.coalesce(func.sum(OutcomeRow.stake).filter(bettor), 0),
                func.coalesce(func.sum(OutcomeRow.rake), 0),
                func.coalesce(func.sum(OutcomeRow.rebate), 0),
            )
            .join(OutcomeRow, OutcomeRow.round_id == RoundRow.id)
            .where(
                RoundRow.ended_at_ms >= from_ms,
                RoundRow.ended_at_ms < until_ms,
                # Only settled rounds have outcomes. (No condition on the phase: without
                # statistics SQLite would read every settled round by ix_rounds_phase_deadline.)
                *_in_groups(RoundRow.chat_id, chat_ids),
            )
            .group_by(day)
        )
        tx_day = (LedgerTransaction.created_at_ms // DAY_MS).label("day")
        ledger_rows = await self.session.execute(
            select(tx_day, Account.kind, func.sum(PostingRow.amount))
            .join(PostingRow, PostingRow.transaction_id == LedgerTransaction.id)
            .join(Account, Account.id == PostingRow.account_id)
            .where(
                LedgerTransaction.created_at_ms >= from_ms,
                LedgerTransaction.created_at_ms < until_ms,
                LedgerTransaction.kind == "settle",
                Account.kind.in_(("house", "bank")),
                *_in_groups(LedgerTransaction.chat_id, chat_ids),
            )
            .group_by(tx_day, Account.kind)
        )
        money: dict[int, dict[str, int]] = {}
        for day_number, kind, amount in ledger_rows.tuples():
            money.setdefault(int(day_number), {})[kind] = int(amount)
        totals: dict[int, DayTotals] = {}
        for day_value, rounds, turnover, rake, rebates in outcome_rows.tuples().all():
            day_number = int(day_value or 0)  # never NULL: the rows are settled rounds
            moved = money.get(day_number, {})
            totals[day_number] = DayTotals(
                day_number,
                int(rounds),
                int(turnover),
                int(rake),
                int(rebates),
                moved.get("house", 0),
                moved.get("bank", 0),
            )
        return [totals[key] for key in sorted(totals)]

    async def account_balances(self, chat_id: int) -> dict[str, int]:
        """The group's own accounts (house, mint, bank) and the players' chips in total, by
        kind."""
        rows = await self.session.execute(
            select(Account.kind, func.sum(Account.balance))
            .where(Account.chat_id == chat_id)
            .group_by(Account.kind)
        )
        return {kind: int(amount or 0) for kind, amount in rows.tuples()}

    async def rounds(
        self, where: RoundFilter, *, before_id: int | None, limit: int
    ) -> list[RoundRowView]:
        """Rounds matching ``where``, newest first, ``limit`` of them with an id below
        ``before_id``. A group's rounds go through ix_rounds_chat_id_id, a player's through
        ix_outcomes_user_id_round_id, a date range through ix_rounds_started_at_ms, a game
        through ix_rounds_ruleset_id."""
        ruleset = RoundRow.ruleset
        conditions: list[ColumnElement[bool]] = list(_in_groups(RoundRow.chat_id, where.chat_ids))
        if where.chat_id is not None:
            conditions.append(RoundRow.chat_id == where.chat_id)
        if where.ruleset is not None:
            conditions.append(ruleset == where.ruleset)
        if where.started_from_ms is not None:
            conditions.append(RoundRow.started_at_ms >= where.started_from_ms)
        if where.started_before_ms is not None:
            conditions.append(RoundRow.started_at_ms < where.started_before_ms)
        # A player's rounds: walk their outcomes back through ix_outcomes_user_id_round_id
        # and stop at ``limit`` (an outcome per round and player: no duplicates).
        key = RoundRow.id if where.user_id is None else OutcomeRow.round_id
        if where.user_id is not None:
            conditions.append(OutcomeRow.user_id == where.user_id)
        if before_id is not None:
            conditions.append(key < before_id)
        statement = select(
            RoundRow.id,
            RoundRow.chat_id,
            RoundRow.phase,
            ruleset,
            RoundRow.dealer_id,
            RoundRow.pool,
            RoundRow.bet_count,
            RoundRow.started_at_ms,
            RoundRow.ended_at_ms,
        )
        if where.user_id is not None:
            statement = statement.select_from(OutcomeRow).join(
                RoundRow, RoundRow.id == OutcomeRow.round_id
            )
        rows = await self.session.execute(
            statement.where(*conditions).order_by(key.desc()).limit(limit)
        )
        return [RoundRowView(*row) for row in rows.tuples()]

    async def round_postings(self, round_id: int) -> list[PostingLine]:
        """Every posting of a round's ledger transactions, in order."""
        rows = await self.session.execute(
            select(*_POSTING_COLUMNS)
            .join(PostingRow, PostingRow.transaction_id == LedgerTransaction.id)
            .join(Account, Account.id == PostingRow.account_id)
            .where(LedgerTransaction.round_id == round_id)
            .order_by(LedgerTransaction.id, PostingRow.id)
        )
        return [PostingLine(*row) for row in rows.tuples()]

    async def ledger(self, chat_id: int, *, after_id: int | None, limit: int) -> list[PostingLine]:
        """A group's postings, oldest transaction first: those of up to ``limit``
        transactions after ``after_id`` (through ix_ledger_transactions_chat_id_id)."""
        page = select(LedgerTransaction.id).where(LedgerTransaction.chat_id == chat_id)
        if after_id is not None:
            page = page.where(LedgerTransaction.id > after_id)
        ids = list(await self.session.scalars(page.order_by(LedgerTransaction.id).limit(limit)))
        if not ids:
            return []
        rows = await self.session.execute(
            select(*_POSTING_COLUMNS)
            .join(PostingRow, PostingRow.transaction_id == LedgerTransaction.id)
            .join(Account, Account.id == PostingRow.account_id)
            # The page's range, not a list of its ids: one index range however long.
            .where(
                LedgerTransaction.chat_id == chat_id,
                LedgerTransaction.id >= ids[0],
                LedgerTransaction.id <= ids[-1],
            )
            .order_by(LedgerTransaction.id, PostingRow.id)
        )
        return [PostingLine(*row) for row in rows.tuples()]

    async def audit(self, chat_id: int, *, before_id: int | None, limit: int) -> list[AuditRow]:
        """A group's admin actions, newest first (through the primary key within the
        group's index)."""
        statement = select(
            AuditEntry.id,
            AuditEntry.actor_id,
            AuditEntry.action,
            AuditEntry.details,
            AuditEntry.created_at_ms,
        ).where(AuditEntry.chat_id == chat_id)
        if before_id is not None:
            statement = statement.where(AuditEntry.id < before_id)
        rows = await self.session.execute(statement.order_by(AuditEntry.id.desc()).limit(limit))
        return [AuditRow(*row) for row in rows.tuples()]


class ConsoleLinkUses:
    """One-time sign-in links already used, by nonce."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def claim(self, nonce: str, *, user_id: int, now_ms: int, expires_at_ms: int) -> bool:
        """Record a link's nonce as used; ``False`` if it was used before (by any worker).
        Forgets the uses of links that have expired (they are refused for that anyway)."""
        await self.session.execute(
            delete(ConsoleLinkUse).where(ConsoleLinkUse.expires_at_ms < now_ms)
        )
        result = await self.session.execute(
            dialect_insert(self.session, ConsoleLinkUse)
            .values(nonce=nonce, user_id=user_id, used_at_ms=now_ms, expires_at_ms=expires_at_ms)
            .on_conflict_do_nothing()
        )
        return bool(getattr(result, "rowcount", 0) == 1)

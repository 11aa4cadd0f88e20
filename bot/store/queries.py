"""The read side: what the bot shows (/history, /ledger, /audit, /balance everywhere, names)
and what a start or the sweep reloads (open rounds, and ended ones whose results are to go
out).

Each query reads through an index and stops at what it returns, so it costs the same
however long a group's history is; loading many rounds takes a fixed number of statements
whatever their number. The functions take the caller's session and return plain values;
they never write.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from bot.engine.round import Phase, Round, RoundSettled, RoundVoided
from bot.store import ledger
from bot.store.chat_bots import served_clause
from bot.store.ledger import Balance
from bot.store.models import (
    Account,
    AuditEntry,
    Chat,
    LedgerTransaction,
    OutcomeRow,
    RoundRow,
    User,
)
from bot.store.models import Posting as PostingRow
from bot.store.round_writes import DEALER_ROLES
from bot.store.rounds import OPEN_PHASES, RoundRepository

#: Postings of each of a player's accounts read per step of a statement's walk back.
STATEMENT_STEP = 64

#: (id, first name, username, last name) of a user.
UserName = tuple[int, str, str | None, str | None]


@dataclass(frozen=True, slots=True)
class StatementLine:
    """One ledger transaction as it touched a player's chips."""

    transaction_id: int
    kind: str
    round_id: int | None
    change: int
    created_at_ms: int
    memo: str


@dataclass(frozen=True, slots=True)
class RoundSummary:
    """A finished or running round, for ``/history``."""

    id: int
    phase: Phase
    dealer_id: int | None
    pool: int
    void_reason: str | None
    started_at_ms: int
    ended_at_ms: int | None
    dealer_net: int | None = None


@dataclass(frozen=True, slots=True)
class ParticipantResult:
    """A participant's line in a settled round."""

    user_id: int
    role: str
    stake: int
    envelope: int
    kind: str
    points: int
    multiplier: int
    result: str
    gross: int
    rake: int
    rebate: int
    net: int


_RESULT_COLUMNS = (
    OutcomeRow.user_id,
    OutcomeRow.role,
    OutcomeRow.stake,
    OutcomeRow.envelope,
    OutcomeRow.kind,
    OutcomeRow.points,
    OutcomeRow.multiplier,
    OutcomeRow.result,
    OutcomeRow.gross,
    OutcomeRow.rake,
    OutcomeRow.rebate,
    OutcomeRow.net,
)


@dataclass(frozen=True, slots=True)
class AuditLine:
    """An admin action."""

    actor_id: int
    action: str
    details: dict[str, Any]
    created_at_ms: int


@dataclass(frozen=True, slots=True)
class VitalCounts:
    """What the operator's metrics read from the database: open rounds by phase and by
    the ruleset stored with them (as stored: an old name is not translated here), and the
    chips held for bids and bets in every group, in cents."""

    open_rounds: dict[tuple[str, str], int]
    held_cents: int


#: Open rounds are few (one per chat at most) and found through ix_rounds_phase_deadline.
_OPEN_ROUNDS_BY_PHASE_AND_RULESET = (
    select(RoundRow.phase, RoundRow.ruleset, func.count())
    .where(RoundRow.phase.in_(OPEN_PHASES))
    .group_by(RoundRow.phase, RoundRow.ruleset)
)
#: Every held account is summed: a scan of the accounts table, which is why the metrics
#: ask at most every few seconds (``bot.web.metrics``).
_HELD_CENTS = select(func.coalesce(func.sum(Account.balance), 0)).where(Account.kind == "held")


class Queries:
    """The read side in one unit of work (see the module's docstring)."""

    def __init__(self, session: AsyncSession, bot_id: int = 0) -> None:
        self.session = session
        self.bot_id = bot_id

    async def vital_counts(self) -> VitalCounts:
        """Open rounds by phase and ruleset, and the chips held (see ``VitalCounts``)."""
        rows = await self.session.execute(_OPEN_ROUNDS_BY_PHASE_AND_RULESET)
        open_rounds = {(str(phase), str(ruleset)): int(count) for phase, ruleset, count in rows}
        held = await self.session.scalar(_HELD_CENTS)
        return VitalCounts(open_rounds, int(held or 0))

    async def open_rounds(self) -> list[Round]:
        """Every open round of the bot's groups, by id."""
        return await RoundRepository(self.session).load_many(
            RoundRow.phase.in_(OPEN_PHASES), served_clause(RoundRow.chat_id, self.bot_id)
        )

    async def ended_rounds(
        self, round_ids: Sequence[int]
    ) -> list[tuple[Round, RoundSettled | RoundVoided]]:
        """These ended rounds (``DeliveryLookup.unannounced`` finds them), by id, each with
        what ended it."""
        repository = RoundRepository(self.session)
        states = await repository.load_many(RoundRow.id.in_(list(round_ids)))
        return list(zip(states, await repository.endings(states), strict=True))

    async def history(self, chat_id: int, limit: int) -> list[RoundSummary]:
        """The chat's latest rounds, newest first, with the dealer's net where settled."""
        rows = (
            await self.session.execute(
                select(
                    RoundRow.id,
                    RoundRow.phase,
                    RoundRow.dealer_id,
                    RoundRow.pool,
                    RoundRow.void_reason,
                    RoundRow.started_at_ms,
                    RoundRow.ended_at_ms,
                )
                .where(RoundRow.chat_id == chat_id)
                .order_by(RoundRow.id.desc())
                .limit(limit)
            )
        ).all()
        if not rows:
            return []
        nets = dict(
            (
                await self.session.execute(
                    select(OutcomeRow.round_id, OutcomeRow.net).where(
                        OutcomeRow.round_id.in_([row.id for row in rows]),
                        OutcomeRow.role.in_(DEALER_ROLES),
                    )
                )
            )
            .tuples()
            .all()
        )
        return [
            RoundSummary(
                row.id,
                Phase(row.phase),
                row.dealer_id,
                row.pool,
                row.void_reason,
                row.started_at_ms,
                row.ended_at_ms,
                nets.get(row.id),
            )
            for row in rows
        ]

    async def statement(
        self, chat_id: int, user_id: int, limit: int, *, before: int | None = None
    ) -> list[StatementLine]:
        """The latest ``limit`` ledger transactions that changed a player's chips, newest
        first (older than transaction ``before`` if given: the console's next page); holds,
        which move chips between the player's own two accounts and net to zero for them,
        are left out.

        It walks both accounts' postings back from the newest through the index on
        (account_id, transaction_id), a step of ``STATEMENT_STEP`` postings per account at a
        time, and stops once it has ``limit`` lines: it reads what it shows and the holds in
        between, never the player's whole history.
        """
        if limit <= 0:
            return []
        accounts = list(
            await self.session.scalars(
                select(Account.id).where(
                    Account.chat_id == chat_id,
                    Account.user_id == user_id,
                    Account.kind.in_(("available", "held")),
                )
            )
        )
        if not accounts:
            return []
        changes: dict[int, int] = {}  # transaction id -> the player's net change, newest first
        while len(changes) < limit:
            steps = []
            for account_id in accounts:
                step = select(
                    PostingRow.account_id, PostingRow.transaction_id, PostingRow.amount
                ).where(PostingRow.account_id == account_id)
                if before is not None:
                    step = step.where(PostingRow.transaction_id < before)
                step = step.order_by(PostingRow.transaction_id.desc()).limit(STATEMENT_STEP)
                # Wrapped: SQLite refuses ORDER BY and LIMIT on the members of a UNION.
                steps.append(select(step.subquery()))
            rows = (await self.session.execute(union_all(*steps))).tuples().all()
            read: defaultdict[int, list[int]] = defaultdict(list)
            for account_id, transaction_id, _ in rows:
                read[account_id].append(transaction_id)
            # An account whose step came back full may have older postings; a transaction has
            # at most one posting per account (the ledger merges them), so every transaction
            # from the oldest one that each full step reached on is complete.
            full = [min(ids) for ids in read.values() if len(ids) == STATEMENT_STEP]
            complete_from = max(full, default=None)
            totals: defaultdict[int, int] = defaultdict(int)
            for _, transaction_id, amount in rows:
                if complete_from is None or transaction_id >= complete_from:
                    totals[transaction_id] += amount
            for transaction_id in sorted(totals, reverse=True):
                if totals[transaction_id] and len(changes) < limit:
                    changes[transaction_id] = totals[transaction_id]
            if complete_from is None:
                break  # both accounts read to their first posting
            before = complete_from
        if not changes:
            return []
        found = {
            row.id: row
            for row in await self.session.execute(
                select(
                    LedgerTransaction.id,
                    LedgerTransaction.kind,
                    LedgerTransaction.round_id,
                    LedgerTransaction.created_at_ms,
                    LedgerTransaction.memo,
                ).where(LedgerTransaction.id.in_(changes))
            )
        }
        return [
            StatementLine(
                transaction_id,
                found[transaction_id].kind,
                found[transaction_id].round_id,
                change,
                found[transaction_id].created_at_ms,
                found[transaction_id].memo,
            )
            for transaction_id, change in changes.items()
        ]

    async def balances_everywhere(self, user_id: int) -> list[tuple[int, str, Balance]]:
        """A player's chips in every group: (chat id, title, balance), by chat id."""
        found = await ledger.Ledger(self.session).balances_of_user(user_id)
        if not found:
            return []
        titles = dict(
            (await self.session.execute(select(Chat.id, Chat.title).where(Chat.id.in_(found))))
            .tuples()
            .all()
        )
        return [(chat_id, titles.get(chat_id, ""), found[chat_id]) for chat_id in sorted(found)]

    async def audit_log(self, chat_id: int, limit: int) -> list[AuditLine]:
        """The group's latest admin actions, newest first."""
        rows = await self.session.execute(
            select(
                AuditEntry.actor_id, AuditEntry.action, AuditEntry.details, AuditEntry.created_at_ms
            )
            .where(AuditEntry.chat_id == chat_id)
            .order_by(AuditEntry.id.desc())
            .limit(limit)
        )
        return [AuditLine(*row) for row in rows.tuples()]

    async def names(self, user_ids: Sequence[int]) -> list[UserName]:
        """What the bot knows of these users."""
        rows = await self.session.execute(
            select(User.id, User.first_name, User.username, User.last_name).where(
                User.id.in_(user_ids)
            )
        )
        return list(rows.tuples())

    async def find_user(self, username: str) -> UserName | None:
        """A user the bot has seen, by username without the @, whatever its case."""
        row = (
            await self.session.execute(
                select(User.id, User.first_name, User.username, User.last_name)
                .where(func.lower(User.username) == username.lower())
                .limit(1)
            )
        ).first()
        return None if row is None else row._tuple()

    async def results(self, round_id: int) -> list[ParticipantResult]:
        """Each participant's line of a settled round: bettors in bet order, then the
        dealer."""
        rows = await self.session.execute(
            select(*_RESULT_COLUMNS).where(OutcomeRow.round_id == round_id).order_by(OutcomeRow.id)
        )
        return [ParticipantResult(*row) for row in rows.tuples()]

    async def open_phase(self, chat_id: int) -> str | None:
        """The phase of the chat's open round, if it has one (one indexed row, no bets)."""
        phase: str | None = await self.session.scalar(
            select(RoundRow.phase).where(
                RoundRow.chat_id == chat_id, RoundRow.phase.in_(OPEN_PHASES)
            )
        )
        return phase

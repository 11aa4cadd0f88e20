"""The double-entry ledger: accounts, balanced transactions and their balances.

A transaction is written with its postings as its ``legs``; the database writes the
postings, refuses them unless they sum to zero and adds them to the balances (migration
0021), so Python's check here is the first word and the database's the last.

Repositories never commit; the caller's unit of work does, so postings land in the same
database transaction as the state change that causes them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.engine.errors import RuleViolation
from bot.engine.round import (
    AccountKind,
    AccountRef,
    BetCancelled,
    BetPlaced,
    BidPlaced,
    Posting,
    RoundSettled,
    RoundVoided,
    merge_postings,
)
from bot.store.db import dialect_insert
from bot.store.errors import NOT_NEGATIVE, violated_constraint
from bot.store.models import Account, LedgerTransaction

#: A round's ledger transaction's kind, by the first event that says it.
_KIND_OF_EVENT: dict[type, str] = {
    BidPlaced: "bid",
    BetPlaced: "bet",
    BetCancelled: "bet_cancel",
    RoundSettled: "settle",
    RoundVoided: "void",
}


def transaction_kind(events: Iterable[object]) -> str:
    """The kind of the ledger transaction of a round's step that had these events."""
    return next((_KIND_OF_EVENT[type(e)] for e in events if type(e) in _KIND_OF_EVENT), "round")


class UnbalancedTransaction(ValueError):
    """Postings that do not sum to zero: a bug, never a user error."""


@dataclass(frozen=True, slots=True)
class Balance:
    """A player's chips in one group."""

    available: int
    held: int

    @property
    def total(self) -> int:
        """Available plus held."""
        return self.available + self.held


def _owner(ref: AccountRef) -> tuple[str, int]:
    return ref.kind.value, ref.user_id or 0


def _legs(merged: Sequence[Posting], ids: Mapping[AccountRef, int]) -> list[list[int]]:
    """A transaction's postings as its ``legs`` column holds them, by account id: the
    database adds them to the balances in that order, and a fixed order of row locks
    keeps two concurrent transactions from deadlocking."""
    return sorted([ids[posting.account], posting.amount] for posting in merged)


@asynccontextmanager
async def _chips_changed() -> AsyncIterator[None]:
    """``RuleViolation("chips_changed")`` where a balance would go negative (the database
    ``CHECK`` decides, inside the trigger that adds postings to balances)."""
    try:
        yield
    except IntegrityError as error:
        if violated_constraint(error) != NOT_NEGATIVE:
            raise
        raise RuleViolation("chips_changed") from None


class Ledger:
    """The ledger in one unit of work: accounts, balanced transactions, balances."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def account_ids(self, chat_id: int, refs: Iterable[AccountRef]) -> dict[AccountRef, int]:
        """The ids of a group's accounts, creating those that do not exist yet."""
        wanted = {_owner(ref): ref for ref in refs}
        if not wanted:
            return {}
        found = await self._select_accounts(chat_id, wanted)
        missing = [owner for owner in wanted if owner not in found]
        # A player's held account is created with their available one, so that the hot
        # path (a bid or bet moves chips between the two) never has to create one.
        missing += [
            (AccountKind.HELD.value, user)
            for kind, user in missing
            if kind == AccountKind.AVAILABLE.value and (AccountKind.HELD.value, user) not in found
        ]
        missing = list(dict.fromkeys(missing))
        if missing:
            statement = (
                dialect_insert(self.session, Account)
                .values(
                    [
                        {"chat_id": chat_id, "kind": kind, "user_id": user, "balance": 0}
                        for kind, user in missing
                    ]
                )
                .on_conflict_do_nothing()
            )
            await self.session.execute(statement)
            found = await self._select_accounts(chat_id, wanted)
        return {ref: found[owner] for owner, ref in wanted.items()}

    async def _select_accounts(
        self, chat_id: int, owners: Iterable[tuple[str, int]]
    ) -> dict[tuple[str, int], int]:
        owners = list(owners)
        users = {user for _, user in owners}
        rows = await self.session.execute(
            select(Account.kind, Account.user_id, Account.id).where(
                Account.chat_id == chat_id, Account.user_id.in_(users)
            )
        )
        wanted = set(owners)
        return {(kind, user): id_ for kind, user, id_ in rows if (kind, user) in wanted}

    async def post(
        self,
        *,
        chat_id: int,
        kind: str,
        postings: Sequence[Posting],
        now_ms: int,
        round_id: int | None = None,
        actor_id: int | None = None,
        memo: str = "",
    ) -> int | None:
        """Write one balanced transaction; its id, or ``None`` when the postings net to
        nothing. The database writes its postings and adds them to the balances.

        Raises ``UnbalancedTransaction`` if the postings do not sum to zero and
        ``RuleViolation("chips_changed")`` if a player's balance would go negative (the
        database ``CHECK`` decides, so a concurrent change cannot slip past).
        """
        merged = _balanced(kind, postings)
        if not merged:
            return None
        ids = await self.account_ids(chat_id, (posting.account for posting in merged))
        row = {
            "chat_id": chat_id,
            "kind": kind,
            "round_id": round_id,
            "actor_id": actor_id,
            "memo": memo[:256],
            "created_at_ms": now_ms,
            "legs": _legs(merged, ids),
        }
        async with _chips_changed():
            transaction_id = await self.session.scalar(
                insert(LedgerTransaction).values(row).returning(LedgerTransaction.id)
            )
        assert transaction_id is not None
        return transaction_id

    async def balance(self, chat_id: int, user_id: int) -> Balance:
        """A player's available and held chips in a group (zero where no account exists)."""
        rows = await self.session.execute(
            select(Account.kind, Account.balance).where(
                Account.chat_id == chat_id,
                Account.user_id == user_id,
                Account.kind.in_((AccountKind.AVAILABLE.value, AccountKind.HELD.value)),
            )
        )
        amounts = dict(rows.tuples().all())
        return Balance(amounts.get("available", 0), amounts.get("held", 0))

    async def balances_of_user(self, user_id: int) -> dict[int, Balance]:
        """A player's chips in every group where they have an account."""
        rows = await self.session.execute(
            select(Account.chat_id, Account.kind, Account.balance).where(
                Account.user_id == user_id,
                Account.kind.in_((AccountKind.AVAILABLE.value, AccountKind.HELD.value)),
            )
        )
        result: dict[int, dict[str, int]] = {}
        for chat_id, kind, amount in rows:
            result.setdefault(chat_id, {})[kind] = amount
        return {
            chat_id: Balance(kinds.get("available", 0), kinds.get("held", 0))
            for chat_id, kinds in result.items()
        }

    async def account_balance(self, chat_id: int, ref: AccountRef) -> int:
        """The balance of one account (0 if it does not exist)."""
        kind, user = _owner(ref)
        value = await self.session.scalar(
            select(Account.balance).where(
                Account.chat_id == chat_id, Account.kind == kind, Account.user_id == user
            )
        )
        return value or 0


def _balanced(kind: str, postings: Sequence[Posting]) -> tuple[Posting, ...]:
    """The postings netted per account; ``UnbalancedTransaction`` unless they sum to zero."""
    merged = merge_postings(postings)
    total = sum(posting.amount for posting in merged)
    if total != 0:
        raise UnbalancedTransaction(f"postings of {kind} sum to {total}")
    return merged

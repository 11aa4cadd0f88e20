"""Standing bets in one unit of work: set, read and clear a player's, the group's due for a
round, and what placing them for a round leaves (each considered once per round)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, exists, or_, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute, aliased

from bot.engine.autobets import Autobet
from bot.engine.round import AccountKind, AccountRef, Phase, available
from bot.engine.round import held as engine_held
from bot.store.chat_bots import served_clause
from bot.store.db import Database, dialect_insert
from bot.store.models import Account, AutobetRow, OutcomeRow, RoundRow
from bot.store.statements import Positional

_COLUMNS = (AutobetRow.user_id, AutobetRow.amount, AutobetRow.ruleset, AutobetRow.once)


def _not_yet_for(
    round_id: int | ColumnElement[int] | InstrumentedAttribute[int],
) -> ColumnElement[bool]:
    """Standing bets not yet considered for round ``round_id`` (ids only grow)."""
    return or_(AutobetRow.last_round_id.is_(None), AutobetRow.last_round_id < round_id)


@dataclass(frozen=True, slots=True)
class BetInRound:
    """A round as "same again" needs it, and the player's stake in it (if they bet)."""

    chat_id: int
    phase: Phase
    ruleset: str
    stake: int | None


@dataclass(frozen=True, slots=True)
class DueAutobet:
    """A standing bet due for a round, its player's free chips, and the ids of their
    available and held accounts (none if they have no chips here)."""

    autobet: Autobet
    free_chips: int
    accounts: Mapping[AccountRef, int]


def _account_of(account: Any, kind: AccountKind) -> ColumnElement[bool]:
    """The join of a standing bet to its player's account of ``kind`` in the group."""
    return and_(
        account.chat_id == AutobetRow.chat_id,
        account.user_id == AutobetRow.user_id,
        account.kind == kind.value,
    )


class AutobetRepository:
    """Standing bets in one unit of work."""

    def __init__(self, session: AsyncSession, bot_id: int = 0) -> None:
        self.session = session
        self.bot_id = bot_id

    async def get(self, chat_id: int, user_id: int) -> Autobet | None:
        """The player's standing bet in the group, if they have one."""
        row = (
            await self.session.execute(
                select(*_COLUMNS).where(
                    AutobetRow.chat_id == chat_id, AutobetRow.user_id == user_id
                )
            )
        ).first()
        return None if row is None else Autobet(row.user_id, row.amount, row.ruleset, row.once)

    async def put(self, chat_id: int, autobet: Autobet, now_ms: int) -> None:
        """Set (or replace) the player's standing bet; it is due from the next round that
        opens betting (or the one betting now, if the player has not bet in it)."""
        values = {
            "amount": autobet.amount,
            "ruleset": autobet.ruleset,
            "once": autobet.once,
            "set_at_ms": now_ms,
            "last_round_id": None,
        }
        statement = dialect_insert(self.session, AutobetRow).values(
            chat_id=chat_id, user_id=autobet.user_id, **values
        )
        await self.session.execute(
            statement.on_conflict_do_update(
                index_elements=[AutobetRow.chat_id, AutobetRow.user_id], set_=values
            )
        )

    async def remove(self, chat_id: int, user_ids: Sequence[int]) -> int:
        """Clear these players' standing bets; how many there were."""
        if not user_ids:
            return 0
        result = await self.session.execute(
            delete(AutobetRow).where(
                AutobetRow.chat_id == chat_id, AutobetRow.user_id.in_(list(user_ids))
            )
        )
        return int(result.rowcount)  # type: ignore[attr-defined]

    async def due_with_chips(self, chat_id: int, round_id: int) -> list[DueAutobet]:
        """The group's standing bets not yet considered for the round, oldest set first,
        with each player's free chips and the ids of their available and held accounts
        (what placing the bets moves chips between), in one statement."""
        free, held = aliased(Account), aliased(Account)
        rows = await self.session.execute(
            select(*_COLUMNS, free.balance, free.id, held.id)
            .outerjoin(free, _account_of(free, AccountKind.AVAILABLE))
            .outerjoin(held, _account_of(held, AccountKind.HELD))
            .where(AutobetRow.chat_id == chat_id, _not_yet_for(round_id))
            .order_by(AutobetRow.set_at_ms, AutobetRow.user_id)
        )
        due = []
        for user_id, amount, ruleset, once, balance, available_id, held_id in rows:
            accounts = {}
            if available_id is not None and held_id is not None:
                accounts = {available(user_id): available_id, engine_held(user_id): held_id}
            due.append(DueAutobet(Autobet(user_id, amount, ruleset, once), balance or 0, accounts))
        return due

    async def considered(self, chat_id: int, round_id: int, autobets: Sequence[Autobet]) -> None:
        """Mark these standing bets as considered for the round (each only as it was
        read: one the player changed meanwhile is theirs, to be placed next time)."""
        if autobets:
            await self.session.execute(
                update(AutobetRow)
                .where(AutobetRow.chat_id == chat_id, _as_read(autobets))
                .values(last_round_id=round_id)
            )

    async def remove_as_read(self, chat_id: int, autobets: Sequence[Autobet]) -> None:
        """Clear these standing bets, each only as it was read (a ``/autobet`` sent while
        they were being placed stays)."""
        if autobets:
            await self.session.execute(
                delete(AutobetRow).where(AutobetRow.chat_id == chat_id, _as_read(autobets))
            )

    async def rounds_due(self) -> list[tuple[int, int]]:
        """Rounds taking bets whose group (one of the bot's) has standing bets not yet
        considered for them: (round id, chat id), in one statement (after a restart that
        came between a window opening and its standing bets being placed)."""
        rows = await self.session.execute(
            select(RoundRow.id, RoundRow.chat_id)
            .where(
                RoundRow.phase == Phase.BETTING.value,
                served_clause(RoundRow.chat_id, self.bot_id),
                exists().where(
                    and_(AutobetRow.chat_id == RoundRow.chat_id, _not_yet_for(RoundRow.id))
                ),
            )
            .order_by(RoundRow.id)
        )
        return [(row.id, row.chat_id) for row in rows]

    async def bet_in(self, round_id: int, user_id: int) -> BetInRound | None:
        """A round's group, phase and game, and what the player bet in it (``None``: no
        such round)."""
        stake = (
            select(OutcomeRow.stake)
            .where(
                OutcomeRow.round_id == round_id,
                OutcomeRow.user_id == user_id,
                OutcomeRow.role == "player",
            )
            .scalar_subquery()
        )
        row = (
            await self.session.execute(
                select(
                    RoundRow.chat_id, RoundRow.phase, RoundRow.ruleset, stake.label("stake")
                ).where(RoundRow.id == round_id)
            )
        ).first()
        if row is None:
            return None
        return BetInRound(row.chat_id, Phase(row.phase), row.ruleset, row.stake)

    async def settled_since(self, chat_id: int, round_id: int) -> bool:
        """Whether a round of the group settled after round ``round_id`` (its results are
        then no longer the latest)."""
        later = await self.session.scalar(
            select(RoundRow.id)
            .where(
                RoundRow.chat_id == chat_id,
                RoundRow.id > round_id,
                RoundRow.phase == Phase.SETTLED.value,
            )
            .limit(1)
        )
        return later is not None


#: Whether a group has a standing bet not yet considered for a round (its primary key's
#: first column finds the group's few rows).
_ANY_DUE = (
    "SELECT EXISTS (SELECT 1 FROM autobets WHERE chat_id = :chat_id "
    "AND (last_round_id IS NULL OR last_round_id < :round_id))"
)
_ANY_DUE_POSTGRES = Positional.of(_ANY_DUE)


class AutobetLookup:
    """The look every betting window takes, whether its group has standing bets to place:
    one round trip on a connection of the hot path's (SQLite: the reader's thread;
    PostgreSQL: the bare driver's pool), no transaction of SQLAlchemy's around it."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def any_due(self, chat_id: int, round_id: int) -> bool:
        """Whether the group has a standing bet not yet considered for the round."""
        params = {"chat_id": chat_id, "round_id": round_id}
        row = await self.db.read_one(_ANY_DUE, _ANY_DUE_POSTGRES, params)
        return bool(row[0])


def _as_read(autobets: Sequence[Autobet]) -> ColumnElement[bool]:
    """The rows of these players that still hold what was read of them."""
    return tuple_(AutobetRow.user_id, AutobetRow.amount, AutobetRow.ruleset, AutobetRow.once).in_(
        [(a.user_id, a.amount, a.ruleset, a.once) for a in autobets]
    )

"""Rounds in the database as the general path reads them: a round whole, several at once,
and what ended them. Every write of a round is ``bot.store.round_writes``'s."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from sqlalchemy import ColumnElement, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.engine.round import Bet, Grab, Phase, Round, RoundSettled, RoundVoided, ShoeRef
from bot.engine.settings import Settings
from bot.engine.settlement import Outcome, Result, Settlement
from bot.store.client_seeds import ClientSeeds
from bot.store.models import BetRow, GrabRow, OutcomeRow, RoundRow, ShoeRow
from bot.store.round_reads import round_of
from bot.store.round_writes import DEALER_ROLES

OPEN_PHASES = [phase.value for phase in Phase if phase.is_open]
_BEFORE_GRABS = (Phase.BIDDING, Phase.BETTING)


def ending_of(state: Round, rows: Iterable[Any]) -> RoundSettled | RoundVoided:
    """What ended a finished round, given its outcome rows (anything with the columns of
    ``OutcomeRow``; none for a void round)."""
    if state.phase is Phase.VOID:
        assert state.void_reason is not None
        return RoundVoided(state.void_reason, state.seed)
    outcomes: dict[Hashable, Outcome] = {}
    dealer_net = 0
    for row in rows:
        if row.role in DEALER_ROLES:
            dealer_net = row.net
        else:
            outcomes[row.user_id] = Outcome(
                Result(row.result), row.gross, row.rake, row.rebate, row.net
            )
    ordered: dict[Hashable, Outcome] = {bet.user_id: outcomes[bet.user_id] for bet in state.bets}
    platform_net = -dealer_net - sum(outcome.net for outcome in ordered.values())
    settlement = Settlement(False, MappingProxyType(ordered), dealer_net, platform_net)
    return RoundSettled(settlement, state.seed)


def _client_seeds(stored: Any) -> tuple[str, ...] | None:
    # A scalar subquery of a JSON column comes back as text on some drivers.
    if isinstance(stored, str):
        stored = json.loads(stored)
    return None if stored is None else tuple(stored)


class RoundRepository:
    """Rounds in one unit of work, as read: a round whole, several, what ended them."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def load(
        self, round_id: int, *, lock: bool = True, skip_locked: bool = False
    ) -> Round | None:
        """The round with its bets and grabs; on PostgreSQL its row is locked ``FOR UPDATE``
        (``skip_locked``: return ``None`` if another worker holds it)."""
        return await self._load_where(RoundRow.id == round_id, lock=lock, skip_locked=skip_locked)

    async def load_open(self, chat_id: int, *, lock: bool = True) -> Round | None:
        """The chat's open round, locked like ``load``; ``None`` if it has none."""
        return await self._load_where(
            RoundRow.chat_id == chat_id, RoundRow.phase.in_(OPEN_PHASES), lock=lock
        )

    async def _load_where(
        self, *where: ColumnElement[bool], lock: bool, skip_locked: bool = False
    ) -> Round | None:
        found = await self.load_many(*where, lock=lock, skip_locked=skip_locked)
        return found[0] if found else None

    async def player_seeds(self, state: Round) -> Mapping[int, str]:
        """The client seeds the round's participants have set now, by user, while betting
        may close (the deal mixes them in: ``engine.advance``); none otherwise."""
        if state.phase is not Phase.BETTING or state.fairness == 1:
            return MappingProxyType({})
        return MappingProxyType(await ClientSeeds(self.session).of(list(state.participants)))

    async def load_many(
        self, *where: ColumnElement[bool], lock: bool = False, skip_locked: bool = False
    ) -> list[Round]:
        """The rounds that match ``where``, by id, with their bets, grabs and shoe, in at
        most three statements whatever their number; on PostgreSQL locked ``FOR UPDATE``
        if ``lock`` (``skip_locked``: leaving out those another worker holds)."""
        # Plain rows, not ORM objects: this runs on every command and the objects cost more.
        # The shoe's seed comes in the same query (a subquery, so that FOR UPDATE locks only
        # the rounds).
        shoe_seed = select(ShoeRow.seed).where(ShoeRow.id == RoundRow.shoe_id).scalar_subquery()
        shoe_client_seeds = (
            select(ShoeRow.client_seeds).where(ShoeRow.id == RoundRow.shoe_id).scalar_subquery()
        )
        query = (
            select(
                *RoundRow.__table__.c,
                shoe_seed.label("shoe_seed"),
                shoe_client_seeds.label("shoe_client_seeds"),
            )
            .where(*where)
            .order_by(RoundRow.id)
        )
        if lock:
            query = query.with_for_update(skip_locked=skip_locked)
        rows = (await self.session.execute(query)).all()
        if not rows:
            return []
        bets: defaultdict[int, list[Bet]] = defaultdict(list)
        for round_id, user_id, amount, hold, standing in await self.session.execute(
            select(BetRow.round_id, BetRow.user_id, BetRow.amount, BetRow.hold, BetRow.standing)
            .where(BetRow.round_id.in_([row.id for row in rows]))
            .order_by(BetRow.round_id, BetRow.position)
        ):
            bets[round_id].append(Bet(user_id, amount, hold, bool(standing)))
        grabs: defaultdict[int, list[Grab]] = defaultdict(list)
        # Nobody grabs before betting closes.
        grabbing = [row.id for row in rows if Phase(row.phase) not in _BEFORE_GRABS]
        if grabbing:
            for round_id, user_id, amount, auto in await self.session.execute(
                select(GrabRow.round_id, GrabRow.user_id, GrabRow.amount, GrabRow.auto)
                .where(GrabRow.round_id.in_(grabbing))
                .order_by(GrabRow.round_id, GrabRow.position)
            ):
                grabs[round_id].append(Grab(user_id, amount, auto))
        return [
            round_of(
                row._mapping,
                settings=Settings.from_dict(row.settings),
                bets=tuple(bets[row.id]),
                grabs=tuple(grabs[row.id]),
                shoe=None
                if row.shoe_id is None
                else ShoeRef(
                    row.shoe_id,
                    bytes(row.shoe_seed),
                    row.deal_offset,
                    _client_seeds(row.shoe_client_seeds),
                ),
            )
            for row in rows
        ]

    async def ending(self, state: Round) -> RoundSettled | RoundVoided:
        """What ended a finished round, rebuilt from its stored outcomes."""
        return (await self.endings([state]))[0]

    async def endings(self, states: Sequence[Round]) -> list[RoundSettled | RoundVoided]:
        """What ended each of these finished rounds, rebuilt from their outcomes in one
        statement."""
        if not states:
            return []
        outcomes: defaultdict[int, list[Any]] = defaultdict(list)
        rows = await self.session.execute(
            select(OutcomeRow).where(OutcomeRow.round_id.in_([state.id for state in states]))
        )
        for row in rows.scalars():
            outcomes[row.round_id].append(row)
        return [ending_of(state, outcomes[state.id]) for state in states]

    async def open_round_id(self, chat_id: int) -> int | None:
        """The id of the chat's open round, if it has one."""
        round_id: int | None = await self.session.scalar(
            select(RoundRow.id).where(
                RoundRow.chat_id == chat_id,
                RoundRow.phase.in_(OPEN_PHASES),
            )
        )
        return round_id

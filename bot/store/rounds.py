"""Rounds in the database: load a round whole, save a transition compare-and-set."""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from types import MappingProxyType
from typing import Any

from sqlalchemy import ColumnElement, Row, delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.engine.round import (
    Bet,
    BetPlaced,
    BidPlaced,
    Grab,
    Phase,
    Round,
    RoundSettled,
    RoundVoided,
    ShoeRef,
    Transition,
    VoidReason,
)
from bot.engine.settings import Settings
from bot.engine.settlement import Outcome, Result, Settlement
from bot.store.client_seeds import ClientSeeds
from bot.store.errors import ONE_OPEN_ROUND, RoundAlreadyOpen, violated_constraint
from bot.store.models import BetRow, BidRow, GrabRow, OutcomeRow, RoundRow, ShoeRow

OPEN_PHASES = [phase.value for phase in Phase if phase.is_open]
_BEFORE_GRABS = (Phase.BIDDING, Phase.BETTING)
#: ``OutcomeRow.role`` of the dealer's line: a player who bid, or the group's bank.
DEALER_ROLES = ("dealer", "house")
HOUSE_USER_ID = 0


class StaleRound(Exception):
    """The round changed since it was read (its version moved on): re-read and retry."""


def _to_round(
    row: Row[Any], bets: Sequence[Bet], grabs: Sequence[Grab], shoe: ShoeRef | None
) -> Round:
    return Round(
        id=row.id,
        chat_id=row.chat_id,
        phase=Phase(row.phase),
        version=row.version,
        deadline_ms=row.deadline_ms,
        settings=Settings.from_dict(row.settings),
        seed=bytes(row.seed),
        commitment=row.commitment,
        high_bidder=row.high_bidder,
        high_bid=row.high_bid,
        bid_hold=row.bid_hold,
        dealer_id=row.dealer_id,
        pool=row.pool,
        bets=tuple(bets),
        shares=tuple(row.shares),
        grabs=tuple(grabs),
        void_reason=VoidReason(row.void_reason) if row.void_reason else None,
        shoe=shoe,
        fairness=row.fairness,
        client_seeds=tuple(row.client_seeds or ()),
    )


def stored_client_seeds(seeds: tuple[str, ...] | None, derivation: int) -> list[str] | None:
    """Client seeds as a JSON column stores them: ``NULL`` for derivation 1 (none took
    part) and for a shoe's not fixed yet."""
    return None if seeds is None or derivation == 1 else list(seeds)


def round_columns(state: Round) -> dict[str, object]:
    """The ``rounds`` columns a step may change, as stored."""
    return {
        "phase": state.phase.value,
        "version": state.version,
        "deadline_ms": state.deadline_ms,
        "high_bidder": state.high_bidder,
        "high_bid": state.high_bid,
        "bid_hold": state.bid_hold,
        "dealer_id": state.dealer_id,
        "pool": state.pool,
        "shares": list(state.shares),
        "void_reason": state.void_reason.value if state.void_reason else None,
        "bet_count": state.bet_count,
        "grab_count": state.grab_count,
        "client_seeds": stored_client_seeds(state.client_seeds, state.fairness),
    }


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
    """Rounds in one unit of work: load a round whole, store a new one, save a transition
    compare-and-set."""

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
        if not found:
            return None
        state = found[0]
        if state.phase is Phase.BETTING and state.fairness != 1:
            # Betting may close in this step: the deal mixes in the participants' seeds.
            participants = [bet.user_id for bet in state.bets]
            if state.dealer_id is not None:
                participants.append(state.dealer_id)
            seeds = await ClientSeeds(self.session).of(participants)
            state = dataclasses.replace(state, player_seeds=MappingProxyType(seeds))
        return state

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
            _to_round(
                row,
                bets[row.id],
                grabs[row.id],
                None
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

    async def insert(self, state: Round, now_ms: int) -> Round:
        """Store a new round; returns it with its database id. Raises ``RoundAlreadyOpen``
        when the chat has an open round (another worker's, started at the same moment)."""
        row = RoundRow(
            chat_id=state.chat_id,
            commitment=state.commitment,
            seed=state.seed,
            settings=state.settings.to_dict(),
            ruleset=state.settings.ruleset,
            started_at_ms=now_ms,
            shoe_id=state.shoe.id if state.shoe else None,
            deal_offset=state.shoe.offset if state.shoe else None,
            fairness=state.fairness,
            **round_columns(state),
        )
        self.session.add(row)
        try:
            await self.session.flush()
        except IntegrityError as error:
            if violated_constraint(error) == ONE_OPEN_ROUND:
                raise RoundAlreadyOpen(state.chat_id) from None
            raise
        return dataclasses.replace(state, id=row.id)

    async def save(self, before: Round, transition: Transition, now_ms: int) -> None:
        """Write a transition: compare-and-set on the version read, then bets, grabs, bids and
        outcomes. Raises ``StaleRound`` if another writer got there first."""
        after = transition.round
        values = round_columns(after)
        if not after.phase.is_open:
            values["ended_at_ms"] = now_ms
        result = await self.session.execute(
            update(RoundRow)
            .where(RoundRow.id == before.id, RoundRow.version == before.version)
            .values(**values)
        )
        if result.rowcount != 1:  # type: ignore[attr-defined]
            raise StaleRound(before.id)
        await self._save_bets(before, after, now_ms)
        new_grabs = after.grabs[len(before.grabs) :]
        if new_grabs:
            await self.session.execute(
                insert(GrabRow),
                [
                    {
                        "round_id": after.id,
                        "user_id": g.user_id,
                        "amount": g.amount,
                        "position": len(before.grabs) + i,
                        "auto": g.auto,
                    }
                    for i, g in enumerate(new_grabs)
                ],
            )
        for event in transition.events:
            if isinstance(event, BidPlaced):
                await self.session.execute(
                    insert(BidRow).values(
                        round_id=after.id,
                        user_id=event.user_id,
                        amount=event.amount,
                        placed_at_ms=now_ms,
                    )
                )
            elif isinstance(event, RoundSettled):
                await self._save_outcomes(after, event)

    async def save_bets_placed(
        self, before: Round, steps: Sequence[Transition], now_ms: int
    ) -> None:
        """Write steps that each placed one new bet (standing bets placed as betting
        opens): one compare-and-set from ``before``'s version to the last step's, and the
        bets in one statement, each at its own step's place in the bet order. Raises
        ``StaleRound`` if another writer got there first."""
        if not steps:
            return
        after = steps[-1].round
        result = await self.session.execute(
            update(RoundRow)
            .where(RoundRow.id == before.id, RoundRow.version == before.version)
            .values(**round_columns(after))
        )
        if result.rowcount != 1:  # type: ignore[attr-defined]
            raise StaleRound(before.id)
        rows = []
        for step in steps:
            (placed,) = step.events
            if not isinstance(placed, BetPlaced) or placed.previous:
                raise ValueError(f"not a new bet: {step.events}")
            bet = step.round.bet_of(placed.user_id)
            assert bet is not None
            rows.append(
                {
                    "round_id": after.id,
                    "user_id": bet.user_id,
                    "amount": bet.amount,
                    "hold": bet.hold,
                    "position": step.round.version,
                    "placed_at_ms": now_ms,
                    "standing": bet.standing,
                }
            )
        await self.session.execute(insert(BetRow), rows)

    async def _save_bets(self, before: Round, after: Round, now_ms: int) -> None:
        old = {bet.user_id: bet for bet in before.bets}
        new = {bet.user_id: bet for bet in after.bets}
        gone = [user for user in old if user not in new]
        if gone:
            await self.session.execute(
                delete(BetRow).where(BetRow.round_id == after.id, BetRow.user_id.in_(gone))
            )
        for user, bet in new.items():
            if user not in old:
                # Versions only grow and a command places at most one bet: bet order.
                await self.session.execute(
                    insert(BetRow).values(
                        round_id=after.id,
                        user_id=user,
                        amount=bet.amount,
                        hold=bet.hold,
                        position=after.version,
                        placed_at_ms=now_ms,
                        standing=bet.standing,
                    )
                )
            elif old[user] != bet:
                await self.session.execute(
                    update(BetRow)
                    .where(BetRow.round_id == after.id, BetRow.user_id == user)
                    .values(
                        amount=bet.amount,
                        hold=bet.hold,
                        placed_at_ms=now_ms,
                        standing=bet.standing,
                    )
                )

    async def _save_outcomes(self, state: Round, event: RoundSettled) -> None:
        await self.session.execute(insert(OutcomeRow), outcome_rows(state, event))


def outcome_rows(state: Round, event: RoundSettled) -> list[dict[str, Any]]:
    """The ``outcomes`` rows of a settled round: each bettor's line, then the dealer's."""
    outcome_of = state.dealt()
    dealer_outcome = state.dealer_outcome()
    assert dealer_outcome is not None
    # The house has no user id: its line is user 0 with the role "house".
    dealer = HOUSE_USER_ID if state.dealer_id is None else state.dealer_id
    outcome_of[dealer] = dealer_outcome
    hands = {user_id: state.ruleset.evaluate(outcome) for user_id, outcome in outcome_of.items()}
    settlement = event.settlement
    # (user, role, stake, result, gross, rake, rebate, net): players, then the dealer.
    lines = [
        (bet.user_id, "player", bet.amount, o.result.value, o.gross, o.rake, o.rebate, o.net)
        for bet in state.bets
        for o in [settlement.outcomes[bet.user_id]]
    ]
    role = "house" if state.dealer_id is None else "dealer"
    lines.append((dealer, role, state.pool, role, 0, 0, 0, settlement.dealer_net))
    rows = [
        {
            "round_id": state.id,
            "user_id": user_id,
            "role": role,
            "stake": stake,
            "envelope": outcome_of[user_id],
            "kind": hands[user_id].kind.value,
            "points": hands[user_id].points,
            "multiplier": hands[user_id].multiplier,
            "result": result,
            "gross": gross,
            "rake": rake,
            "rebate": rebate,
            "net": net,
        }
        for user_id, role, stake, result, gross, rake, rebate, net in lines
    ]
    return rows

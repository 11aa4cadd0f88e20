"""Rounds as read, as the engine's ``Round`` or ``Seat``: ``round_of`` maps a ``rounds``
row (both paths' reads), ``parse_read`` the hot path's read (the player's seat, or the
round whole when it brought every bet) with what the write needs besides. Plain Python:
no statement is built or run here."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from bot.engine.round import (
    AccountKind,
    AccountRef,
    Bet,
    Grab,
    Phase,
    Round,
    RoundOrSeat,
    Seat,
    ShoeRef,
    VoidReason,
    available,
    held,
)
from bot.engine.settings import Settings


class NotOnHotPath(Exception):
    """The command needs the general path: its step starts the next round at once (a
    re-deal), or moves chips of an account the read did not bring (one not created yet).
    Nothing was written."""


class StepFailed(Exception):
    """The step of a round the hot path read failed other than by the rules, a race or
    the database's unavailability (a bug, or a row the database refused): nothing was
    written. ``round_id`` names the round, which the caller voids rather than leave it to
    fail at every try; ``__cause__`` says why."""

    def __init__(self, round_id: int) -> None:
        super().__init__(f"round {round_id}: its step failed on the hot path")
        self.round_id = round_id


@dataclass(frozen=True, slots=True)
class StepInput:
    """What a round command decides on: the round as read (whole, or the player's seat),
    the player's free chips, the participants' client seeds by user (read with a whole
    round in betting, whose close deals with them; no other step reads them) and the
    time."""

    round: RoundOrSeat
    free_chips: int
    player_seeds: Mapping[int, str]
    now_ms: int

    def whole(self) -> Round:
        """The round whole, as a deadline reads it; ``ValueError`` for a seat."""
        if not isinstance(self.round, Round):
            raise ValueError(f"round {self.round.id} was read for one player, not whole")
        return self.round


@dataclass(frozen=True, slots=True)
class RoundRead:
    """The read's answer: the round for the engine, the player's free chips and the
    participants' client seeds, the ids of the accounts the step may move chips between,
    and what else the write needs."""

    round: RoundOrSeat
    free_chips: int
    player_seeds: Mapping[int, str]
    accounts: Mapping[AccountRef, int]
    seen: bool
    table_open: bool


def _json(value: Any) -> Any:
    if value == "[]":  # most of a round's arrays until it deals: no parser for them
        return []
    return json.loads(value) if isinstance(value, str) else value


def _account(kind: str, user_id: int) -> AccountRef:
    if kind in (AccountKind.AVAILABLE.value, AccountKind.HELD.value):
        return AccountRef(AccountKind(kind), user_id)
    return AccountRef(AccountKind(kind))


def parse_read(
    row: Mapping[str, Any], user_id: int | None, settings_of: Callable[[str], Settings]
) -> RoundRead:
    """The read's row (by column name) as the engine's round: whole when the read brought
    every bet and grab, else the player's seat (their own bet and grab, and the counts)."""
    accounts: dict[AccountRef, int] = {}
    if user_id is not None:
        if row["available_id"] is not None:
            accounts[available(user_id)] = row["available_id"]
        if row["held_id"] is not None:
            accounts[held(user_id)] = row["held_id"]
    bidder = row["high_bidder"]
    if bidder is not None and bidder != user_id:
        if row["bidder_available_id"] is not None:
            accounts[available(bidder)] = row["bidder_available_id"]
        if row["bidder_held_id"] is not None:
            accounts[held(bidder)] = row["bidder_held_id"]
    shoe = None
    if row["shoe_id"] is not None:
        # Read only when the step may deal (as the participants' seeds are).
        fixed = _json(row["shoe_client_seeds"])
        shoe = ShoeRef(
            row["shoe_id"],
            bytes(row["shoe_seed"]),
            row["deal_offset"],
            None if fixed is None else tuple(fixed),
        )
    settings = settings_of(row["settings"])
    state: RoundOrSeat
    if row["all_bets"] is not None:
        for kind, owner, account_id in _json(row["all_accounts"]):
            accounts[_account(kind, owner)] = account_id
        state = round_of(row, settings=settings, shoe=shoe, **_every_bet_and_grab(row))
    elif user_id is None:
        raise ValueError(f"round {row['id']} was read for nobody and not whole")
    else:
        state = _seat_of(row, user_id, settings=settings, shoe=shoe)
    player_seeds: Mapping[int, str] = _NO_SEEDS
    if row["player_seeds"] is not None:  # betting may close: the participants' seeds
        player_seeds = MappingProxyType({user: seed for user, seed in _json(row["player_seeds"])})
    return RoundRead(
        state,
        row["free_chips"] or 0,
        player_seeds,
        accounts,
        bool(row["seen"]),
        bool(row["chat_open"]),
    )


_NO_SEEDS: Mapping[int, str] = MappingProxyType({})


def _every_bet_and_grab(row: Mapping[str, Any]) -> dict[str, Any]:
    # Positions give the order; the arrays come in the index's.
    every_bet = sorted(_json(row["all_bets"]), key=lambda bet: bet[3])
    every_grab = sorted(_json(row["all_grabs"]), key=lambda grab: grab[3])
    return {
        "bets": tuple(
            Bet(user, amount, hold, bool(standing)) for user, amount, hold, _, standing in every_bet
        ),
        "grabs": tuple(Grab(user, amount, bool(auto)) for user, amount, auto, _ in every_grab),
    }


def _seat_of(
    row: Mapping[str, Any], user_id: int, *, settings: Settings, shoe: ShoeRef | None
) -> Seat:
    bet = None
    if row["bet_amount"] is not None:
        bet = Bet(user_id, row["bet_amount"], row["bet_hold"], bool(row["bet_standing"]))
    grab = None
    if row["grab_amount"] is not None:
        grab = Grab(user_id, row["grab_amount"], bool(row["grab_auto"]))
    return Seat(
        **_state_columns(row, settings, shoe),
        player=user_id,
        bet=bet,
        grab=grab,
        bet_count=row["bet_count"],
        grab_count=row["grab_count"],
    )


def round_of(
    row: Mapping[Any, Any],
    *,
    settings: Settings,
    bets: tuple[Bet, ...],
    grabs: tuple[Grab, ...],
    shoe: ShoeRef | None,
) -> Round:
    """A ``rounds`` row (by column name; its JSON columns as text or parsed) as the
    engine's round, with the bets, grabs and shoe read beside it."""
    return Round(**_state_columns(row, settings, shoe), bets=bets, grabs=grabs)


def _state_columns(
    row: Mapping[Any, Any], settings: Settings, shoe: ShoeRef | None
) -> dict[str, Any]:
    """The engine's ``RoundState`` fields of a ``rounds`` row."""
    return {
        "id": row["id"],
        "chat_id": row["chat_id"],
        "phase": Phase(row["phase"]),
        "version": row["version"],
        "deadline_ms": row["deadline_ms"],
        "settings": settings,
        "seed": bytes(row["seed"]),
        "commitment": row["commitment"],
        "high_bidder": row["high_bidder"],
        "high_bid": row["high_bid"],
        "bid_hold": row["bid_hold"],
        "dealer_id": row["dealer_id"],
        "pool": row["pool"],
        "shares": tuple(_json(row["shares"])),
        "void_reason": VoidReason(row["void_reason"]) if row["void_reason"] else None,
        "shoe": shoe,
        "fairness": row["fairness"],
        "client_seeds": tuple(_json(row["client_seeds"]) or ()),
    }

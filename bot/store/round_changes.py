"""The hot path's mapping between rows and the engine: the read's row as a ``Round`` (for
one player, or whole when the read brought every bet), and a transition as the write's
parameters. Plain Python: no statement is built or run here."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from bot.engine import round as engine
from bot.engine.round import (
    AccountKind,
    AccountRef,
    Bet,
    BidPlaced,
    CardsDealt,
    Grab,
    Phase,
    Round,
    RoundSettled,
    RoundStarted,
    ShoeRef,
    Tally,
    Transition,
    VoidReason,
    available,
    held,
)
from bot.engine.settings import Settings
from bot.store.ledger import transaction_kind
from bot.store.round_sql import OUTCOME_COLUMNS
from bot.store.rounds import outcome_rows, round_columns


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
class RoundRead:
    """The read's answer: the round for the engine, the player's free chips, the ids of
    the accounts the step may move chips between, and what else the write needs."""

    round: Round
    free_chips: int
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
    """The read's row (by column name) as the engine's round: the player's own bet and
    grab and the counts, or every bet and grab when the read brought them."""
    bets: tuple[Bet, ...] = ()
    grabs: tuple[Grab, ...] = ()
    accounts: dict[AccountRef, int] = {}
    if user_id is not None:
        if row["bet_amount"] is not None:
            bets = (Bet(user_id, row["bet_amount"], row["bet_hold"], bool(row["bet_standing"])),)
        if row["grab_amount"] is not None:
            grabs = (Grab(user_id, row["grab_amount"], bool(row["grab_auto"])),)
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
    tally: Tally | None = Tally(row["bet_count"], row["grab_count"])
    if row["all_bets"] is not None:
        # Positions give the order; the arrays come in the index's.
        every_bet = sorted(_json(row["all_bets"]), key=lambda bet: bet[3])
        bets = tuple(
            Bet(user, amount, hold, bool(standing)) for user, amount, hold, _, standing in every_bet
        )
        every_grab = sorted(_json(row["all_grabs"]), key=lambda grab: grab[3])
        grabs = tuple(Grab(user, amount, bool(auto)) for user, amount, auto, _ in every_grab)
        for kind, owner, account_id in _json(row["all_accounts"]):
            accounts[_account(kind, owner)] = account_id
        tally = None
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
    player_seeds = None
    if row["player_seeds"] is not None:  # betting may close: the participants' seeds
        player_seeds = MappingProxyType({user: seed for user, seed in _json(row["player_seeds"])})
    state = Round(
        id=row["id"],
        chat_id=row["chat_id"],
        phase=Phase(row["phase"]),
        version=row["version"],
        deadline_ms=row["deadline_ms"],
        settings=settings_of(row["settings"]),
        seed=bytes(row["seed"]),
        commitment=row["commitment"],
        high_bidder=bidder,
        high_bid=row["high_bid"],
        bid_hold=row["bid_hold"],
        dealer_id=row["dealer_id"],
        pool=row["pool"],
        bets=bets,
        shares=tuple(_json(row["shares"])),
        grabs=grabs,
        void_reason=VoidReason(row["void_reason"]) if row["void_reason"] else None,
        shoe=shoe,
        tally=tally,
        fairness=row["fairness"],
        client_seeds=tuple(_json(row["client_seeds"]) or ()),
        player_seeds=player_seeds,
    )
    return RoundRead(
        state, row["free_chips"] or 0, accounts, bool(row["seen"]), bool(row["chat_open"])
    )


@dataclass(frozen=True, slots=True)
class RoundWrite:
    """What a transition changes, as the write's parameters."""

    #: The round's columns that changed (``version`` always does).
    round: dict[str, Any]
    gone: list[int] = field(default_factory=list)
    placed: list[dict[str, Any]] = field(default_factory=list)
    grabbed: list[dict[str, Any]] = field(default_factory=list)
    bids: list[dict[str, Any]] = field(default_factory=list)
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    tx_kind: str | None = None
    #: (account id, amount) of each posting, in account order (a fixed order of locks).
    legs: list[tuple[int, int]] = field(default_factory=list)
    #: (shoe id, cards dealt before, cards dealt now) when the step dealt from a shoe.
    shoe: tuple[int, int, int] | None = None
    #: The client seeds a shoe's first deal fixed into its order (JSON text), else None.
    shoe_client_seeds: str | None = None
    #: When the table's next round starts, if this step ended the round.
    next_round_at: int | None = None


def round_write(read: RoundRead, transition: Transition, now: int) -> RoundWrite:
    """The write of a transition; ``NotOnHotPath`` for one this path does not cover."""
    before, after = read.round, transition.round
    if any(isinstance(event, RoundStarted) for event in transition.events):
        raise NotOnHotPath("a round starts")
    next_round_at = None
    if not after.phase.is_open:
        upcoming = engine.next_round(after, now)
        if upcoming is not None and read.table_open:
            if upcoming.redeal:
                raise NotOnHotPath("a re-deal starts the next round at once")
            next_round_at = upcoming.at_ms
    legs = []
    for posting in transition.postings:
        account = read.accounts.get(posting.account)
        if account is None:
            raise NotOnHotPath(f"no account {posting.account} in the read")
        legs.append((account, posting.amount))
    legs.sort()
    old_values, new_values = round_columns(before), round_columns(after)
    changed = {column: value for column, value in new_values.items() if old_values[column] != value}
    if "client_seeds" in changed:
        changed["client_seeds"] = json.dumps(changed["client_seeds"])
    if "shares" in changed:
        changed["shares"] = json.dumps(list(after.shares))
    if not after.phase.is_open:
        changed["ended_at_ms"] = now
    old = {bet.user_id: bet for bet in before.bets}
    new = {bet.user_id: bet for bet in after.bets}
    kind = transaction_kind(transition.events)
    dealt = next((e for e in transition.events if isinstance(e, CardsDealt)), None)
    settled = next((e for e in transition.events if isinstance(e, RoundSettled)), None)
    return RoundWrite(
        round=changed,
        gone=[user for user in old if user not in new],
        placed=[
            # Versions only grow and a command places at most one bet: bet order.
            {"user_id": user, "amount": bet.amount, "hold": bet.hold, "position": after.version}
            for user, bet in new.items()
            if old.get(user) != bet
        ],
        grabbed=[
            {
                "user_id": grab.user_id,
                "amount": grab.amount,
                "position": before.grab_count + i,
                "auto": grab.auto,
            }
            for i, grab in enumerate(after.grabs[len(before.grabs) :])
        ],
        bids=[
            {"user_id": event.user_id, "amount": event.amount}
            for event in transition.events
            if isinstance(event, BidPlaced)
        ],
        outcomes=[] if settled is None else outcome_rows(after, settled),
        tx_kind=kind if legs else None,
        legs=legs,
        shoe=None
        if dealt is None or before.shoe is None
        else (before.shoe.id, before.shoe.offset, dealt.cards),
        shoe_client_seeds=_first_shoe_seeds(before, after) if dealt is not None else None,
        next_round_at=next_round_at,
    )


def _first_shoe_seeds(before: Round, after: Round) -> str | None:
    """The client seeds a shoe's first deal fixes (JSON text); None for a later deal."""
    if before.shoe is None or before.shoe.client_seeds is not None or after.shoe is None:
        return None
    fixed = after.shoe.client_seeds
    return None if fixed is None else json.dumps(list(fixed))


def postgres_parts(write: RoundWrite, *, update: bool, user: bool) -> frozenset[str]:
    """The parts of PostgreSQL's write (``round_sql``) this write needs: ``update`` a
    processed update to claim, ``user`` the player's ``users`` row to store."""
    needed = {
        "gone": bool(write.gone),
        "placed": bool(write.placed),
        "grabbed": bool(write.grabbed),
        "bids": bool(write.bids),
        "outcomes": bool(write.outcomes),
        "ledger": write.tx_kind is not None,
        "shoe": write.shoe is not None,
        "next_round": write.next_round_at is not None,
        "update": update,
        "user": user,
    }
    return frozenset(name for name, wanted in needed.items() if wanted)


def postgres_arrays(write: RoundWrite, parts: frozenset[str]) -> dict[str, Any]:
    """The write's rows as PostgreSQL's array parameters, those of the named ``parts`` only
    (a bet's statement takes six of the twenty-five)."""
    arrays: dict[str, Any] = {}
    if "gone" in parts:
        arrays["gone"] = write.gone
    if "placed" in parts:
        arrays["bet_users"] = [bet["user_id"] for bet in write.placed]
        arrays["bet_amounts"] = [bet["amount"] for bet in write.placed]
        arrays["bet_holds"] = [bet["hold"] for bet in write.placed]
        arrays["bet_positions"] = [bet["position"] for bet in write.placed]
    if "grabbed" in parts:
        arrays["grab_users"] = [grab["user_id"] for grab in write.grabbed]
        arrays["grab_amounts"] = [grab["amount"] for grab in write.grabbed]
        arrays["grab_positions"] = [grab["position"] for grab in write.grabbed]
        arrays["grab_autos"] = [grab["auto"] for grab in write.grabbed]
    if "bids" in parts:
        arrays["bid_users"] = [bid["user_id"] for bid in write.bids]
        arrays["bid_amounts"] = [bid["amount"] for bid in write.bids]
    if "ledger" in parts:
        arrays["accounts"] = [account for account, _ in write.legs]
        arrays["amounts"] = [amount for _, amount in write.legs]
    if "outcomes" in parts:
        for name, _ in OUTCOME_COLUMNS:
            arrays[f"o_{name}"] = [row[name] for row in write.outcomes]
    return arrays

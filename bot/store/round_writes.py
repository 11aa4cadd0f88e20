"""Each round step's write, described once: a pure mapping from the engine's transition to
the rows it writes, whichever path runs it.

``describe`` maps one transition (a bid, bet, change, grab, deadline, window moved,
settlement, void), ``describe_placed`` the standing bets placed as betting opens (one
compare-and-set for all of them, a ledger transaction per bet) and ``describe_start`` a
new round's row. The write of each dialect (``bot.store.round_writers``) turns a
description into its statements; the hot path and the general path run the same ones.
No statement is built or run here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.engine import round as engine
from bot.engine.round import (
    AccountRef,
    Bet,
    BetPlaced,
    BidPlaced,
    CardsDealt,
    Grab,
    Posting,
    Round,
    RoundOrSeat,
    RoundSettled,
    RoundStarted,
    RoundState,
    Transition,
)
from bot.store.ledger import UnbalancedTransaction, transaction_kind

#: ``outcomes.role`` of the dealer's line: a player who bid, or the group's bank.
DEALER_ROLES = ("dealer", "house")
#: The house has no user id: its outcome line is user 0 with the role "house".
HOUSE_USER_ID = 0


class UnknownAccount(Exception):
    """A posting moves chips of an account the caller did not give an id for (one not
    created yet): nothing is described."""


def stored_client_seeds(seeds: tuple[str, ...] | None, derivation: int) -> list[str] | None:
    """Client seeds as a JSON column stores them: ``NULL`` for derivation 1 (none took
    part) and for a shoe's not fixed yet."""
    return None if seeds is None or derivation == 1 else list(seeds)


def round_columns(state: RoundOrSeat) -> dict[str, object]:
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


#: The round's columns stored as JSON: written as a parameter of JSON text.
JSON_COLUMNS = frozenset({"settings", "shares", "client_seeds"})


def _changed_columns(before: RoundOrSeat, after: RoundOrSeat) -> dict[str, Any]:
    old = round_columns(before)
    return {column: value for column, value in round_columns(after).items() if old[column] != value}


def _as_stored(columns: dict[str, Any]) -> dict[str, Any]:
    for column in JSON_COLUMNS & columns.keys():
        value = columns[column]
        columns[column] = None if value is None else json.dumps(value)
    return columns


@dataclass(frozen=True, slots=True)
class LedgerWrite:
    """One ledger transaction of a step: its kind and its postings as (account id,
    amount) in account order (the database adds them to the balances in that order, and
    a fixed order of row locks keeps two writers from deadlocking)."""

    kind: str
    legs: list[tuple[int, int]]


@dataclass(frozen=True, slots=True)
class RoundWrite:
    """What a round step writes: the compare-and-set of the round's version and the rows
    the step adds or changes."""

    round_id: int
    chat_id: int
    old_version: int
    now: int
    #: The round's columns that changed (``version`` always does), as stored.
    columns: dict[str, Any]
    gone: list[int] = field(default_factory=list)
    placed: list[dict[str, Any]] = field(default_factory=list)
    grabbed: list[dict[str, Any]] = field(default_factory=list)
    bids: list[dict[str, Any]] = field(default_factory=list)
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    transactions: list[LedgerWrite] = field(default_factory=list)
    #: (shoe id, cards dealt before, cards dealt now) when the step dealt from a shoe.
    shoe: tuple[int, int, int] | None = None
    #: The client seeds a shoe's first deal fixed into its order (JSON text), else None.
    shoe_client_seeds: str | None = None
    #: When the table's next round starts, if this step ended the round.
    next_round_at: int | None = None
    #: The step ended the round in a re-deal: the next round starts at once (its own
    #: step, ``describe_start``, in the same transaction).
    redeal: bool = False


def accounts_moved(transitions: Iterable[Transition[RoundOrSeat]]) -> set[AccountRef]:
    """The accounts the transitions' postings move chips of."""
    return {posting.account for step in transitions for posting in step.postings}


def _ledger(
    kind: str, postings: Sequence[Posting], accounts: Mapping[AccountRef, int]
) -> LedgerWrite | None:
    """The transaction of ``postings`` (the engine nets them per account); ``None`` when
    there are none. ``UnbalancedTransaction`` unless they sum to zero (a bug: the
    database refuses it too)."""
    if sum(posting.amount for posting in postings) != 0:
        raise UnbalancedTransaction(f"postings of {kind} do not sum to zero")
    legs = []
    for posting in postings:
        account = accounts.get(posting.account)
        if account is None:
            raise UnknownAccount(posting.account)
        legs.append((account, posting.amount))
    legs.sort()
    return LedgerWrite(kind, legs) if legs else None


def _bets_held(state: RoundOrSeat) -> tuple[Bet, ...]:
    """The bets ``state`` holds: every one, or its player's."""
    if isinstance(state, Round):
        return state.bets
    return () if state.bet is None else (state.bet,)


def _grabs_held(state: RoundOrSeat) -> tuple[Grab, ...]:
    """The grabs ``state`` holds (in grab order): every one, or its player's."""
    if isinstance(state, Round):
        return state.grabs
    return () if state.grab is None else (state.grab,)


def describe(
    before: RoundOrSeat,
    transition: Transition[RoundOrSeat],
    now: int,
    *,
    accounts: Mapping[AccountRef, int],
    table_open: bool,
) -> RoundWrite:
    """The write of one transition of ``before``. ``accounts``: the ids of the accounts
    its postings move (``UnknownAccount`` if one is missing); ``table_open``: whether the
    table goes on to a next round once this one ends."""
    after = transition.round
    if any(isinstance(event, RoundStarted) for event in transition.events):
        raise ValueError("a round's start is described by describe_start")
    next_round_at, redeal = None, False
    if not after.phase.is_open and table_open:
        upcoming = engine.next_round(after, now)
        if upcoming is not None:
            redeal = upcoming.redeal
            next_round_at = None if redeal else upcoming.at_ms
    ledger = _ledger(transaction_kind(transition.events), transition.postings, accounts)
    changed = _changed_columns(before, after)
    if not after.phase.is_open:
        changed["ended_at_ms"] = now
    old = {bet.user_id: bet for bet in _bets_held(before)}
    new = {bet.user_id: bet for bet in _bets_held(after)}
    old_grabs = len(_grabs_held(before))
    dealt = next((e for e in transition.events if isinstance(e, CardsDealt)), None)
    settled = next((e for e in transition.events if isinstance(e, RoundSettled)), None)
    outcomes: list[dict[str, Any]] = []
    if settled is not None:
        if not isinstance(after, Round):  # the engine settles a whole round only
            raise ValueError(f"round {before.id}: settled from one player's seat")
        outcomes = outcome_rows(after, settled)
    return RoundWrite(
        round_id=before.id,
        chat_id=before.chat_id,
        old_version=before.version,
        now=now,
        columns=_as_stored(changed),
        gone=[user for user in old if user not in new],
        placed=[
            # Versions only grow and a step places at most one bet: bet order.
            _bet_row(bet, after.version)
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
            for i, grab in enumerate(_grabs_held(after)[old_grabs:])
        ],
        bids=[
            {"user_id": event.user_id, "amount": event.amount}
            for event in transition.events
            if isinstance(event, BidPlaced)
        ],
        outcomes=outcomes,
        transactions=[] if ledger is None else [ledger],
        shoe=None
        if dealt is None or before.shoe is None
        else (before.shoe.id, before.shoe.offset, dealt.cards),
        shoe_client_seeds=_first_shoe_seeds(before, after) if dealt is not None else None,
        next_round_at=next_round_at,
        redeal=redeal,
    )


def describe_placed(
    before: Round,
    steps: Sequence[Transition[Round]],
    now: int,
    *,
    accounts: Mapping[AccountRef, int],
) -> RoundWrite:
    """The write of steps that each placed one new bet (standing bets placed as betting
    opens): one compare-and-set from ``before``'s version to the last step's, each bet at
    its own step's place in the bet order, and a ledger transaction per bet."""
    if not steps:
        raise ValueError("no bets placed")
    after = steps[-1].round
    placed, transactions = [], []
    for step in steps:
        (event,) = step.events
        if not isinstance(event, BetPlaced) or event.previous:
            raise ValueError(f"not a new bet: {step.events}")
        bet = step.round.bet_of(event.user_id)
        assert bet is not None
        placed.append(_bet_row(bet, step.round.version))
        ledger = _ledger(transaction_kind(step.events), step.postings, accounts)
        if ledger is not None:
            transactions.append(ledger)
    return RoundWrite(
        round_id=before.id,
        chat_id=before.chat_id,
        old_version=before.version,
        now=now,
        columns=_as_stored(_changed_columns(before, after)),
        placed=placed,
        transactions=transactions,
    )


def _bet_row(bet: Bet, position: int) -> dict[str, Any]:
    return {
        "user_id": bet.user_id,
        "amount": bet.amount,
        "hold": bet.hold,
        "position": position,
        "standing": bet.standing,
    }


def describe_start(state: Round, now: int) -> dict[str, Any]:
    """A new round's ``rounds`` row, as stored (its id comes from the database)."""
    return _as_stored(
        {
            "chat_id": state.chat_id,
            "commitment": state.commitment,
            "seed": state.seed,
            "settings": state.settings.to_dict(),
            "ruleset": state.settings.ruleset,
            "started_at_ms": now,
            "shoe_id": state.shoe.id if state.shoe else None,
            "deal_offset": state.shoe.offset if state.shoe else None,
            "fairness": state.fairness,
            **round_columns(state),
        }
    )


def _first_shoe_seeds(before: RoundState, after: RoundState) -> str | None:
    """The client seeds a shoe's first deal fixes (JSON text); None for a later deal."""
    if before.shoe is None or before.shoe.client_seeds is not None or after.shoe is None:
        return None
    fixed = after.shoe.client_seeds
    return None if fixed is None else json.dumps(list(fixed))


def outcome_rows(state: Round, event: RoundSettled) -> list[dict[str, Any]]:
    """The ``outcomes`` rows of a settled round: each bettor's line, then the dealer's."""
    outcome_of = state.dealt()
    dealer_outcome = state.dealer_outcome()
    assert dealer_outcome is not None
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
    return [
        {
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

"""The round as data: phases, commands and the money they move. Pure.

A round goes ``bidding`` -> ``betting`` -> ``grabbing`` -> ``settled``, or ends ``void``.
When the house deals (``dealer house``) there is no bidding: the round opens for bets
with the group's bank as the pool. Card games have no grabbing: the cards are dealt to
everyone as betting closes and the round settles at once.
Each command has a ``verify_*`` function that raises ``RuleViolation`` and an applying
function that returns a ``Transition``: the new round (its ``version`` one higher), the
events that happened, and the balanced postings that move chips. Time (``now_ms``) and
the seed are arguments; nothing here reads a clock, draws randomness or does I/O.

A command takes what its rules need: a ``Round`` (every bet and grab) where they need
every bet (settling, dealing, voiding, a deadline), and otherwise a player's ``Seat``
too (the round's state, the player's own bet and grab, and the counts), whose step gives
a seat. The deal takes the participants' client seeds as an argument.

Holds cover the worst case, so nobody can lose chips they did not hold: a bid holds the
bid plus the dealer's fees, a bet holds stake x the ruleset's largest loss multiplier.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, TypeVar, overload

from bot.engine.errors import NotDue, RuleViolation
from bot.engine.settings import Settings
from bot.engine.settlement import Settlement, Stake, settle
from bot.rules import fairness as fair
from bot.rules.cards import HAND_SIZE
from bot.rules.ruleset import AnyHand, Ruleset, get_ruleset
from bot.rules.split import commitment

UserId = int
#: ``Settings.dealer`` when the group's bank deals; ``"bid"`` when players bid for it.
HOUSE_DEALER = "house"


class Phase(StrEnum):
    """Where a round is."""

    BIDDING = "bidding"
    BETTING = "betting"
    GRABBING = "grabbing"
    SETTLED = "settled"
    VOID = "void"

    @property
    def is_open(self) -> bool:
        """True while the round still has a deadline to meet."""
        return self in (Phase.BIDDING, Phase.BETTING, Phase.GRABBING)


class VoidReason(StrEnum):
    """Why a round ended without settling."""

    NO_BIDS = "no_bids"
    NO_BETS = "no_bets"
    REDEAL = "redeal"
    ERROR = "error"


class AccountKind(StrEnum):
    """The accounts a round moves chips between (per group)."""

    AVAILABLE = "available"
    HELD = "held"
    HOUSE = "house"
    MINT = "mint"
    BANK = "bank"


@dataclass(frozen=True, slots=True)
class AccountRef:
    """An account of a group: a player's available or held chips, the house or the mint."""

    kind: AccountKind
    user_id: UserId | None = None


#: The group's platform account: rake and dealer fees in, rebates out. It never deals:
#: when "the house deals" (``dealer house``), the dealer is the ``BANK``.
HOUSE = AccountRef(AccountKind.HOUSE)
MINT = AccountRef(AccountKind.MINT)
#: The group's bank: admins fund it, and it is the dealer when the house deals.
BANK = AccountRef(AccountKind.BANK)


def available(user_id: UserId) -> AccountRef:
    """The account of a player's chips free to bid or bet."""
    return AccountRef(AccountKind.AVAILABLE, user_id)


def held(user_id: UserId) -> AccountRef:
    """The account of a player's chips held by a live bid or bet."""
    return AccountRef(AccountKind.HELD, user_id)


@dataclass(frozen=True, slots=True)
class Posting:
    """One leg of a ledger transaction: ``amount`` cents into (or, negative, out of) an account."""

    account: AccountRef
    amount: int


@dataclass(frozen=True, slots=True)
class Bet:
    """A player's stake and the chips it holds (``standing``: placed for them by their
    standing bet, ``/autobet``, as betting opened; a bet they change is their own again)."""

    user_id: UserId
    amount: int
    hold: int
    standing: bool = False


@dataclass(frozen=True, slots=True)
class Grab:
    """An outcome taken by a participant: an envelope share grabbed, or cards dealt (``auto``:
    taken for them, at the deadline or as the cards are dealt)."""

    user_id: UserId
    amount: int
    auto: bool = False


# -- events -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RetiredShoe:
    """A shoe replaced (spent) or retired (the table changed game) as this round starts:
    its seed is revealed now."""

    id: int
    seed: bytes


@dataclass(frozen=True, slots=True)
class RoundStarted:
    """A round opened: for bids, or for bets when the house deals. ``commitment`` is the
    SHA-256 of the seed its outcomes come from (the shoe's, for a shoe game);
    ``retired_shoe`` is the shoe this one replaced, if it was replaced for this round."""

    commitment: str
    deadline_ms: int
    retired_shoe: RetiredShoe | None = None


@dataclass(frozen=True, slots=True)
class BidPlaced:
    """A new highest bid; ``outbid`` is whoever it displaced (their hold is released)."""

    user_id: UserId
    amount: int
    outbid: UserId | None
    outbid_amount: int


@dataclass(frozen=True, slots=True)
class DealerChosen:
    """Bidding closed: the highest bidder deals with ``pool`` chips; betting is open."""

    dealer_id: UserId
    pool: int
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class BetPlaced:
    """A bet was placed (``previous`` 0) or changed from ``previous``."""

    user_id: UserId
    amount: int
    previous: int


@dataclass(frozen=True, slots=True)
class BetCancelled:
    """A player took their bet back."""

    user_id: UserId
    amount: int


@dataclass(frozen=True, slots=True)
class GrabbingStarted:
    """Betting closed; the envelope of ``total`` cents waits in ``count`` shares."""

    count: int
    total: int
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class CardsDealt:
    """Betting closed and ``count`` hands of ``cards`` cards in all were dealt (card
    games have no grabbing)."""

    count: int
    cards: int


@dataclass(frozen=True, slots=True)
class Grabbed:
    """A participant took the next share (``auto``: taken for them at the deadline)."""

    user_id: UserId
    amount: int
    auto: bool


@dataclass(frozen=True, slots=True)
class RoundSettled:
    """The round settled; the seed is revealed."""

    settlement: Settlement
    seed: bytes


@dataclass(frozen=True, slots=True)
class RoundVoided:
    """The round ended without settling; every hold was released. The seed is revealed."""

    reason: VoidReason
    seed: bytes


@dataclass(frozen=True, slots=True)
class WindowMoved:
    """The window of ``phase`` opens later than it did, when the group can see it (its
    board reached the group late): its deadline is now ``deadline_ms``."""

    phase: Phase
    deadline_ms: int


Event = (
    RoundStarted
    | WindowMoved
    | BidPlaced
    | DealerChosen
    | BetPlaced
    | BetCancelled
    | GrabbingStarted
    | CardsDealt
    | Grabbed
    | RoundSettled
    | RoundVoided
)


# -- the round ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShoeRef:
    """The shoe a round deals from: its id, seed (secret until the shoe is replaced) and
    how many of its cards were dealt before this round. ``client_seeds``: those its order
    was derived with (derivation 2), fixed by the first round dealt from it; None until
    then."""

    id: int
    seed: bytes
    offset: int
    client_seeds: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class RoundState:
    """A round's own state, as its row holds it, without its bets and grabs: what every
    step reads. ``Round`` adds every bet and grab, ``Seat`` one player's. Immutable:
    commands return a new one, their ``version`` one higher."""

    id: int
    chat_id: int
    phase: Phase
    version: int
    deadline_ms: int
    settings: Settings
    seed: bytes
    commitment: str
    high_bidder: UserId | None = None
    high_bid: int = 0
    bid_hold: int = 0
    dealer_id: UserId | None = None
    pool: int = 0
    shares: tuple[int, ...] = ()
    void_reason: VoidReason | None = None
    shoe: ShoeRef | None = None
    #: How the deal seed derives from the server seed (``bot.rules.fairness``): 1 for
    #: rounds before client seeds, 2 since (a shoe round: its shoe's derivation).
    fairness: int = fair.V1
    #: The client seeds the deal was derived with (canonical order), fixed as it is dealt;
    #: for a shoe round, the shoe's.
    client_seeds: tuple[str, ...] = ()

    @property
    def ruleset(self) -> Ruleset[Any]:
        """The ruleset this round is played with (its game as its settings play it)."""
        return self.settings.played_ruleset()

    @property
    def house_deals(self) -> bool:
        """True when the group's bank is the dealer (no bidding, no dealer hold)."""
        return self.settings.dealer == HOUSE_DEALER

    def cards_dealt(self) -> tuple[int, int]:
        """The first and last positions (from 1) of the cards this card round was dealt
        in its deck or shoe."""
        offset = self.shoe.offset if self.shoe is not None else 0
        return offset + 1, offset + HAND_SIZE * len(self.shares)


@dataclass(frozen=True, slots=True)
class Round(RoundState):
    """A round whole: its state with every bet (in bet order) and every grab (in grab
    order). Settling, dealing and voiding take one."""

    bets: tuple[Bet, ...] = ()
    grabs: tuple[Grab, ...] = ()

    @property
    def bet_count(self) -> int:
        """How many bets the round has."""
        return len(self.bets)

    @property
    def grab_count(self) -> int:
        """How many outcomes were grabbed (or dealt) so far."""
        return len(self.grabs)

    @property
    def participant_count(self) -> int:
        """How many grab: the bettors and, unless the house deals, the dealer."""
        return len(self.bets) + (0 if self.dealer_id is None else 1)

    def takes_part(self, user_id: UserId) -> bool:
        """True for the dealer and the bettors."""
        return user_id == self.dealer_id or self.bet_of(user_id) is not None

    def bet_of(self, user_id: UserId) -> Bet | None:
        """The user's bet in this round, if any."""
        return next((bet for bet in self.bets if bet.user_id == user_id), None)

    def grab_of(self, user_id: UserId) -> Grab | None:
        """The user's grab in this round, if any."""
        return next((grab for grab in self.grabs if grab.user_id == user_id), None)

    def with_bet(self, user_id: UserId, placed: Bet | None, *, version: int | None = None) -> Round:
        """The round with the user's bet placed, changed (same place in the bet order) or,
        with ``None``, gone; at ``version`` if given (a step's: one copy, not two)."""
        if placed is None:
            bets = tuple(bet for bet in self.bets if bet.user_id != user_id)
        elif self.bet_of(user_id) is None:
            bets = (*self.bets, placed)
        else:
            bets = tuple(placed if bet.user_id == user_id else bet for bet in self.bets)
        return dataclasses.replace(
            self, bets=bets, version=self.version if version is None else version
        )

    def with_grab(self, taken: Grab, *, version: int) -> Round:
        """The round with one more grab, at the step's ``version``."""
        return dataclasses.replace(self, grabs=(*self.grabs, taken), version=version)

    def dealt(self) -> dict[UserId, int]:
        """What each participant grabbed (or was dealt) so far."""
        return {grab.user_id: grab.amount for grab in self.grabs}

    def hands(self) -> dict[UserId, Any]:
        """The hand each participant's outcome makes, by the round's ruleset."""
        ruleset = self.ruleset
        return {grab.user_id: ruleset.evaluate(grab.amount) for grab in self.grabs}

    def dealer_outcome(self) -> int | None:
        """The dealer's outcome once it is known: the dealer's grab, or for the house the
        last share (taken after every player's)."""
        if self.house_deals:
            if self.shares and len(self.grabs) == len(self.bets):
                return self.shares[len(self.bets)]
            return None
        grab = self.grab_of(self.dealer_id) if self.dealer_id is not None else None
        return grab.amount if grab is not None else None

    def dealer_hand(self) -> AnyHand | None:
        """The dealer's hand once it is known."""
        outcome = self.dealer_outcome()
        return None if outcome is None else self.ruleset.evaluate(outcome)

    @property
    def participants(self) -> tuple[UserId, ...]:
        """Who grabs: the bettors in bet order, then the dealer (unless the house deals:
        its share is the one left after every player's)."""
        dealer = () if self.dealer_id is None else (self.dealer_id,)
        return tuple(bet.user_id for bet in self.bets) + dealer

    def holds(self) -> dict[UserId, int]:
        """Chips each user has held by this round right now."""
        result: dict[UserId, int] = {}
        if self.phase is Phase.BIDDING and self.high_bidder is not None:
            result[self.high_bidder] = self.bid_hold
        if self.phase in (Phase.BETTING, Phase.GRABBING):
            if self.dealer_id is not None:
                result[self.dealer_id] = self.bid_hold
            for bet in self.bets:
                result[bet.user_id] = result.get(bet.user_id, 0) + bet.hold
        return result


@dataclass(frozen=True, slots=True)
class Seat(RoundState):
    """A round as one player's command needs it: its state, the player's own bet and grab,
    and how many bets and grabs it has in all. Bids, bets, changes and grabs but the last
    take one; the last grab settles, and settling takes a ``Round``."""

    player: UserId = 0
    bet: Bet | None = None
    grab: Grab | None = None
    bet_count: int = 0
    grab_count: int = 0

    @property
    def participant_count(self) -> int:
        """How many grab: the bettors and, unless the house deals, the dealer."""
        return self.bet_count + (0 if self.dealer_id is None else 1)

    def _own(self, user_id: UserId) -> None:
        if user_id != self.player:
            raise ValueError(f"the seat of user {self.player} asked for user {user_id}'s")

    def takes_part(self, user_id: UserId) -> bool:
        """True for the dealer and the bettors (of the seat's player only)."""
        return user_id == self.dealer_id or self.bet_of(user_id) is not None

    def bet_of(self, user_id: UserId) -> Bet | None:
        """The seat's player's bet, if any (``ValueError`` for anyone else's)."""
        self._own(user_id)
        return self.bet

    def grab_of(self, user_id: UserId) -> Grab | None:
        """The seat's player's grab, if any (``ValueError`` for anyone else's)."""
        self._own(user_id)
        return self.grab

    def with_bet(self, user_id: UserId, placed: Bet | None, *, version: int | None = None) -> Seat:
        """The seat with its player's bet placed, changed or, with ``None``, gone; at
        ``version`` if given."""
        self._own(user_id)
        count = self.bet_count + (placed is not None) - (self.bet is not None)
        return dataclasses.replace(
            self, bet=placed, bet_count=count, version=self.version if version is None else version
        )

    def with_grab(self, taken: Grab, *, version: int) -> Seat:
        """The seat with its player's grab, at the step's ``version``."""
        self._own(taken.user_id)
        return dataclasses.replace(
            self, grab=taken, grab_count=self.grab_count + 1, version=version
        )


#: A round as a player's command reads it: whole, or the player's seat.
RoundOrSeat = Round | Seat
_R_co = TypeVar("_R_co", bound=RoundState, covariant=True)


@dataclass(frozen=True, slots=True)
class Transition(Generic[_R_co]):
    """What a command did: the new round, what happened, and the chips it moves (netted
    per account: ``merge_postings``)."""

    round: _R_co
    events: tuple[Event, ...]
    postings: tuple[Posting, ...] = ()


#: A step keeps the kind of round it was given: a seat's step gives a seat.
_S = TypeVar("_S", bound=RoundState)


def _next(state: _S, **changes: object) -> _S:
    return dataclasses.replace(state, version=state.version + 1, **changes)  # type: ignore[arg-type]


def _move(amount: int, source: AccountRef, target: AccountRef) -> tuple[Posting, ...]:
    if amount == 0:
        return ()
    return (Posting(source, -amount), Posting(target, amount))


def _hold(user_id: UserId, amount: int) -> tuple[Posting, ...]:
    return _move(amount, available(user_id), held(user_id))


def _release(user_id: UserId, amount: int) -> tuple[Posting, ...]:
    return _move(amount, held(user_id), available(user_id))


def merge_postings(postings: Iterable[Posting]) -> tuple[Posting, ...]:
    """Net the postings per account, dropping accounts that net to zero."""
    totals: dict[AccountRef, int] = {}
    for posting in postings:
        totals[posting.account] = totals.get(posting.account, 0) + posting.amount
    return tuple(Posting(account, amount) for account, amount in totals.items() if amount)


# -- start --------------------------------------------------------------------------------


def start_round(
    *,
    round_id: int,
    chat_id: int,
    settings: Settings,
    seed: bytes,
    now_ms: int,
    bank: int = 0,
    shoe: ShoeRef | None = None,
    retired_shoe: RetiredShoe | None = None,
    derivation: int = fair.CURRENT,
) -> Transition[Round]:
    """Open a round. ``seed`` (32 random bytes from the caller) fixes the outcomes with the
    participants' client seeds (seed ``derivation``, ``bot.rules.fairness``: for a shoe
    game, the shoe's); only its commitment is published until the round ends. A shoe game
    deals from ``shoe`` instead (whose seed stays secret until the shoe is replaced).

    When the house deals the round opens straight for bets, with ``bank`` (the group's
    bank balance) as the pool; otherwise it opens for bids.
    """
    settings.validate()
    ruleset = get_ruleset(settings.ruleset)
    if ruleset.shoe_decks and shoe is None:
        raise ValueError(f"{ruleset.name} deals from a shoe; start_round needs one")
    house = settings.dealer == HOUSE_DEALER
    if bank < 0:
        raise ValueError("the bank cannot be negative")
    kept_shoe = shoe if ruleset.shoe_decks else None
    if derivation not in fair.VERSIONS:
        raise ValueError(f"no seed derivation version {derivation!r}")
    window = settings.bet_seconds if house else settings.bid_seconds
    state = Round(
        id=round_id,
        chat_id=chat_id,
        phase=Phase.BETTING if house else Phase.BIDDING,
        version=1,
        deadline_ms=now_ms + window * 1000,
        settings=settings,
        seed=seed,
        commitment=commitment(kept_shoe.seed if kept_shoe is not None else seed),
        pool=bank if house else 0,
        shoe=kept_shoe,
        fairness=derivation,
    )
    return Transition(state, (RoundStarted(state.commitment, state.deadline_ms, retired_shoe),))


def _require_phase(state: RoundState, phase: Phase, now_ms: int) -> None:
    if state.phase is not phase:
        raise RuleViolation(f"not_{phase.value}", phase=state.phase.value)
    if now_ms >= state.deadline_ms:
        raise RuleViolation("window_closed", phase=state.phase.value)


# -- bidding ------------------------------------------------------------------------------


def minimum_bid(state: RoundState) -> int:
    """The least the next bid may be: ``min_bid``, and the highest bid plus the increment."""
    if state.high_bidder is None:
        return state.settings.min_bid
    return max(state.settings.min_bid, state.high_bid + state.settings.bid_increment)


def verify_bid(
    state: RoundState, user_id: UserId, amount: int, *, free_chips: int, now_ms: int
) -> None:
    """Raise ``RuleViolation`` unless ``user_id`` may bid ``amount`` now.

    ``free_chips`` is the bidder's available balance (their own current hold is
    added back, since a raise releases it).
    """
    _require_phase(state, Phase.BIDDING, now_ms)
    least = minimum_bid(state)
    if amount < least:
        raise RuleViolation("bid_too_low", amount=amount, minimum=least)
    own_hold = state.bid_hold if state.high_bidder == user_id else 0
    needed = amount + state.settings.dealer_fees
    if free_chips + own_hold < needed:
        raise RuleViolation("not_enough_chips", needed=needed, available=free_chips + own_hold)


def bid(state: _S, user_id: UserId, amount: int, *, free_chips: int, now_ms: int) -> Transition[_S]:
    """Bid to be the dealer. The previous highest bidder's hold is released at once."""
    verify_bid(state, user_id, amount, free_chips=free_chips, now_ms=now_ms)
    hold = amount + state.settings.dealer_fees
    postings: tuple[Posting, ...] = ()
    if state.high_bidder is not None:
        postings += _release(state.high_bidder, state.bid_hold)
    postings += _hold(user_id, hold)
    outbid = state.high_bidder if state.high_bidder != user_id else None
    event = BidPlaced(user_id, amount, outbid, state.high_bid if outbid is not None else 0)
    new_state = _next(state, high_bidder=user_id, high_bid=amount, bid_hold=hold)
    return Transition(new_state, (event,), merge_postings(postings))


# -- betting ------------------------------------------------------------------------------


def check_bet_limits(settings: Settings, amount: int) -> None:
    """Raise ``RuleViolation`` unless the table's limits allow a bet of ``amount``."""
    if amount < settings.min_bet:
        raise RuleViolation("bet_too_small", amount=amount, minimum=settings.min_bet)
    if amount > settings.max_bet:
        raise RuleViolation("bet_too_large", amount=amount, maximum=settings.max_bet)


def verify_bet(
    state: RoundOrSeat, user_id: UserId, amount: int, *, free_chips: int, now_ms: int
) -> None:
    """Raise ``RuleViolation`` unless ``user_id`` may bet ``amount`` now (0 cancels a bet)."""
    _require_phase(state, Phase.BETTING, now_ms)
    if user_id == state.dealer_id:
        raise RuleViolation("dealer_cannot_bet")
    current = state.bet_of(user_id)
    if amount == 0:
        if current is None:
            raise RuleViolation("no_bet_to_cancel")
        return
    check_bet_limits(state.settings, amount)
    if current is not None and current.amount == amount:
        raise RuleViolation("bet_unchanged", amount=amount)
    seats = state.ruleset.max_bettors
    if current is None and seats is not None and state.bet_count >= seats:
        raise RuleViolation("table_full", seats=seats)
    needed = amount * state.ruleset.largest_loss_multiplier
    own_hold = current.hold if current is not None else 0
    if free_chips + own_hold < needed:
        raise RuleViolation(
            "not_enough_chips_to_bet",
            needed=needed,
            available=free_chips + own_hold,
            multiplier=state.ruleset.largest_loss_multiplier,
        )


@overload
def bet(
    state: Round, user_id: UserId, amount: int, *, free_chips: int, now_ms: int
) -> Transition[Round]: ...
@overload
def bet(
    state: RoundOrSeat, user_id: UserId, amount: int, *, free_chips: int, now_ms: int
) -> Transition[RoundOrSeat]: ...
def bet(
    state: RoundOrSeat, user_id: UserId, amount: int, *, free_chips: int, now_ms: int
) -> Transition[RoundOrSeat]:
    """Place, change (same place in the bet order) or, with ``amount == 0``, cancel a bet."""
    verify_bet(state, user_id, amount, free_chips=free_chips, now_ms=now_ms)
    current = state.bet_of(user_id)
    postings: tuple[Posting, ...] = ()
    if current is not None:
        postings += _release(user_id, current.hold)
    if amount == 0:
        assert current is not None  # verify_bet refuses to cancel a missing bet
        return Transition(
            state.with_bet(user_id, None, version=state.version + 1),
            (BetCancelled(user_id, current.amount),),
            merge_postings(postings),
        )
    new_bet = Bet(user_id, amount, amount * state.ruleset.largest_loss_multiplier)
    postings += _hold(user_id, new_bet.hold)
    event = BetPlaced(user_id, amount, current.amount if current is not None else 0)
    after = state.with_bet(user_id, new_bet, version=state.version + 1)
    return Transition(after, (event,), merge_postings(postings))


# -- grabbing -----------------------------------------------------------------------------


def verify_grab(state: RoundOrSeat, user_id: UserId, now_ms: int) -> None:
    """Raise ``RuleViolation`` unless ``user_id`` may grab now.

    A second grab raises ``already_grabbed`` with the share they got.
    """
    _require_phase(state, Phase.GRABBING, now_ms)
    if not state.takes_part(user_id):
        raise RuleViolation("not_in_round")
    existing = state.grab_of(user_id)
    if existing is not None:
        raise RuleViolation("already_grabbed", amount=existing.amount)


@overload
def grab(state: Round, user_id: UserId, now_ms: int) -> Transition[Round]: ...
@overload
def grab(state: RoundOrSeat, user_id: UserId, now_ms: int) -> Transition[RoundOrSeat]: ...
def grab(state: RoundOrSeat, user_id: UserId, now_ms: int) -> Transition[RoundOrSeat]:
    """Take the next share of the envelope. The last grab settles the round, so it takes
    the ``Round``; any other takes the player's ``Seat`` too."""
    verify_grab(state, user_id, now_ms)
    taken = Grab(user_id, state.shares[state.grab_count])
    after = state.with_grab(taken, version=state.version + 1)
    events: tuple[Event, ...] = (Grabbed(user_id, taken.amount, False),)
    if after.grab_count < after.participant_count:
        return Transition(after, events)
    if not isinstance(after, Round):
        raise ValueError(f"round {state.id}: the last grab settles; it takes the whole round")
    final = _finish(after)
    return Transition(final.round, events + final.events, final.postings)


# -- deadlines ----------------------------------------------------------------------------


def is_due(state: RoundState, now_ms: int) -> bool:
    """True when the round is open and its deadline has passed."""
    return state.phase.is_open and now_ms >= state.deadline_ms


#: How late a window may open, against when its board reaches the group, before it is
#: moved (docs/rules.md §1): a board's round trip and a turn of the bot's rate; the board
#: shows whole seconds (rounded up), so a board on time is within a second of the truth.
WINDOW_LATE_MS = 500


def window_ms(state: RoundState) -> int:
    """How long the window of the round's current phase lasts."""
    settings = state.settings
    seconds = {
        Phase.BIDDING: settings.bid_seconds,
        Phase.BETTING: settings.bet_seconds,
        Phase.GRABBING: settings.grab_seconds,
    }.get(state.phase)
    if seconds is None:
        raise NotDue("round_closed", phase=state.phase.value)
    return seconds * 1000


def move_window(state: _S, phase: Phase, opens_at_ms: int) -> Transition[_S]:
    """Open the window of ``phase`` at ``opens_at_ms`` (docs/rules.md §1: a window counts
    from when the group can see it): its deadline becomes that plus the window's length.
    Raises ``NotDue`` when the round has left ``phase``, or when the window opened at
    most ``WINDOW_LATE_MS`` earlier than that: a deadline is only ever moved later."""
    if state.phase is not phase:
        raise NotDue("phase_over", phase=state.phase.value)
    deadline = opens_at_ms + window_ms(state)
    if deadline - state.deadline_ms <= WINDOW_LATE_MS:
        raise NotDue("window_on_time", deadline_ms=state.deadline_ms)
    return Transition(_next(state, deadline_ms=deadline), (WindowMoved(phase, deadline),))


def advance(state: Round, now_ms: int, *, player_seeds: Mapping[UserId, str]) -> Transition[Round]:
    """Apply the deadline of the current phase. Raises ``NotDue`` before it has passed.

    Bidding ends with a dealer (or void: no bids); betting ends in grabbing (or void: no
    bets); grabbing ends with the missing shares grabbed for their owners, in bet order
    and the dealer last, and the round settles. ``player_seeds``: the client seeds the
    participants have set now, by user (those who set one); the close of betting deals
    with them (derivation 2), no other step reads them.
    """
    if not state.phase.is_open:
        raise NotDue("round_closed", phase=state.phase.value)
    if now_ms < state.deadline_ms:
        raise NotDue("not_due", deadline_ms=state.deadline_ms)
    settings = state.settings
    if state.phase is Phase.BIDDING:
        if state.high_bidder is None:
            return void(state, VoidReason.NO_BIDS)
        deadline = now_ms + settings.bet_seconds * 1000
        new_state = _next(
            state,
            phase=Phase.BETTING,
            dealer_id=state.high_bidder,
            pool=state.high_bid,
            deadline_ms=deadline,
        )
        return Transition(new_state, (DealerChosen(state.high_bidder, state.high_bid, deadline),))
    if state.phase is Phase.BETTING:
        if not state.bet_count:
            return void(state, VoidReason.NO_BETS)
        count = state.bet_count + 1
        ruleset = state.ruleset
        state = fix_client_seeds(state, player_seeds)
        offset = state.shoe.offset if state.shoe is not None else 0
        shares = ruleset.deal(
            deal_seed_of(state), count, mean_share=settings.envelope_mean_share, offset=offset
        )
        if not ruleset.uses_grabs:
            # When the house deals, the last hand is its own and nobody's grab.
            players = state.participants
            dealt = tuple(
                Grab(user_id, share, True)
                for user_id, share in zip(players, shares[: len(players)], strict=True)
            )
            after = _next(state, shares=shares, grabs=dealt)
            final = _finish(after)
            event = CardsDealt(count, count * HAND_SIZE)
            return Transition(final.round, (event, *final.events), final.postings)
        total = sum(shares)
        deadline = now_ms + settings.grab_seconds * 1000
        new_state = _next(state, phase=Phase.GRABBING, shares=shares, deadline_ms=deadline)
        return Transition(new_state, (GrabbingStarted(count, total, deadline),))
    grabbed = {grab.user_id for grab in state.grabs}
    auto_grabs: list[Grab] = []
    for user_id in state.participants:
        if user_id not in grabbed:
            auto_grabs.append(Grab(user_id, state.shares[len(state.grabs) + len(auto_grabs)], True))
    after = _next(state, grabs=state.grabs + tuple(auto_grabs))
    final = _finish(after)
    events = tuple(Grabbed(g.user_id, g.amount, True) for g in auto_grabs) + final.events
    return Transition(final.round, events, final.postings)


def fix_client_seeds(state: Round, player_seeds: Mapping[UserId, str]) -> Round:
    """The round with the client seeds its deal derives from fixed (as the deal is made,
    once the participants are final): the participants' of ``player_seeds`` (a shoe's first
    round: the shoe's too), or a shoe's fixed before."""
    if state.fairness == fair.V1:
        return state
    shoe = state.shoe
    if shoe is not None and shoe.client_seeds is not None:
        return dataclasses.replace(state, client_seeds=shoe.client_seeds)
    fixed = fair.canonical_seeds(
        player_seeds[user] for user in state.participants if user in player_seeds
    )
    if shoe is not None:
        shoe = dataclasses.replace(shoe, client_seeds=fixed)
    return dataclasses.replace(state, client_seeds=fixed, shoe=shoe)


def deal_seed_of(state: RoundState) -> bytes:
    """The seed a round's outcomes are drawn from (``bot.rules.fairness``), once its client
    seeds are fixed: derived from its own seed, or for a shoe round from the shoe's."""
    if state.shoe is not None:
        scope, scope_id, server_seed = fair.Scope.SHOE, state.shoe.id, state.shoe.seed
    else:
        scope, scope_id, server_seed = fair.Scope.ROUND, state.id, state.seed
    return fair.deal_seed(
        state.fairness,
        server_seed,
        scope=scope,
        scope_id=scope_id,
        client_seeds=state.client_seeds,
    )


def _finish(state: Round) -> Transition[Round]:
    """Settle a round whose participants have all grabbed (same version: part of one step)."""
    dealer_outcome = state.dealer_outcome()
    assert dealer_outcome is not None
    outcome_of = state.dealt()
    settings = state.settings
    settlement = settle(
        dealer_outcome=dealer_outcome,
        pool=state.pool,
        stakes=[Stake(bet.user_id, bet.amount, outcome_of[bet.user_id]) for bet in state.bets],
        rake_bps=settings.rake_bps,
        rebate_bps=settings.rebate_bps,
        dealer_fees=0 if state.house_deals else settings.dealer_fees,
        ruleset=state.ruleset,
    )
    if settlement.redeal:
        return _void_in_place(state, VoidReason.REDEAL)
    if state.dealer_id is None:
        postings = [Posting(BANK, settlement.dealer_net)]
    else:
        postings = list(_release(state.dealer_id, state.bid_hold))
        postings.append(Posting(available(state.dealer_id), settlement.dealer_net))
    for placed in state.bets:
        postings += _release(placed.user_id, placed.hold)
        postings.append(Posting(available(placed.user_id), settlement.outcomes[placed.user_id].net))
    postings.append(Posting(HOUSE, settlement.platform_net))
    final = dataclasses.replace(state, phase=Phase.SETTLED)
    return Transition(final, (RoundSettled(settlement, state.seed),), merge_postings(postings))


#: Voids after which play goes on at once: the dealer's 0.01, and system errors, which
#: re-deal a round as the dealer's 0.01 does (``docs/rules.md`` §5).
REDEAL_REASONS = (VoidReason.REDEAL, VoidReason.ERROR)


@dataclass(frozen=True, slots=True)
class NextRound:
    """When an open table's next round starts after one ended: at ``at_ms``, and whether
    at once, in the same step (a re-deal), rather than when its time comes."""

    at_ms: int
    redeal: bool


def next_round(state: RoundState, now_ms: int) -> NextRound | None:
    """When the next round of an open table starts after ``state`` ended at ``now_ms``:
    after the pause when it settled, at once after a re-deal or a system error, and not by
    itself after a void for want of bids or bets (someone starts one)."""
    if state.phase is Phase.SETTLED:
        return NextRound(now_ms + state.settings.pause_seconds * 1000, redeal=False)
    if state.void_reason in REDEAL_REASONS:
        return NextRound(now_ms, redeal=True)
    return None


def void(state: Round, reason: VoidReason) -> Transition[Round]:
    """End an open round without settling: every hold is released, nothing is charged."""
    if not state.phase.is_open:
        raise RuleViolation("round_closed", phase=state.phase.value)
    return _void_in_place(_next(state), reason)


def _void_in_place(state: Round, reason: VoidReason) -> Transition[Round]:
    """Void ``state`` as part of a step that already moved its version."""
    postings: list[Posting] = []
    for user_id, amount in state.holds().items():
        postings += _release(user_id, amount)
    new_state = dataclasses.replace(state, phase=Phase.VOID, void_reason=reason)
    return Transition(new_state, (RoundVoided(reason, state.seed),), merge_postings(postings))

"""Verifying a finished round: recompute its deal from the revealed seed and compare.

A round publishes the SHA-256 of the seed its outcomes come from before anyone bids
(``bot.rules.split.commitment``): its own seed, or for a game played from a shoe the
shoe's, which is revealed only when the shoe is replaced. ``verify_round`` recomputes
the deal from that seed, mixed with the client seeds the round recorded by its seed
derivation (``bot.rules.fairness``), with the round's ruleset and says whether the seed
matches the published hash and the stored outcomes match the deal. ``recompute_deal`` is the deal
alone, for anyone holding a seed (the ``niuniu-bot deal`` command prints it).

Pure: the caller loads the round and, for a shoe round, the shoe once it is revealed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.engine.round import Round
from bot.rules import fairness as fair
from bot.rules.cards import HAND_SIZE
from bot.rules.hand_view import HandView
from bot.rules.ruleset import Ruleset
from bot.rules.split import commitment


@dataclass(frozen=True, slots=True)
class CardRange:
    """The cards of a deal: ``decks`` shuffled, dealt from position ``first`` to ``last``
    (from 1)."""

    decks: int
    first: int
    last: int


@dataclass(frozen=True, slots=True)
class Derivation:
    """How a deal's seed derives from the server seed (``bot.rules.fairness``): the
    version, and for version 2 what it is for (a round or a shoe, by id) and the client
    seeds mixed in."""

    version: int = fair.V1
    scope: fair.Scope = fair.Scope.ROUND
    scope_id: int = 0
    client_seeds: tuple[str, ...] = ()

    def deal_seed(self, server_seed: bytes) -> bytes:
        """The seed the outcomes are drawn from. ``ValueError`` as ``deal_seed`` raises."""
        return fair.deal_seed(
            self.version,
            server_seed,
            scope=self.scope,
            scope_id=self.scope_id,
            client_seeds=self.client_seeds,
        )


#: Derivation 1: the server seed deals by itself.
SERVER_SEED_ONLY = Derivation()


def derivation_of(state: Round) -> Derivation:
    """How a round's deal seed derives: its own id, or its shoe's, and its client seeds."""
    if state.fairness == fair.V1:
        return SERVER_SEED_ONLY
    if state.shoe is not None:
        return Derivation(state.fairness, fair.Scope.SHOE, state.shoe.id, state.client_seeds)
    return Derivation(state.fairness, fair.Scope.ROUND, state.id, state.client_seeds)


@dataclass(frozen=True, slots=True)
class Deal:
    """A deal recomputed from a seed: the outcomes in deal order and what each shows."""

    seed: bytes
    #: The SHA-256 of the seed (hex), as a round publishes it.
    commitment: str
    #: How the deal seed was derived, and the seed the outcomes come from.
    derivation: Derivation
    deal_seed: bytes
    outcomes: tuple[int, ...]
    views: tuple[HandView, ...]
    #: The cards dealt; None for an envelope split.
    cards: CardRange | None


def recompute_deal(
    ruleset: Ruleset[Any],
    seed: bytes,
    count: int,
    *,
    mean_share: int,
    offset: int = 0,
    derivation: Derivation = SERVER_SEED_ONLY,
) -> Deal:
    """The deal of ``count`` participants from the server ``seed`` by ``ruleset``
    (``Ruleset.deal``) with the deal seed derived by ``derivation``, after the ``offset``
    cards of a shoe dealt before. ``ValueError`` as ``deal`` or ``deal_seed`` raise it (no
    such split, the cards run out, a bad client seed)."""
    deal_seed = derivation.deal_seed(seed)
    outcomes = ruleset.deal(deal_seed, count, mean_share=mean_share, offset=offset)
    cards = None
    if ruleset.decks:
        cards = CardRange(ruleset.decks, offset + 1, offset + HAND_SIZE * count)
    return Deal(
        seed=seed,
        commitment=commitment(seed),
        derivation=derivation,
        deal_seed=deal_seed,
        outcomes=outcomes,
        views=tuple(ruleset.show(ruleset.evaluate(outcome)) for outcome in outcomes),
        cards=cards,
    )


@dataclass(frozen=True, slots=True)
class RevealedShoe:
    """What verification needs of a replaced shoe: its seed, revealed, and its decks."""

    seed: bytes
    decks: int


@dataclass(frozen=True, slots=True)
class NothingDealt:
    """The round ended before anything was dealt. ``seed`` is the round's own, revealed as
    it ended; None for a shoe round (whose own seed deals nothing, and whose shoe's stays
    secret)."""

    round_id: int
    seed: bytes | None


@dataclass(frozen=True, slots=True)
class ShoeSecret:
    """The round was dealt from a shoe still in use: its seed is secret until the shoe is
    replaced. ``commitment`` is the hash the round published; ``first``-``last`` are the
    positions of its cards in the shoe."""

    round_id: int
    shoe_id: int
    commitment: str
    first: int
    last: int


@dataclass(frozen=True, slots=True)
class Mismatch:
    """The seed does not hash to the published commitment, or what the round stored is
    not what the seed deals."""

    round_id: int


@dataclass(frozen=True, slots=True)
class DealtHand:
    """One participant's outcome: who (None for the house) and what it shows."""

    user_id: int | None
    view: HandView


@dataclass(frozen=True, slots=True)
class Verified:
    """The seed hashes to the published commitment and deals what the round stored.

    ``shares`` are every outcome dealt, in deal order; ``hands`` the participants' (each
    grab's, then the house's once known), in deal order. ``cards`` is the deal's decks and
    card positions for a card game, None for an envelope split.
    """

    round_id: int
    seed: bytes
    shares: tuple[int, ...]
    hands: tuple[DealtHand, ...]
    cards: CardRange | None
    #: How the deal seed was derived from ``seed`` (its client seeds).
    derivation: Derivation = SERVER_SEED_ONLY

    @property
    def deal_seed(self) -> bytes:
        """The seed the outcomes were drawn from."""
        return self.derivation.deal_seed(self.seed)


Verification = NothingDealt | ShoeSecret | Mismatch | Verified


def verify_round(state: Round, revealed_shoe: RevealedShoe | None = None) -> Verification:
    """Check a finished round against the seed it published the hash of.

    A round dealt from a shoe is checked with ``revealed_shoe`` (None while the shoe is in
    use: ``ShoeSecret``); the shoe's seed the round holds is never used. Each grab must
    hold the share at its place in the deal. Raises ``ValueError`` for a round still open
    or a shoe given for a round that has none.
    """
    if state.phase.is_open:
        raise ValueError(f"round {state.id} is not finished")
    if revealed_shoe is not None and state.shoe is None:
        raise ValueError(f"round {state.id} was not dealt from a shoe")
    if not state.shares:
        return NothingDealt(state.id, None if state.shoe is not None else state.seed)
    ruleset = state.ruleset
    seed, offset = state.seed, 0
    if state.shoe is not None:
        first, last = state.cards_dealt()
        if revealed_shoe is None:
            return ShoeSecret(state.id, state.shoe.id, state.commitment, first, last)
        if revealed_shoe.decks != ruleset.decks:
            return Mismatch(state.id)
        seed, offset = revealed_shoe.seed, state.shoe.offset
    count, mean_share = len(state.shares), state.settings.envelope_mean_share
    derivation = derivation_of(state)
    try:
        deal = recompute_deal(
            ruleset, seed, count, mean_share=mean_share, offset=offset, derivation=derivation
        )
    except ValueError:  # the stored round cannot come from this seed
        return Mismatch(state.id)
    # Grab i took share i (an envelope's next share, or the next hand of cards).
    grabs_match = len(state.grabs) <= len(state.shares) and all(
        grab.amount == share for grab, share in zip(state.grabs, state.shares, strict=False)
    )
    if deal.commitment != state.commitment or deal.outcomes != state.shares or not grabs_match:
        return Mismatch(state.id)
    hands = [
        DealtHand(grab.user_id, view) for grab, view in zip(state.grabs, deal.views, strict=False)
    ]
    if state.house_deals and state.dealer_outcome() is not None:
        # The house takes no grab: its share is the one after every player's.
        hands.append(DealtHand(None, deal.views[state.bet_count]))
    return Verified(state.id, seed, state.shares, tuple(hands), deal.cards, derivation)

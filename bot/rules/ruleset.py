"""The seam between a game's rules and the round engine.

The engine deals each participant an *outcome* (for the red-envelope game, the cents of
the envelope they grabbed) and asks the ruleset everything else: the hand, who wins, by
how much, and the special cases. The five-card games plug in here without changing the
engine.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Protocol, TypeVar

from bot.rules import bullbull, envelope, poker29
from bot.rules.envelope import Hand
from bot.rules.hand_view import Decision, HandView
from bot.rules.split import split_envelope


class AnyHand(Protocol):
    """What every game's hand offers the engine and the views."""

    @property
    def kind(self) -> StrEnum:
        """The hand's kind; its value is a stable identifier stored in the database."""
        ...

    @property
    def strength(self) -> tuple[int, ...]:
        """A key that orders hands as ``compare`` does; equal keys tie."""
        ...

    @property
    def points(self) -> int:
        """The hand's points (what they mean is the game's)."""
        ...

    @property
    def multiplier(self) -> int:
        """What this hand pays when it wins, per unit staked."""
        ...


HandT = TypeVar("HandT", bound=AnyHand)


class Ruleset(Protocol[HandT]):
    """What the engine needs to know about a game.

    A dealt *outcome* is an ``int``: for the red-envelope game the cents of an envelope,
    for the card games five cards packed by ``bot.rules.cards.pack``. The engine stores
    and passes outcomes without looking inside them.
    """

    @property
    def name(self) -> str:
        """A stable identifier stored with each round (e.g. ``"envelope68"``)."""
        ...

    @property
    def largest_loss_multiplier(self) -> int:
        """The most a stake can lose, per unit staked: a bet holds stake x this."""
        ...

    @property
    def uses_grabs(self) -> bool:
        """True when players grab their outcome (red envelopes); False when the outcomes
        are dealt to everyone at once as betting closes (cards)."""
        ...

    @property
    def max_bettors(self) -> int | None:
        """How many bets a round takes at most (the cards must go round), or None."""
        ...

    @property
    def shoe_decks(self) -> int:
        """Decks in a shoe kept per group across rounds; 0 when every round deals from
        its own seed."""
        ...

    @property
    def reshuffle_after(self) -> int:
        """A shoe with more than this many cards dealt is replaced before the next round."""
        ...

    @property
    def decks(self) -> int:
        """Decks a deal is shuffled from (a round's own deck, or a shoe's); 0 for a game
        without cards."""
        ...

    def deal(self, seed: bytes, count: int, *, mean_share: int, offset: int = 0) -> tuple[int, ...]:
        """The outcomes of ``count`` participants in deal order (bettors in bet order, the
        dealer last), from the seed alone so anyone can recompute them once it is
        revealed. ``offset`` is how many cards of a shoe were dealt before this round."""
        ...

    def evaluate(self, outcome: int) -> HandT:
        """The hand a dealt outcome makes."""
        ...

    def compare(self, a: HandT, b: HandT) -> int:
        """Positive if ``a`` beats ``b``, negative if ``b`` wins, 0 for a tie (push)."""
        ...

    def decide(self, a: HandT, b: HandT) -> Decision:
        """What ``compare(a, b)`` gives and the rule that decides it, for explaining it."""
        ...

    def show(self, hand: HandT) -> HandView:
        """What a view shows of a hand: its amount or cards, how to name it, its points and
        what it pays when it wins."""
        ...

    def win_multiplier(self, hand: HandT) -> int:
        """What a player who beats the dealer with ``hand`` receives, per unit staked."""
        ...

    def loss_multiplier(self, dealer_hand: HandT) -> int:
        """What a player who loses to ``dealer_hand`` pays, per unit staked."""
        ...

    def is_redeal(self, dealer: HandT) -> bool:
        """True when the dealer's hand voids the round (everything is refunded)."""
        ...

    def is_immune(self, player: HandT) -> bool:
        """True when a losing player's loss becomes a refund (免死)."""
        ...


class RedEnvelopeRuleset:
    """68 NiuNiu: hands from envelope amounts (``docs/rules.md`` §2-§5).

    A winner is paid by their own multiplier, a loser pays by the dealer's. A dealer who
    grabs 0.01 re-deals the round; a player who grabs 0.01 cannot lose (免死).
    """

    name = "envelope68"
    largest_loss_multiplier = envelope.LARGEST_MULTIPLIER
    uses_grabs = True
    max_bettors = None
    shoe_decks = 0
    reshuffle_after = 0
    decks = 0
    #: The envelope amount (cents) that re-deals for a dealer and is immune for a player.
    SPECIAL_AMOUNT = 1

    def deal(self, seed: bytes, count: int, *, mean_share: int, offset: int = 0) -> tuple[int, ...]:
        """Split an envelope of ``count`` x ``mean_share`` cents (at most 9.99 a share);
        ``offset`` is unused (no shoe)."""
        total = count * min(mean_share, envelope.MAX_AMOUNT)
        return tuple(split_envelope(seed, count, total, max_share=envelope.MAX_AMOUNT))

    def evaluate(self, outcome: int) -> Hand:
        """The hand of an envelope of ``outcome`` cents."""
        return envelope.evaluate(outcome)

    def compare(self, a: Hand, b: Hand) -> int:
        """Hands compare by kind, then points, then amount (see ``envelope.compare``)."""
        return envelope.compare(a, b)

    def decide(self, a: Hand, b: Hand) -> Decision:
        """See ``envelope.decide``."""
        return envelope.decide(a, b)

    def show(self, hand: Hand) -> HandView:
        """See ``envelope.show``."""
        return envelope.show(hand)

    def win_multiplier(self, hand: Hand) -> int:
        """A winner is paid by the player's own multiplier."""
        return hand.multiplier

    def loss_multiplier(self, dealer_hand: Hand) -> int:
        """A loser pays by the dealer's multiplier."""
        return dealer_hand.multiplier

    def is_redeal(self, dealer: Hand) -> bool:
        """A dealer holding 0.01 re-deals the whole round."""
        return dealer.amount == self.SPECIAL_AMOUNT

    def is_immune(self, player: Hand) -> bool:
        """A player holding 0.01 is immune (免死): a loss becomes a refund."""
        return player.amount == self.SPECIAL_AMOUNT


RED_ENVELOPE = RedEnvelopeRuleset()

RULESETS: dict[str, Ruleset[Any]] = {
    ruleset.name: ruleset
    for ruleset in (RED_ENVELOPE, bullbull.BULLBULL, poker29.POKER29, poker29.POKER29_VN)
}
#: The games whose losers pay the stake once, each as played where a loser pays by the
#: dealer's hand instead (the table setting ``loss_pays dealer``, ``docs/rules.md`` §7). The
#: other games price every loss by the dealer's hand already.
LOSS_BY_DEALER: dict[str, Ruleset[Any]] = {
    ruleset.name: ruleset
    for ruleset in (poker29.POKER29_LOSS_BY_DEALER, poker29.POKER29_VN_LOSS_BY_DEALER)
}
#: Names stored by earlier versions, still read from old rounds and settings.
LEGACY_NAMES = {"red_envelope": RED_ENVELOPE.name}


def get_ruleset(name: str) -> Ruleset[Any]:
    """The ruleset registered under ``name``; ``ValueError`` for an unknown name."""
    try:
        return RULESETS[LEGACY_NAMES.get(name, name)]
    except KeyError:
        known = ", ".join(sorted(RULESETS))
        raise ValueError(f"unknown ruleset {name!r}; known: {known}") from None


def table_ruleset(name: str, *, loss_by_dealer: bool) -> Ruleset[Any]:
    """The ruleset a table plays: the game ``name``, in its variant where a loser pays by
    the dealer's hand when ``loss_by_dealer`` and the game has one (``LOSS_BY_DEALER``)."""
    ruleset = get_ruleset(name)
    if loss_by_dealer:
        return LOSS_BY_DEALER.get(ruleset.name, ruleset)
    return ruleset

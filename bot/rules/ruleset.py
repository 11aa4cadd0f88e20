"""The seam between a game's rules and the round engine.

The engine deals each participant an *outcome* (for the red-envelope game, the cents of
the envelope they grabbed) and asks the ruleset everything else: the hand, who wins, by
how much, and the special cases. The five-card games plug in here without changing the
engine.
"""

from __future__ import annotations

from typing import Protocol

from bot.rules import bullbull, envelope, poker29
from bot.rules.envelope import Hand
from bot.rules.split import split_envelope


class Ruleset(Protocol):
    """What the engine needs to know about a game."""

    @property
    def name(self) -> str:
        """A stable identifier stored with each round (e.g. ``"red_envelope"``)."""
        ...

    @property
    def largest_loss_multiplier(self) -> int:
        """The most a stake can lose, per unit staked: a bet holds stake x this."""
        ...

    def deal(self, seed: bytes, count: int, mean_share: int) -> tuple[int, ...]:
        """The outcomes of ``count`` participants in grab order, from the seed alone (so
        anyone can recompute them once the seed is revealed)."""
        ...

    def evaluate(self, outcome: int) -> Hand:
        """The hand a dealt outcome makes."""
        ...

    def compare(self, player: Hand, dealer: Hand) -> int:
        """Positive if the player beats the dealer, negative if the dealer wins, 0 for a tie."""
        ...

    def win_multiplier(self, player: Hand, dealer: Hand) -> int:
        """What a winning player receives, per unit staked."""
        ...

    def loss_multiplier(self, player: Hand, dealer: Hand) -> int:
        """What a losing player pays, per unit staked."""
        ...

    def is_redeal(self, dealer: Hand) -> bool:
        """True when the dealer's hand voids the round (everything is refunded)."""
        ...

    def is_immune(self, player: Hand) -> bool:
        """True when a losing player's loss becomes a refund (免死)."""
        ...


class RedEnvelopeRuleset:
    """68 NiuNiu: hands from envelope amounts (seed 000).

    A winner is paid by their own multiplier, a loser pays by the dealer's. A dealer who
    grabs 0.01 re-deals the round; a player who grabs 0.01 cannot lose (免死).
    """

    name = "red_envelope"
    largest_loss_multiplier = envelope.LARGEST_MULTIPLIER
    #: The envelope amount (cents) that re-deals for a dealer and is immune for a player.
    SPECIAL_AMOUNT = 1

    def deal(self, seed: bytes, count: int, mean_share: int) -> tuple[int, ...]:
        """Split an envelope of ``count`` x ``mean_share`` cents (at most 9.99 a share)."""
        total = count * min(mean_share, envelope.MAX_AMOUNT)
        return tuple(split_envelope(seed, count, total, max_share=envelope.MAX_AMOUNT))

    def evaluate(self, outcome: int) -> Hand:
        """The hand of an envelope of ``outcome`` cents."""
        return envelope.evaluate(outcome)

    def compare(self, player: Hand, dealer: Hand) -> int:
        """Hands compare by kind, then points, then amount (see ``envelope.compare``)."""
        return envelope.compare(player, dealer)

    def win_multiplier(self, player: Hand, dealer: Hand) -> int:
        """A winner is paid by the player's own multiplier."""
        return player.multiplier

    def loss_multiplier(self, player: Hand, dealer: Hand) -> int:
        """A loser pays by the dealer's multiplier."""
        return dealer.multiplier

    def is_redeal(self, dealer: Hand) -> bool:
        """A dealer holding 0.01 re-deals the whole round."""
        return dealer.amount == self.SPECIAL_AMOUNT

    def is_immune(self, player: Hand) -> bool:
        """A player holding 0.01 is immune (免死): a loss becomes a refund."""
        return player.amount == self.SPECIAL_AMOUNT


RED_ENVELOPE = RedEnvelopeRuleset()

RULESETS: dict[str, Ruleset] = {
    ruleset.name: ruleset
    for ruleset in (RED_ENVELOPE, bullbull.BULLBULL, poker29.POKER29, poker29.POKER29_VN)
}


def get_ruleset(name: str) -> Ruleset:
    """The ruleset registered under ``name``; ``ValueError`` for an unknown name."""
    try:
        return RULESETS[name]
    except KeyError:
        known = ", ".join(sorted(RULESETS))
        raise ValueError(f"unknown ruleset {name!r}; known: {known}") from None

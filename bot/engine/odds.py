"""What a bet is worth: the expected return to a player's bet, to the dealer and to the
platform, per unit staked, under a table's rake and rebate.

Pure (standard library only; randomness comes in as a ``random.Random``). Every figure
follows the game as played: hands come from the rulesets' own ``deal`` and ``evaluate``,
and the envelope game's bets are settled by ``bot.engine.settlement.settle`` itself.

The figures are for one bet against the dealer with a pool that pays every winner (no
喝水), per round dealt (a re-dealt round returns the stake: 0). A stake of
``STAKE`` cents makes every rake and rebate a whole number of cents, so they are exact;
on small stakes ``settle`` rounds both down to the cent, which moves a bet by less than a
cent. The dealer's fees are per settled round, not per bet: they are reported apart.

How each game is counted:

- ``envelope68`` with one bettor: **exact**. Two shares of an envelope of ``2 x share``
  cents: the first is uniform on its range and a fair shuffle puts either in the player's
  hand, so the player's share is uniform on ``[lo, hi]`` and the dealer holds the rest.
  Every one of those splits is settled.
- the card games: **exact** by counting. The player's and the dealer's hands are two
  disjoint five-card hands of one shuffled deck or shoe, so the pair is *exchangeable*:
  (player, dealer) and (dealer, player) are equally likely. What a hand makes depends
  only on its ranks; hands are counted by their multiset of ranks (the shoe's J, Q and K
  are one category for Niu-Niu Poker, where they make the same hands). Let ``m`` be what a
  winner is paid (per unit) and ``l`` what a loser pays; both grow with the hand's rank
  (checked). By exchangeability the player wins as often with a hand as the dealer does,
  so ``E[m(player); player wins] = (E[max(m1, m2)] - E[m; tie]) / 2`` and likewise for
  ``l``; ``E[max(m1, m2)]`` is the sum over the multiplier steps of
  ``P(max >= t) = 2 P(m >= t) - P(m1 >= t, m2 >= t)``, counting only pairs of hands that
  both reach ``t``. Ties: none in ``bullbull`` (one deck: two hands never share a card);
  identical cards in ``poker29``; the same kind and points in ``poker29_vn``.
- ``envelope68`` with more bettors (the split depends on how many grab): **seeded
  simulation** with the real split and ``settle``. Each player-dealer pair is also settled
  with the two envelopes swapped (they are exchangeable: antithetic variates, unbiased,
  and the part that is the same for both sides cancels); rounds are drawn in batches until
  the 95 % confidence interval of every figure is within ``TARGET_HALF_WIDTH`` (0.1 % of
  the stake) or ``max_rounds`` are drawn.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

from bot.engine.settings import Settings
from bot.engine.settlement import BPS_DENOMINATOR, Result, Stake, settle
from bot.rules import envelope
from bot.rules.cards import DECK_SIZE, HAND_SIZE, Card, Suit, pack
from bot.rules.ruleset import Ruleset, table_ruleset

#: The stake every bet is settled with: rake and rebate in basis points are whole cents.
STAKE = BPS_DENOMINATOR
#: A pool no round can exhaust (no 喝水).
_UNLIMITED_POOL = 10**15
#: The simulation's aim: the 95 % confidence interval within 0.1 % of the stake.
TARGET_HALF_WIDTH = 0.001
Z_95 = 1.959963984540054
BATCH_ROUNDS = 2_000
MAX_ROUNDS = 400_000


class RandomSource(Protocol):
    """Where a simulation's seeds come from: a ``random.Random(seed)``, passed in."""

    def randbytes(self, n: int, /) -> bytes: ...


@dataclass(frozen=True, slots=True)
class Odds:
    """Expected results per unit staked on one bet (player + dealer + platform = 0).

    ``half_width`` is the 95 % confidence half-width of each figure (0 when exact);
    ``rounds`` how many deals were counted or drawn. ``redeal``, ``tie`` are the chances
    that a round is re-dealt and that the bet ties (push, 免死 counts as a tie).
    """

    ruleset: str
    rake_bps: int
    rebate_bps: int
    bettors: int
    exact: bool
    player: float
    dealer: float
    platform: float
    half_width: float
    rounds: int
    redeal: float
    tie: float
    method: str


# -- envelope68 ----------------------------------------------------------------------------


def envelope_pairs(mean_share: int) -> list[tuple[int, int]]:
    """Every (player, dealer) split of a two-share envelope, each equally likely: the
    double-mean draw of ``bot.rules.split`` for two shares, shuffled."""
    total = 2 * min(mean_share, envelope.MAX_AMOUNT)
    low = max(1, total - envelope.MAX_AMOUNT)
    high = min(envelope.MAX_AMOUNT, total - 1, max(low, 2 * (total // 2)))
    return [(share, total - share) for share in range(low, high + 1)]


def _settle_one(
    ruleset: Ruleset[Any], player: int, dealer: int, rake_bps: int, rebate_bps: int
) -> tuple[int, int, int, Result]:
    """One bet of ``STAKE`` settled by ``settle``: the player's, the dealer's and the
    platform's nets, and the result."""
    settled = settle(
        dealer_outcome=dealer,
        pool=_UNLIMITED_POOL,
        stakes=[Stake("player", STAKE, player)],
        rake_bps=rake_bps,
        rebate_bps=rebate_bps,
        dealer_fees=0,
        ruleset=ruleset,
    )
    outcome = settled.outcomes["player"]
    return outcome.net, settled.dealer_net, settled.platform_net, outcome.result


def exact_envelope_odds(
    ruleset: Ruleset[Any], *, rake_bps: int, rebate_bps: int, mean_share: int
) -> Odds:
    """The envelope game with one bettor, every split settled (exact)."""
    pairs = envelope_pairs(mean_share)
    player = dealer = platform = redeals = ties = 0
    for player_share, dealer_share in pairs:
        net, dealer_net, platform_net, result = _settle_one(
            ruleset, player_share, dealer_share, rake_bps, rebate_bps
        )
        player, dealer, platform = player + net, dealer + dealer_net, platform + platform_net
        redeals += result is Result.REFUND
        ties += result in (Result.TIE, Result.IMMUNE)
    count = len(pairs)
    per_unit = Fraction(1, count * STAKE)
    return Odds(
        ruleset.name,
        rake_bps,
        rebate_bps,
        1,
        True,
        float(player * per_unit),
        float(dealer * per_unit),
        float(platform * per_unit),
        0.0,
        count,
        redeals / count,
        ties / count,
        f"exact: all {count} equally likely splits of a two-share envelope",
    )


# -- the card games: counting hands by their ranks -------------------------------------------

#: Ranks that make the same hands in a game, counted as one category (the first is used to
#: build a hand): Niu-Niu Poker's J, Q and K. Every other rank is its own category.
_MERGED_RANKS: dict[str, tuple[int, ...]] = {"poker29": (11, 12, 13), "poker29_vn": (11, 12, 13)}
#: When two hands tie: never (one deck), identical cards, or the same kind and points.
_TIES = {"bullbull": "none", "poker29": "identical", "poker29_vn": "class"}


_SUITS: tuple[Suit, ...] = tuple(Suit)


def _comb_table(size: int) -> list[list[int]]:
    return [[math.comb(n, k) for k in range(HAND_SIZE + 1)] for n in range(size + 1)]


@dataclass(frozen=True, slots=True)
class _Hands:
    """Every multiset of five cards' categories: its counts, weight (ways to pick it),
    class (kind rank, points) and multipliers."""

    counts: list[tuple[int, ...]]
    weights: list[int]
    classes: list[tuple[int, ...]]
    wins: list[int]
    losses: list[int]
    total: int


def _categories(deck: Sequence[Card], ruleset_name: str) -> tuple[list[int], list[list[Card]]]:
    """The deck's categories: a representative rank each and their physical cards."""
    merged = _MERGED_RANKS.get(ruleset_name, ())
    by_rank: dict[int, list[Card]] = {}
    for card in deck:
        rank = merged[0] if card.rank in merged else card.rank
        by_rank.setdefault(rank, []).append(card)
    ranks = sorted(by_rank)
    return ranks, [by_rank[rank] for rank in ranks]


def _hands(ruleset: Ruleset[Any], deck: Sequence[Card]) -> tuple[_Hands, list[list[Card]]]:
    ranks, members = _categories(deck, ruleset.name)
    sizes = [len(cards) for cards in members]
    comb = _comb_table(max(sizes))
    counts, weights, classes, wins, losses = [], [], [], [], []
    for combo in itertools.combinations_with_replacement(range(len(ranks)), HAND_SIZE):
        hand_counts = tuple(combo.count(category) for category in range(len(ranks)))
        if any(k > size for k, size in zip(hand_counts, sizes, strict=True)):
            continue
        # A hand of these categories: the category's rank, suits in turn (any suits make
        # the same kind and points).
        cards = [
            Card(ranks[category], _SUITS[index % 4])
            for category, k in enumerate(hand_counts)
            for index in range(k)
        ]
        hand = ruleset.evaluate(pack(cards))
        counts.append(hand_counts)
        weights.append(math.prod(comb[size][k] for size, k in zip(sizes, hand_counts, strict=True)))
        classes.append(hand.strength[:2])
        wins.append(ruleset.win_multiplier(hand))
        losses.append(ruleset.loss_multiplier(hand))
    total = math.comb(len(deck), HAND_SIZE)
    return _Hands(counts, weights, classes, wins, losses, total), members


def _pairs_within(hands: _Hands, chosen: Iterable[int], sizes: Sequence[int]) -> int:
    """Ordered pairs of disjoint hands whose category multisets are both among ``chosen``."""
    comb = _comb_table(max(sizes))
    picked = list(chosen)
    supports = [
        [(category, k) for category, k in enumerate(hands.counts[index]) if k] for index in picked
    ]
    count = 0
    for first, support_first in zip(picked, supports, strict=True):
        left = list(sizes)
        for category, k in support_first:
            left[category] -= k
        inner = 0
        for support in supports:
            ways = 1
            for category, k in support:
                ways *= comb[left[category]][k]
            inner += ways
        count += hands.weights[first] * inner
    return count


def _expected_max(hands: _Hands, values: list[int], sizes: Sequence[int]) -> Fraction:
    """E[max(v(hand 1), v(hand 2))] over ordered pairs of disjoint hands."""
    pairs = hands.total * math.comb(sum(sizes) - HAND_SIZE, HAND_SIZE)
    levels = sorted(set(values))
    expected = Fraction(levels[0])
    for below, level in itertools.pairwise(levels):
        reaching = [index for index, value in enumerate(values) if value >= level]
        single = Fraction(sum(hands.weights[index] for index in reaching), hands.total)
        both = Fraction(_pairs_within(hands, reaching, sizes), pairs)
        expected += (level - below) * (2 * single - both)
    return expected


def _identical_pairs(members: Sequence[Sequence[Card]], counts: tuple[int, ...]) -> int:
    """Ordered pairs of disjoint hands of these category counts holding the same cards."""
    total = 1
    for cards, k in zip(members, counts, strict=True):
        if k == 0:
            continue
        copies = [sum(1 for card in cards if card == kind) for kind in dict.fromkeys(cards)]
        # Ways to pick k cards of this category for each hand, card for card the same.
        ways = [1] + [0] * k
        for copy in copies:
            ways = [
                sum(
                    ways[taken - j] * math.comb(copy, j) * math.comb(copy - j, j)
                    for j in range(min(taken, copy) + 1)
                )
                for taken in range(k + 1)
            ]
        total *= ways[k]
    return total


def _check_monotone(hands: _Hands) -> None:
    """The counting needs a stronger hand never to pay less than a weaker one."""
    by_class = sorted(set(zip(hands.classes, hands.wins, hands.losses, strict=True)))
    for (_, win_a, loss_a), (_, win_b, loss_b) in itertools.pairwise(by_class):
        if win_b < win_a or loss_b < loss_a:
            raise ValueError("a stronger hand pays less: cannot count this game")


def card_gross(ruleset: Ruleset[Any], deck: Sequence[Card]) -> tuple[Fraction, Fraction, Fraction]:
    """For one bet against the dealer, both dealt from ``deck``: E[what the player wins,
    per unit; player wins], E[what they lose; player loses], P(tie). Exact."""
    hands, members = _hands(ruleset, deck)
    _check_monotone(hands)
    sizes = [len(cards) for cards in members]
    pairs = hands.total * math.comb(len(deck) - HAND_SIZE, HAND_SIZE)
    tie_rule = _TIES[ruleset.name]
    tie = tie_win = tie_loss = Fraction(0)
    if tie_rule == "identical":
        for index, counts in enumerate(hands.counts):
            chance = Fraction(_identical_pairs(members, counts), pairs)
            tie += chance
            tie_win += chance * hands.wins[index]
            tie_loss += chance * hands.losses[index]
    elif tie_rule == "class":
        for kind in set(hands.classes):
            same = [index for index, found in enumerate(hands.classes) if found == kind]
            chance = Fraction(_pairs_within(hands, same, sizes), pairs)
            tie += chance
            tie_win += chance * hands.wins[same[0]]
            tie_loss += chance * hands.losses[same[0]]
    elif len(set(deck)) != len(deck):
        raise ValueError(f"{ruleset.name} is counted for one deck only")
    won = (_expected_max(hands, hands.wins, sizes) - tie_win) / 2
    lost = (_expected_max(hands, hands.losses, sizes) - tie_loss) / 2
    return won, lost, tie


def _dealt_card_gross(ruleset: Ruleset[Any]) -> tuple[Fraction, Fraction, Fraction]:
    # Cached for the registered rulesets: a game and its variant where a loser pays by the
    # dealer's hand share a name, so the variant is a key of its own.
    for loss_by_dealer in (False, True):
        if ruleset is table_ruleset(ruleset.name, loss_by_dealer=loss_by_dealer):
            return _counted_card_gross(ruleset.name, loss_by_dealer)
    return card_gross(ruleset, one_deck_shoe(ruleset.decks))


@functools.lru_cache(maxsize=8)
def _counted_card_gross(name: str, loss_by_dealer: bool) -> tuple[Fraction, Fraction, Fraction]:
    # The count takes up to a few seconds and does not depend on the rates: once per game.
    ruleset = table_ruleset(name, loss_by_dealer=loss_by_dealer)
    return card_gross(ruleset, one_deck_shoe(ruleset.decks))


def one_deck_shoe(decks: int) -> list[Card]:
    """The physical cards of ``decks`` decks."""
    return [Card.from_code(code) for _ in range(decks) for code in range(DECK_SIZE)]


def exact_card_odds(
    ruleset: Ruleset[Any],
    *,
    rake_bps: int,
    rebate_bps: int,
    deck: Sequence[Card] | None = None,
) -> Odds:
    """A card game's bet, counted exactly (see the module docstring).

    A winner nets ``m x (1 - rake + rebate)``, a loser ``-l x (1 - rebate)``; the dealer
    keeps a loss less its rake and pays a win; the platform the rest.
    """
    cards = one_deck_shoe(ruleset.decks) if deck is None else list(deck)
    if deck is None:
        won, lost, tie = _dealt_card_gross(ruleset)
    else:
        won, lost, tie = card_gross(ruleset, cards)
    rake = Fraction(rake_bps, BPS_DENOMINATOR)
    rebate = Fraction(rebate_bps, BPS_DENOMINATOR)
    player = won * (1 - rake + rebate) - lost * (1 - rebate)
    dealer = lost * (1 - rake) - won
    platform = -player - dealer
    pairs = math.comb(len(cards), HAND_SIZE) * math.comb(len(cards) - HAND_SIZE, HAND_SIZE)
    return Odds(
        ruleset.name,
        rake_bps,
        rebate_bps,
        1,
        True,
        float(player),
        float(dealer),
        float(platform),
        0.0,
        pairs,
        0.0,
        float(tie),
        f"exact: all {pairs:,} ordered pairs of hands from {len(cards)} cards",
    )


# -- seeded simulation -----------------------------------------------------------------------


class _Running:
    """Mean and variance of a stream of numbers (Welford)."""

    def __init__(self) -> None:
        self.count = 0
        self.mean = 0.0
        self._m2 = 0.0

    def add(self, value: float) -> None:
        self.count += 1
        delta = value - self.mean
        self.mean += delta / self.count
        self._m2 += delta * (value - self.mean)

    def half_width(self) -> float:
        if self.count < 2:
            return math.inf
        return Z_95 * math.sqrt(self._m2 / (self.count - 1) / self.count)


def simulated_odds(
    ruleset: Ruleset[Any],
    *,
    rake_bps: int,
    rebate_bps: int,
    bettors: int,
    mean_share: int,
    rng: RandomSource,
    max_rounds: int = MAX_ROUNDS,
    target: float = TARGET_HALF_WIDTH,
) -> Odds:
    """Rounds of ``bettors`` bets dealt from seeds drawn from ``rng``, each bet settled as
    dealt and with the player's and dealer's outcomes swapped; a round's mean is one
    sample. Batches of ``BATCH_ROUNDS`` until every 95 % half-width is within ``target``."""
    if bettors < 1:
        raise ValueError("a round needs at least one bettor")
    figures = [_Running(), _Running(), _Running()]
    redeals = ties = 0

    def one_round() -> None:
        nonlocal redeals, ties
        outcomes = ruleset.deal(rng.randbytes(32), bettors + 1, mean_share=mean_share)
        dealer = outcomes[-1]
        sums = [0, 0, 0]
        for player in outcomes[:-1]:
            for first, second in ((player, dealer), (dealer, player)):
                *nets, result = _settle_one(ruleset, first, second, rake_bps, rebate_bps)
                for index, net in enumerate(nets):
                    sums[index] += net
                redeals += result is Result.REFUND
                ties += result in (Result.TIE, Result.IMMUNE)
        for running, total in zip(figures, sums, strict=True):
            running.add(total / (2 * bettors * STAKE))

    while figures[0].count < max_rounds:
        for _ in range(min(BATCH_ROUNDS, max_rounds - figures[0].count)):
            one_round()
        if max(running.half_width() for running in figures) <= target:
            break
    rounds = figures[0].count
    bets = 2 * bettors * rounds
    return Odds(
        ruleset.name,
        rake_bps,
        rebate_bps,
        bettors,
        False,
        figures[0].mean,
        figures[1].mean,
        figures[2].mean,
        max(running.half_width() for running in figures),
        rounds,
        redeals / bets,
        ties / bets,
        f"simulated: {rounds:,} rounds of {bettors} bettors, each bet also settled swapped",
    )


def odds(
    ruleset: Ruleset[Any],
    *,
    rake_bps: int,
    rebate_bps: int,
    mean_share: int = 500,
    bettors: int = 1,
    rng_factory: Callable[[], RandomSource] | None = None,
) -> Odds:
    """The odds of a bet at a table: exact where they can be counted (the card games, and
    the envelope game with one bettor), else simulated with ``rng_factory()``."""
    if not ruleset.uses_grabs:
        return exact_card_odds(ruleset, rake_bps=rake_bps, rebate_bps=rebate_bps)
    if bettors == 1:
        return exact_envelope_odds(
            ruleset, rake_bps=rake_bps, rebate_bps=rebate_bps, mean_share=mean_share
        )
    if rng_factory is None:
        raise ValueError("more than one bettor is simulated: pass a source of randomness")
    return simulated_odds(
        ruleset,
        rake_bps=rake_bps,
        rebate_bps=rebate_bps,
        bettors=bettors,
        mean_share=mean_share,
        rng=rng_factory(),
    )


def table_odds(
    settings: Settings,
    *,
    bettors: int = 1,
    rng_factory: Callable[[], RandomSource] | None = None,
) -> Odds:
    """The odds of one bet at a table with these settings (its game as played, rake,
    rebate, envelope share); ``rng_factory`` gives the simulation its ``random.Random(seed)``
    when one is needed."""
    return odds(
        settings.played_ruleset(),
        rake_bps=settings.rake_bps,
        rebate_bps=settings.rebate_bps,
        mean_share=settings.envelope_mean_share,
        bettors=bettors,
        rng_factory=rng_factory,
    )

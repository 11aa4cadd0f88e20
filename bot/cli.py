"""The ``niuniu-bot`` command line."""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from bot.config import Config, ConfigError, load_config
from bot.engine.odds import Odds, table_odds
from bot.engine.settings import DEALERS, LANGUAGES, LOSS_PAYS, SettingError, Settings
from bot.engine.verification import SERVER_SEED_ONLY, Derivation, recompute_deal
from bot.money import format_amount, format_bps, parse_amount, parse_bps
from bot.rules import fairness as fair
from bot.rules.cards import HAND_SIZE, Card, pack, parse_cards
from bot.rules.hand_view import DecidingRule, Decision, HandView
from bot.rules.ruleset import RED_ENVELOPE, RULESETS, Ruleset, get_ruleset, table_ruleset
from bot.rules.split import split_envelope

EXIT_USAGE = 2
#: The bot could not start, or the database could not be migrated.
EXIT_FAILED = 1

#: The most a red envelope's share holds: its three digits make the hand.
MAX_SHARE = 999


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad arguments in one line and exits 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"niuniu-bot: error: {message}\n")


def _envelope(text: str) -> Any:
    """The hand of the red-envelope game an amount makes (the ``rules`` command's)."""
    try:
        return RED_ENVELOPE.evaluate(parse_amount(text, max_cents=MAX_SHARE))
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text!r}: {error}") from None


def _seed(text: str) -> bytes:
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a hex string") from None
    if not seed:
        raise argparse.ArgumentTypeError("the seed is empty")
    return seed


def _ascii_digits(text: str) -> bool:
    """Only 0-9 are digits (``isdigit`` alone takes "²", and ``int`` reads "٣" as 3)."""
    return text.isascii() and text.isdecimal()


def _positive_int(text: str) -> int:
    if not _ascii_digits(text) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return int(text)


def _whole_number(text: str) -> int:
    if not _ascii_digits(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number (0 or more)")
    return int(text)


def _rate(text: str) -> int:
    try:
        return parse_bps(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _amount(text: str) -> int:
    try:
        return parse_amount(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


#: Each game as players know it, by the name the commands take.
GAME_NAMES = {
    "envelope68": "68 NiuNiu, red envelopes",
    "bullbull": "Niu Niu (Bull Bull)",
    "poker29": "Niu-Niu Poker 2.9",
    "poker29_vn": "Niu-Niu Poker 2.9, Vietnamese rules (ties push)",
}


def _games(names: Sequence[str]) -> str:
    """The games ``names`` are, for a help text."""
    return "; ".join(f"{name}: {GAME_NAMES[name]}" for name in names)


#: What ``odds --share`` is, in the words its errors and help use.
SHARE_MEANING = (
    "what an envelope holds per participant on average, 0.01 to"
    f" {format_amount(MAX_SHARE)} (the game's {format_amount(Settings().envelope_mean_share)}"
    " unless given)"
)


def _share(text: str) -> int:
    """``odds --share``: the mean envelope share, an amount of at most one envelope's."""
    try:
        share = parse_amount(text)
    except ValueError:
        share = 0
    if not 1 <= share <= MAX_SHARE:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a mean envelope share, which is {SHARE_MEANING}; e.g. --share 2.50"
        )
    return share


def describe_hand(ruleset: Ruleset[Any], hand: Any) -> str:
    """One line about an envelope's hand: amount, kind in English and Chinese, points
    (10 are Niu Niu) and multiplier, and what it does as a dealer's or a player's."""
    view = ruleset.show(hand)
    name = f"{view.english} {view.chinese}"
    niuniu = " (Niu Niu 牛牛)" if view.points == 10 else ""
    unit = "point" if view.points == 1 else "points"
    specials = [
        *(["re-deals for a dealer"] if ruleset.is_redeal(hand) else []),
        *(["免死 for a player"] if ruleset.is_immune(hand) else []),
    ]
    special = "; " + ", ".join(specials) if specials else ""
    amount = _amount_text(view)
    return f"{amount}  {name}, {view.points} {unit}{niuniu}, {view.multiplier}x{special}"


def explain_comparison(ruleset: Ruleset[Any], a: Any, b: Any) -> str:
    """Say which of two envelopes' hands wins and the rule that decides it."""
    decision = ruleset.decide(a, b)
    view_a, view_b = ruleset.show(a), ruleset.show(b)
    if decision.verdict == 0:
        return f"{_amount_text(view_a)} ties {_amount_text(view_b)}: equal amounts"
    winner, loser = (view_a, view_b) if decision.verdict > 0 else (view_b, view_a)
    return f"{_amount_text(winner)} beats {_amount_text(loser)}: {_why(decision, winner)}"


def _amount_text(view: HandView) -> str:
    assert view.amount_cents is not None, "an envelope's hand has an amount"
    return format_amount(view.amount_cents)


#: The card games' rulesets: the ones dealt as betting closes instead of grabbed.
CARD_RULESETS = tuple(name for name, ruleset in sorted(RULESETS.items()) if not ruleset.uses_grabs)


def describe_cards(view: HandView) -> str:
    """One line about a card hand: its bull (left hand) | the other cards, its kind in
    English and Chinese (with a bull's points) and what it pays when it wins."""
    shown = " | ".join(" ".join(group) for group in view.groups)
    return f"{shown}  {view.english} ({view.chinese}), {view.multiplier}x"


_ORDINALS = ("highest", "second highest", "third highest", "fourth highest", "lowest")


def explain_cards(ruleset: Ruleset[Any], a: Any, b: Any) -> str:
    """Say which of two card hands wins under ``ruleset``, and the rule that decides it:
    kind, points, then the cards as the game compares them (``Ruleset.decide``), or a
    push."""
    decision = ruleset.decide(a, b)
    view_a, view_b = ruleset.show(a), ruleset.show(b)
    if decision.verdict == 0:
        if decision.rule is DecidingRule.SAME_CARDS:
            why = "the same kind, points and cards"
        else:
            why = f"the same kind and points ({ruleset.name} does not compare the cards)"
        return f"hand 1 ({view_a.english}) and hand 2 ({view_b.english}) push: {why}"
    winner, loser = (view_a, view_b) if decision.verdict > 0 else (view_b, view_a)
    names = ("hand 1", "hand 2") if decision.verdict > 0 else ("hand 2", "hand 1")
    head = f"{names[0]} ({winner.english}) beats {names[1]} ({loser.english})"
    return f"{head}: {_why(decision, winner)}"


def _why(decision: Decision, winner: HandView) -> str:
    """The rule that decided, in words (``winner`` is the winning hand's view)."""
    rule, won, lost = decision.rule, decision.winner, decision.loser
    if rule is DecidingRule.KIND:
        return f"{won} outranks {lost}"
    if rule is DecidingRule.PAIR:
        return f"pair {won} beats pair {lost}"
    if rule is DecidingRule.POINTS:
        return f"{won} points beat {lost}"
    if rule is DecidingRule.AMOUNT:
        return "same kind and points; the larger amount wins"
    if rule is DecidingRule.FOUR:
        return f"a Bomb of {won}s beats a Bomb of {lost}s"
    cards = f"{won} beats {lost}"
    if decision.suit_order:
        cards += f" by suit ({' > '.join(decision.suit_order)})"
    if rule is DecidingRule.HIGHEST_CARD:
        same = "same kind and points" if winner.points else "same kind"
        return f"{same}; highest card {cards}"
    if rule is DecidingRule.CARD_BY_CARD:
        ordinal = _ORDINALS[decision.position]
        return f"same kind and points; card by card, the {ordinal} card {cards}"
    raise AssertionError(f"{rule} decides no winner")  # pragma: no cover


def _parse_hand(text: str) -> tuple[Card, ...]:
    cards = parse_cards(text)
    if len(cards) != HAND_SIZE:
        quote = ' (quote each hand: "KS QH 10D 7C AS")' if len(cards) == 1 else ""
        unit = "card" if len(cards) == 1 else "cards"
        raise ValueError(f"{text!r} is {len(cards)} {unit}; a hand is {HAND_SIZE}{quote}")
    return cards


def _check_decks(ruleset: Ruleset[Any], hands: Sequence[tuple[Card, ...]], where: str) -> None:
    """``ValueError`` when ``hands`` hold a card more often than the ruleset's decks do."""
    decks = ruleset.decks
    counts = Counter(card for cards in hands for card in cards)
    for card, count in counts.items():
        if count > decks:
            deck_text = "one deck" if decks == 1 else f"{decks} decks"
            times = "twice" if count == 2 else f"{count} times"
            raise ValueError(
                f"{card} is {times} {where}, but {ruleset.name} deals from {deck_text}"
            )


def _client_seeds(text: str) -> tuple[str, ...]:
    """Client seeds as a round's results list them, separated by commas (or spaces)."""
    seeds = tuple(seed for seed in re.split(r"[\s,]+", text.strip()) if seed)
    try:
        return fair.canonical_seeds(seeds)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: client seeds are 1-{fair.CLIENT_SEED_MAX} characters of"
            f" {fair.CLIENT_SEED_ALPHABET} each, separated by commas"
        ) from None


def _add_derivation_options(parser: argparse.ArgumentParser, *, shoe: bool) -> None:
    """Derivation 2's options: the round (or shoe) and the client seeds its results list."""
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--round",
        type=_whole_number,
        metavar="N",
        help="the round's number, as its results show it (#N): its client seeds count",
    )
    if shoe:
        scope.add_argument(
            "--shoe",
            type=_whole_number,
            metavar="N",
            help="Niu-Niu Poker: the shoe's number, as the results show it: its client seeds count",
        )
    parser.add_argument(
        "--client-seeds",
        type=_client_seeds,
        metavar="SEEDS",
        help="the client seeds the results list, separated by commas (with --round"
        + (" or --shoe)" if shoe else ")"),
    )


def _derivation(args: argparse.Namespace) -> Derivation | None:
    """The derivation the options name (None when they are inconsistent: say so)."""
    shoe_id = getattr(args, "shoe", None)
    seeds: tuple[str, ...] = args.client_seeds or ()
    if args.round is not None:
        return Derivation(fair.V2, fair.Scope.ROUND, args.round, seeds)
    if shoe_id is not None:
        return Derivation(fair.V2, fair.Scope.SHOE, shoe_id, seeds)
    if args.client_seeds is not None:
        return None
    return SERVER_SEED_ONLY


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="niuniu-bot",
        description="Host 68 NiuNiu and its card games in Telegram groups. Every command"
        " but run and db works offline; `niuniu-bot COMMAND --help` says what each"
        " argument is. The rules: docs/rules.md.",
    )
    commands = parser.add_subparsers(
        dest="command", required=True, parser_class=_Parser, metavar="COMMAND"
    )

    rules = commands.add_parser(
        "rules",
        help="show the hand an envelope amount makes in 68 NiuNiu",
        description="Show the hand each amount makes in 68 NiuNiu (docs/rules.md, sections"
        " 2 to 4): its kind, points and multiplier, and whether it re-deals for a dealer or"
        " spares a player (免死). With --compare, which of two amounts wins and why.",
    )
    rules.add_argument(
        "amounts",
        nargs="+",
        type=_envelope,
        metavar="AMOUNT",
        help="an amount grabbed from a red envelope, 0.01 to 9.99 as the results show it"
        " (3.42): its three digits make the hand",
    )
    rules.add_argument(
        "--compare", action="store_true", help="compare exactly two amounts: which one wins"
    )

    verify = commands.add_parser(
        "verify",
        help="recompute a round's envelope split from its revealed seed",
        description="Recompute the shares a 68 NiuNiu round's envelope was split into, in"
        " grab order, from what its results show (docs/rules.md, sections 6 and 9): the"
        " seed, the round's number (--round) and the client seeds. Without --round, a"
        " round from before client seeds (derivation 1).",
    )
    verify.add_argument(
        "--seed",
        required=True,
        type=_seed,
        metavar="HEX",
        help="the seed the results reveal, in hex",
    )
    verify.add_argument(
        "--count",
        required=True,
        type=_positive_int,
        metavar="N",
        help="how many shares: the round's participants, the dealer included",
    )
    verify.add_argument(
        "--total",
        required=True,
        type=_amount,
        metavar="AMOUNT",
        help="the envelope's total amount, e.g. 25",
    )
    verify.add_argument(
        "--max-share",
        default=MAX_SHARE,
        type=_amount,
        metavar="AMOUNT",
        help="the largest share an envelope may hold (default: 9.99)",
    )
    _add_derivation_options(verify, shoe=False)

    cards = commands.add_parser(
        "cards",
        help="show the hand five cards make in a card game",
        description="Show the hand five cards make in a card game (docs/rules.md, section"
        " 7): the bull, its kind and points, and what it pays. With --compare, which of"
        " two hands wins and the rule that decides.",
    )
    cards.add_argument(
        "hands",
        nargs="+",
        metavar="HAND",
        help="five cards, quoted, each its rank (A, 2-10, J, Q, K) and suit (S, H, D, C):"
        ' "KS QH 10D 7C AS"',
    )
    cards.add_argument(
        "--ruleset",
        choices=CARD_RULESETS,
        default="bullbull",
        help=f"the game ({_games(CARD_RULESETS)}; default: %(default)s)",
    )
    cards.add_argument(
        "--compare", action="store_true", help="compare exactly two hands: which one wins"
    )

    deal = commands.add_parser(
        "deal",
        help="recompute a round's card deal from its revealed seed",
        description="Recompute the cards a card game's round dealt, hand by hand, from what"
        " its results show (docs/rules.md, sections 7 and 9): the seed, the round's (or"
        " Niu-Niu Poker's shoe's) number and the client seeds.",
    )
    deal.add_argument(
        "--ruleset",
        required=True,
        choices=CARD_RULESETS,
        help=f"the round's game ({_games(CARD_RULESETS)})",
    )
    deal.add_argument(
        "--seed",
        required=True,
        type=_seed,
        metavar="HEX",
        help="the seed the results reveal, in hex (Niu-Niu Poker: the shoe's)",
    )
    deal.add_argument(
        "--hands",
        required=True,
        type=_positive_int,
        metavar="N",
        help="how many hands: the bettors and 1 for the dealer, dealt last",
    )
    deal.add_argument(
        "--offset",
        default=0,
        type=_whole_number,
        metavar="N",
        help="Niu-Niu Poker: the cards the shoe dealt before the round (its results say)",
    )
    _add_derivation_options(deal, shoe=True)

    odds = commands.add_parser(
        "odds",
        help="what a bet is worth to the player, the dealer and the house",
        description="What one bet against the dealer returns to the player, the dealer and"
        " the house, per unit staked, at a game's default settings or the ones given"
        " (docs/rules.md, section 8).",
    )
    odds.add_argument(
        "--ruleset",
        choices=sorted(RULESETS),
        default=Settings().ruleset,
        help=f"the game ({_games(sorted(RULESETS))}; default: %(default)s, a new table's)",
    )
    odds.add_argument(
        "--rake",
        type=_rate,
        metavar="RATE",
        help="the platform's cut of every loss and every paid win, e.g. 5%% (default: the game's)",
    )
    odds.add_argument(
        "--rebate",
        type=_rate,
        metavar="RATE",
        help="paid back to players on every win and loss, e.g. 0.7%% (default: the game's)",
    )
    odds.add_argument(
        "--fees",
        type=_amount,
        metavar="AMOUNT",
        help="the dealer's fees a settled round, e.g. 3 (default: 0)",
    )
    odds.add_argument("--share", type=_share, metavar="AMOUNT", help=f"envelope68: {SHARE_MEANING}")
    odds.add_argument(
        "--loss-pays",
        choices=LOSS_PAYS,
        default=LOSS_PAYS[0],
        help="Niu-Niu Poker: what a loser pays by, the stake (player, the default) or the"
        " dealer's pattern (dealer)",
    )
    odds.add_argument(
        "--bettors",
        type=_positive_int,
        default=1,
        metavar="N",
        help="bettors against the dealer a round (default: 1)",
    )
    odds.add_argument(
        "--seed",
        type=_whole_number,
        default=0,
        metavar="N",
        help="the seed of the simulation, for the games whose odds are simulated (default: 0)",
    )

    db = commands.add_parser(
        "db",
        help="manage the database",
        description="Manage the bot's database, the one its configuration names (SQLite"
        " or PostgreSQL).",
    )
    db.add_argument(
        "action",
        choices=["upgrade"],
        metavar="ACTION",
        help="upgrade: apply every migration not applied yet (run does this too)",
    )
    _add_config_option(db)

    run = commands.add_parser(
        "run",
        help="run the bot (long polling, or webhook by setting)",
        description="Run the bot until stopped (SIGINT or SIGTERM): long polling, or a webhook"
        " when [telegram] mode is webhook. It needs the bot's token from @BotFather"
        " (NIUNIU_TELEGRAM_TOKEN, or [telegram] token in the config file); the database is"
        " a SQLite file, niuniu.db in the current folder, unless NIUNIU_DATABASE_URL or"
        " [database] url names another, and is migrated first. Every setting:"
        " config.example.toml and docs/operator.md.",
    )
    _add_config_option(run)

    demo = commands.add_parser(
        "demo",
        help="play a few rounds offline against a fake Telegram",
        description="Play a few rounds offline: the real bot against a fake Telegram, on a"
        " temporary database, with simulated players who bid, bet and grab. It prints the"
        " group as it plays, every message in the order the group gets it, then the chips.",
    )
    demo.add_argument(
        "--rounds", type=_positive_int, default=3, metavar="N", help="rounds to play (default: 3)"
    )
    demo.add_argument(
        "--ruleset",
        choices=sorted(RULESETS),
        default="envelope68",
        help=f"the game to play ({_games(sorted(RULESETS))}; default: %(default)s)",
    )
    demo.add_argument(
        "--dealer",
        choices=DEALERS,
        default="bid",
        help="bid: players bid for the dealer (the default); house: the group's bank deals",
    )
    demo.add_argument(
        "--language",
        choices=LANGUAGES,
        default="en",
        help="the language the group uses (default: %(default)s)",
    )
    demo.add_argument(
        "--pictures",
        type=Path,
        metavar="DIR",
        help="write the pictures the group gets (each round's results; on a card table the"
        " dealer's cards too) into the folder DIR, made if missing",
    )
    return parser


def _add_config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the TOML config file, as config.example.toml (default: $NIUNIU_CONFIG; without"
        " one, the defaults and the NIUNIU_* variables)",
    )


def _config(args: argparse.Namespace) -> Config:
    return load_config(args.config)


def _run_rules(args: argparse.Namespace) -> int:
    hands: list[Any] = args.amounts
    if args.compare:
        if len(hands) != 2:
            print("niuniu-bot: error: --compare needs exactly two amounts", file=sys.stderr)
            return EXIT_USAGE
        print(explain_comparison(RED_ENVELOPE, hands[0], hands[1]))
        return 0
    for hand in hands:
        print(describe_hand(RED_ENVELOPE, hand))
    return 0


def _usage_error(message: str) -> int:
    print(f"niuniu-bot: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _run_cards(args: argparse.Namespace) -> int:
    ruleset = get_ruleset(args.ruleset)
    texts: list[str] = args.hands
    if args.compare and len(texts) != 2:
        return _usage_error("--compare needs exactly two hands")
    hands: list[tuple[Card, ...]] = []
    for number, text in enumerate(texts, start=1):
        try:
            cards = _parse_hand(text)
            _check_decks(ruleset, [cards], "in one hand")
        except ValueError as error:
            return _usage_error(f"hand {number}: {error}" if len(texts) > 1 else str(error))
        hands.append(cards)
    if args.compare:
        try:
            _check_decks(ruleset, hands, "in the two hands")
        except ValueError as error:
            return _usage_error(str(error))
    evaluated = [ruleset.evaluate(pack(cards)) for cards in hands]
    for hand in evaluated:
        print(describe_cards(ruleset.show(hand)))
    if args.compare:
        print(explain_cards(ruleset, evaluated[0], evaluated[1]))
    return 0


def _run_deal(args: argparse.Namespace) -> int:
    ruleset = get_ruleset(args.ruleset)
    count: int = args.hands
    offset: int = args.offset
    most = (ruleset.max_bettors or 0) + 1
    if count > most:
        return _usage_error(
            f"{ruleset.name} deals at most {most} hands ({most - 1} bettors and the dealer)"
        )
    if offset and not ruleset.shoe_decks:
        return _usage_error(f"{ruleset.name} deals every round from a fresh deck: no --offset")
    if offset > ruleset.reshuffle_after:
        return _usage_error(
            f"a {ruleset.name} shoe is replaced once more than {ruleset.reshuffle_after} of its"
            f" cards are dealt: no round starts at offset {offset}"
        )
    derivation = _derivation(args)
    if derivation is None:
        return _usage_error("--client-seeds needs --round (or --shoe) N: whose deal they are")
    if derivation.scope is fair.Scope.ROUND and derivation.version != fair.V1 and offset:
        return _usage_error("a round's own seed deals from a fresh deck: give --shoe, not --round")
    try:
        deal = recompute_deal(
            ruleset, args.seed, count, mean_share=0, offset=offset, derivation=derivation
        )
    except ValueError as error:
        return _usage_error(str(error))
    assert deal.cards is not None, "the deal command takes card games only"
    decks = deal.cards.decks
    deck_text = "one deck" if decks == 1 else f"a shoe of {decks} decks"
    print(
        f"{ruleset.name}: {count} hands from {deck_text}, "
        f"cards {deal.cards.first}-{deal.cards.last} of the shuffle"
    )
    hands = [ruleset.evaluate(outcome) for outcome in deal.outcomes]
    dealer = hands[-1]
    width = len(f"bettor {count - 1}")
    for number, (hand, view) in enumerate(zip(hands, deal.views, strict=True), start=1):
        who = "dealer" if number == count else f"bettor {number}"
        dealt = " ".join(view.cards or ())
        line = f"{who:>{width}}: {dealt}  =  {describe_cards(view)}"
        if number < count:
            verdict = ruleset.compare(hand, dealer)
            if verdict > 0:
                line += f"; beats the dealer: wins {ruleset.win_multiplier(hand)}x the stake"
            elif verdict < 0:
                line += f"; loses to the dealer: {ruleset.loss_multiplier(dealer)}x the stake"
            else:
                line += "; ties the dealer: the stake back"
        print(line)
    print(f"commitment (SHA-256 of the seed): {deal.commitment}")
    _print_derivation(derivation, deal.deal_seed)
    return 0


def describe_odds(odds: Odds, settings: Settings) -> str:
    """The ``odds`` command's report: per 100 staked, for each side, and how it was found."""
    rake, rebate = format_bps(settings.rake_bps), format_bps(settings.rebate_bps)
    share = f", envelope share {format_amount(settings.envelope_mean_share)}"
    bettors = "1 bettor" if odds.bettors == 1 else f"{odds.bettors} bettors"
    margin = "exact" if odds.exact else f"each ± {100 * odds.half_width:.3f} %, 95 % confidence"
    # Only Niu-Niu Poker plays ``loss_pays dealer`` as a game of its own.
    by_dealer = settings.played_ruleset() is not get_ruleset(settings.ruleset)
    losses = ", losers pay by the dealer's pattern" if by_dealer else ""
    lines = [
        f"{odds.ruleset}: rake {rake}, rebate {rebate}{losses}"
        # The share sizes envelopes: it means something only where envelopes are grabbed.
        f"{share if get_ruleset(odds.ruleset).uses_grabs else ''}, {bettors}",
        odds.method,
        f"  player's bet   {100 * odds.player:+8.3f} % of the stake  ({margin})",
        f"  dealer         {100 * odds.dealer:+8.3f} % of the stake",
        f"  house edge     {100 * odds.platform:+8.3f} % of the stake (rake less rebates)",
        f"  re-dealt {100 * odds.redeal:.3f} % of rounds; tie, push or 免死 {100 * odds.tie:.3f} %",
        f"  dealer's fees  {format_amount(settings.dealer_fees)} a settled round, on top",
    ]
    return "\n".join(lines)


def _run_odds(args: argparse.Namespace) -> int:
    base = Settings()
    settings = Settings(ruleset=args.ruleset).with_table_defaults(base)
    changes = {
        name: value
        for name, value in (
            ("rake_bps", args.rake),
            ("rebate_bps", args.rebate),
            ("dealer_fee", args.fees),
            ("envelope_mean_share", args.share),
        )
        if value is not None
    }
    ruleset = get_ruleset(args.ruleset)
    if args.share is not None and not ruleset.uses_grabs:
        return _usage_error(
            f"--share is for envelope68, the red-envelope game: {args.ruleset} deals cards"
        )
    if args.loss_pays != LOSS_PAYS[0]:
        # A game without a variant of its own already charges a loss by the dealer's hand.
        if table_ruleset(args.ruleset, loss_by_dealer=True) is ruleset:
            return _usage_error(
                f"--loss-pays is for Niu-Niu Poker: in {args.ruleset} a loser always pays by"
                " the dealer's hand"
            )
        changes["loss_pays"] = args.loss_pays
    if ruleset.max_bettors is not None and args.bettors > ruleset.max_bettors:
        return _usage_error(f"{args.ruleset} seats at most {ruleset.max_bettors} bettors")
    try:
        settings = Settings.from_dict(changes, base=settings)
    except SettingError as error:
        return _usage_error(str(error))
    seed: int = args.seed
    found = table_odds(settings, bettors=args.bettors, rng_factory=lambda: random.Random(seed))
    print(describe_odds(found, settings))
    return 0


#: What ``verify`` and ``deal`` say when no round or shoe is named.
DERIVATION_1_NOTE = (
    "note: without --round (or --shoe) this is derivation 1, rounds from before client"
    " seeds; a later round needs --round N and the client seeds its results list"
    " (--client-seeds)"
)


def _print_derivation(derivation: Derivation, deal_seed: bytes) -> None:
    if derivation.version == fair.V1:
        # Derivation 1 reproduces only rounds from before client seeds: say so, on stderr
        # (the output stays the split or the deal alone).
        print(DERIVATION_1_NOTE, file=sys.stderr)
        return
    seeds = ", ".join(derivation.client_seeds) or "none"
    print(
        f"deal seed (v{derivation.version}, {derivation.scope.value} {derivation.scope_id},"
        f" client seeds: {seeds}): {deal_seed.hex()}"
    )


def _run_verify(args: argparse.Namespace) -> int:
    derivation = _derivation(args)
    if derivation is None:
        return _usage_error("--client-seeds needs --round N: whose split they are")
    try:
        deal_seed = derivation.deal_seed(args.seed)
        shares = split_envelope(deal_seed, args.count, args.total, max_share=args.max_share)
    except ValueError as error:
        print(f"niuniu-bot: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    for position, share in enumerate(shares, start=1):
        print(f"{position:>3}. {format_amount(share)}")
    print(f"total {format_amount(sum(shares))}")
    _print_derivation(derivation, deal_seed)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``niuniu-bot`` console script."""
    args = _build_parser().parse_args(argv)
    if args.command == "rules":
        return _run_rules(args)
    if args.command == "verify":
        return _run_verify(args)
    if args.command == "cards":
        return _run_cards(args)
    if args.command == "deal":
        return _run_deal(args)
    if args.command == "odds":
        return _run_odds(args)
    try:
        if args.command == "db":
            return _run_db(args)
        if args.command == "run":
            return _run_bot(args)
        if args.command == "demo":
            from bot import event_loop
            from bot.telegram.demo import run_demo

            return event_loop.run(
                run_demo(
                    rounds=args.rounds,
                    ruleset=args.ruleset,
                    dealer=args.dealer,
                    language=args.language,
                    pictures=args.pictures,
                )
            )
    except ConfigError as error:
        print(f"niuniu-bot: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    raise AssertionError(f"unhandled command {args.command}")


class _StopSignal:
    """SIGTERM before the bot serves (from then on it handles the signals itself) does what
    Ctrl-C does: inside ``event_loop.run`` the main task is cancelled, elsewhere
    ``KeyboardInterrupt`` is raised, so start-up stops at once and cleans up on its way
    out. Remembers which signal came."""

    def __init__(self) -> None:
        self.signum = signal.SIGINT

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.signum = signal.Signals(signum)
        on_interrupt = signal.getsignal(signal.SIGINT)  # the running loop's own while it runs
        if callable(on_interrupt):
            on_interrupt(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt


def _starting(config: Config, start: Callable[[], None]) -> int:
    """Run ``start`` (start-up, and for ``run`` the serving that follows); 0 once it returns.

    A failure is one line on stderr that says what to fix (``bot.startup_errors``), or for
    a failure not known there its traceback with every secret blanked; either way 1. SIGINT
    or SIGTERM stops it at once: after cleaning up, the process ends by the signal.
    """
    from bot import startup_errors

    stop = _StopSignal()
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        start()
    except KeyboardInterrupt:
        print(f"niuniu-bot: stopped by {stop.signum.name}", file=sys.stderr)
        sys.stderr.flush()
        signal.signal(stop.signum, signal.SIG_DFL)
        os.kill(os.getpid(), stop.signum)
        return 128 + stop.signum  # pragma: no cover (the signal ended the process)
    except Exception as error:
        line = startup_errors.explain(error, config)
        if line is None:
            sys.stderr.write(startup_errors.unexpected(error, config))
        else:
            print(f"niuniu-bot: error: {line}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


def _run_bot(args: argparse.Namespace) -> int:
    from bot import event_loop
    from bot.telegram.preflight import check_telegram
    from bot.telegram.runner import configure_logging, run_bot

    config = _config(args)
    tokens = config.require_tokens()

    def start() -> None:
        # Before the check, so that what PTB logs while asking is redacted too.
        configure_logging(config.log_level, list(tokens), config.log_format)
        event_loop.run(check_telegram(config))
        run_bot(config)

    return _starting(config, start)


def _run_db(args: argparse.Namespace) -> int:
    from bot.store.migrate import redact_url, upgrade

    config = _config(args)
    code = _starting(config, lambda: upgrade(config.database_url))
    if code == 0:
        print(f"database is up to date: {redact_url(config.database_url)}")
    return code


if __name__ == "__main__":
    sys.exit(main())

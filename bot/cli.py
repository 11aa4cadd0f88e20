"""The ``niuniu-bot`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bot.config import Config, ConfigError, load_config
from bot.money import format_amount, parse_amount
from bot.rules.envelope import Hand, HandKind, compare, evaluate
from bot.rules.split import split_envelope

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports bad arguments in one line and exits 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"niuniu-bot: error: {message}\n")


def _envelope(text: str) -> Hand:
    try:
        return evaluate(parse_amount(text, max_cents=999))
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


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return int(text)


def _amount(text: str) -> int:
    try:
        return parse_amount(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def describe_hand(hand: Hand) -> str:
    """One line about a hand: amount, kind in English and Chinese, points and multiplier."""
    kind = hand.kind
    name = f"{kind.english} {kind.chinese}"
    niuniu = " (Niu Niu 牛牛)" if hand.is_niuniu else ""
    unit = "point" if hand.points == 1 else "points"
    special = "; re-deals for a dealer, 免死 for a player" if hand.amount == 1 else ""
    return (
        f"{format_amount(hand.amount)}  {name}, {hand.points} {unit}{niuniu}, "
        f"{hand.multiplier}x{special}"
    )


def explain_comparison(a: Hand, b: Hand) -> str:
    """Say which of two hands wins and the rule that decides it."""
    verdict = compare(a, b)
    if verdict == 0:
        return f"{format_amount(a.amount)} ties {format_amount(b.amount)}: equal amounts"
    winner, loser = (a, b) if verdict > 0 else (b, a)
    if winner.kind is not loser.kind:
        why = f"{winner.kind.english} outranks {loser.kind.english}"
    elif winner.kind is HandKind.DUIZI and winner.amount % 100 != loser.amount % 100:
        why = f"pair {winner.amount % 100:02d} beats pair {loser.amount % 100:02d}"
    elif winner.points != loser.points:
        why = f"{winner.points} points beat {loser.points}"
    else:
        why = "same kind and points; the larger amount wins"
    return f"{format_amount(winner.amount)} beats {format_amount(loser.amount)}: {why}"


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="niuniu-bot", description="Host 68 NiuNiu in Telegram groups.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    rules = commands.add_parser("rules", help="show the hand of envelope amounts")
    rules.add_argument("amounts", nargs="+", type=_envelope, metavar="AMOUNT")
    rules.add_argument("--compare", action="store_true", help="compare exactly two amounts")

    verify = commands.add_parser("verify", help="recompute an envelope split from its seed")
    verify.add_argument("--seed", required=True, type=_seed, help="the revealed seed, hex")
    verify.add_argument("--count", required=True, type=_positive_int, help="number of shares")
    verify.add_argument("--total", required=True, type=_amount, help="the envelope total")
    verify.add_argument("--max-share", default=999, type=_amount, help="largest share")

    db = commands.add_parser("db", help="manage the database")
    db.add_argument("action", choices=["upgrade"], help="upgrade: apply every migration")
    _add_config_option(db)

    run = commands.add_parser("run", help="run the bot (long polling, or webhook by setting)")
    _add_config_option(run)

    demo = commands.add_parser("demo", help="play a few rounds offline against a fake Telegram")
    demo.add_argument("--rounds", type=_positive_int, default=3, help="rounds to play")
    return parser


def _add_config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="config file (default: $NIUNIU_CONFIG)")


def _config(args: argparse.Namespace) -> Config:
    return load_config(args.config)


def _run_rules(args: argparse.Namespace) -> int:
    hands: list[Hand] = args.amounts
    if args.compare:
        if len(hands) != 2:
            print("niuniu-bot: error: --compare needs exactly two amounts", file=sys.stderr)
            return EXIT_USAGE
        print(explain_comparison(hands[0], hands[1]))
        return 0
    for hand in hands:
        print(describe_hand(hand))
    return 0


def _run_verify(args: argparse.Namespace) -> int:
    try:
        shares = split_envelope(args.seed, args.count, args.total, max_share=args.max_share)
    except ValueError as error:
        print(f"niuniu-bot: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    for position, share in enumerate(shares, start=1):
        print(f"{position:>3}. {format_amount(share)}")
    print(f"total {format_amount(sum(shares))}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``niuniu-bot`` console script."""
    args = _build_parser().parse_args(argv)
    if args.command == "rules":
        return _run_rules(args)
    if args.command == "verify":
        return _run_verify(args)
    try:
        if args.command == "db":
            return _run_db(args)
        if args.command == "run":
            from bot.telegram.runner import run_bot

            run_bot(_config(args))
            return 0
        if args.command == "demo":
            import asyncio

            from bot.telegram.demo import run_demo

            return asyncio.run(run_demo(rounds=args.rounds))
    except ConfigError as error:
        print(f"niuniu-bot: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    raise AssertionError(f"unhandled command {args.command}")


def _run_db(args: argparse.Namespace) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    from bot.store.migrate import upgrade

    config = _config(args)
    try:
        upgrade(config.database_url)
    except (SQLAlchemyError, OSError) as error:
        reason = str(getattr(error, "orig", None) or error).splitlines()[0]
        print(
            f"niuniu-bot: error: cannot migrate {redact_url(config.database_url)}: {reason}",
            file=sys.stderr,
        )
        return 1
    print(f"database is up to date: {redact_url(config.database_url)}")
    return 0


def redact_url(url: str) -> str:
    """A database URL fit for logs: the password hidden."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


if __name__ == "__main__":
    sys.exit(main())

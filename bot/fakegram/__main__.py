"""Run the fake Telegram Bot API server standalone.

``python -m bot.fakegram --port 8081 [--token T]`` prints the base URL to give the bot
(``http://127.0.0.1:8081/bot``) on its own line, then serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import signal

from bot.fakegram.server import FakeTelegram


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bot.fakegram", description="Fake Telegram Bot API server"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081, help="0 picks a free port")
    parser.add_argument("--token", default="123456:TEST")
    parser.add_argument("--bot-username", default="niuniu_test_bot")
    parser.add_argument(
        "--group-message-limit-per-minute",
        type=int,
        default=None,
        help="answer 429 once a group chat got this many sendMessage in 60 s",
    )
    parser.add_argument(
        "--round-trip-ms",
        type=float,
        default=0.0,
        help="answer every Bot API call this much later, as across a network",
    )
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace) -> None:
    """Serve until SIGTERM or SIGINT."""
    fake = FakeTelegram(
        token=args.token,
        bot_username=args.bot_username,
        group_message_limit_per_minute=args.group_message_limit_per_minute,
        round_trip_ms=args.round_trip_ms,
    )
    stop_requested = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop_requested.set)
    await fake.start(args.host, args.port)
    print(fake.base_url, flush=True)
    try:
        await stop_requested.wait()
    finally:
        await fake.stop()


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    asyncio.run(serve(_parse_args(argv)))


if __name__ == "__main__":
    main()

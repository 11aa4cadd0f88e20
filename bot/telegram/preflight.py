"""Checks before ``niuniu-bot run`` touches the database: does Telegram take the token?

Asked first, a wrong token or an unreachable Bot API fails the start in a few seconds
and before any migration, with PTB's own errors (``InvalidToken``, ``TimedOut``,
``NetworkError``), which ``bot.startup_errors`` turns into one line. The bot's
``Application`` asks ``getMe`` again when it starts; one more request at start-up is cheap.
"""

from __future__ import annotations

from telegram import Bot

from bot.config import Config
from bot.telegram.http import BotApiRequest

#: How long the check waits to connect, and then for the answer.
CHECK_TIMEOUT_SECONDS = 5.0


async def check_telegram(config: Config, *, timeout: float = CHECK_TIMEOUT_SECONDS) -> None:
    """Ask Telegram who each bot is (``getMe``); raise PTB's error if it will not say.

    Each step (connecting, sending, waiting for the answer) waits at most ``timeout``.
    """

    def request() -> BotApiRequest:
        return BotApiRequest(
            connection_pool_size=1,
            connect_timeout=timeout,
            read_timeout=timeout,
            write_timeout=timeout,
            pool_timeout=timeout,
        )

    for token in config.require_tokens():  # each bot's, one after another
        bot = Bot(
            token,
            base_url=config.telegram_base_url,
            request=request(),
            get_updates_request=request(),
        )
        async with bot:  # initialize() is getMe; leaving the block closes the connections
            pass

"""A fake Telegram Bot API server for offline tests and the demo.

``FakeTelegram`` serves the Bot API over real HTTP so python-telegram-bot works against it
unchanged; ``FakeTelegramClient`` drives it from another process.
"""

from bot.fakegram.client import FakeTelegramClient
from bot.fakegram.server import MEMBER_STATUSES, FakeTelegram

__all__ = ["MEMBER_STATUSES", "FakeTelegram", "FakeTelegramClient"]

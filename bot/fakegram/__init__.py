"""A fake Telegram Bot API server for offline tests and the demo.

Hand-written because no maintained library fakes the Bot API over HTTP.

``FakeTelegram`` serves the Bot API over real HTTP so python-telegram-bot works against it
unchanged; ``FakeTelegramClient`` drives it from another process; a ``FaultMix`` has
it misbehave as Telegram does at its bad moments (``bot.fakegram.faults``).
"""

from bot.fakegram.client import FakeTelegramClient
from bot.fakegram.faults import FaultMix
from bot.fakegram.members import MEMBER_STATUSES
from bot.fakegram.server import FakeTelegram

__all__ = ["MEMBER_STATUSES", "FakeTelegram", "FakeTelegramClient", "FaultMix"]

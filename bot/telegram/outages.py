"""The database's bad moments as the shell sees them: whether a failure is the
database's (``database_unavailable_here``), and a log line now and then while it lasts
(``OutageLog``), not one per sweep, round and message."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from telegram.error import TelegramError

from bot.failures import causes, first_line
from bot.service.game import database_unavailable

#: How often an outage that goes on is logged again.
OUTAGE_LOG_SECONDS = 10.0


def database_unavailable_here(error: BaseException) -> bool:
    """Whether work failed because the database cannot be reached or refuses writes (not
    Telegram: a connection it refused looks the same underneath)."""
    if any(isinstance(cause, TelegramError) for cause in causes(error)):
        return False
    return database_unavailable(error)


class OutageLog:
    """Logs that the database is unavailable at most every ``every_seconds``, with how
    many times it was found so in between."""

    def __init__(
        self,
        logger: logging.Logger,
        *,
        every_seconds: float = OUTAGE_LOG_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self.every_seconds = every_seconds
        self.clock = clock
        self._logged_at: float | None = None
        self._since = 0

    def unavailable(self, what: str, error: BaseException) -> None:
        """``what`` failed because the database is unavailable (``error``)."""
        now = self.clock()
        self._since += 1
        if self._logged_at is not None and now - self._logged_at < self.every_seconds:
            return
        more = f" ({self._since - 1} more since)" if self._since > 1 else ""
        self.logger.warning("%s: the database is unavailable: %s%s", what, first_line(error), more)
        self._logged_at = now
        self._since = 0

"""Round trips counted: the statements a use case sends to PostgreSQL, its calls on
SQLite's writer thread, and the commands that took the general path."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import asyncpg
import pytest

from bot.service.round_steps import RoundSteps
from bot.store.db import SqliteThread


def counting(seen: Counter[str], name: str, original: Callable[..., Awaitable[Any]]) -> Any:
    """``original`` counted in ``seen`` under ``name`` at each call (a statement of
    transaction control under its own, e.g. ``postgres BEGIN``)."""

    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        query = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
        first = query.split()[0].rstrip(";") if query.strip() else ""
        transaction_control = first in ("BEGIN", "COMMIT", "ROLLBACK")
        seen[f"{name} {first}" if transaction_control else name] += 1
        return await original(*args, **kwargs)

    return wrapper


@contextmanager
def trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Counts the hot path's statements to PostgreSQL, its calls on SQLite's writer
    thread, and the commands that took the general path."""
    seen: Counter[str] = Counter()

    connection = asyncpg.connection.Connection
    for method in ("fetch", "fetchrow", "fetchval", "execute"):
        monkeypatch.setattr(
            connection, method, counting(seen, "postgres", getattr(connection, method))
        )
    monkeypatch.setattr(SqliteThread, "run", counting(seen, "sqlite", SqliteThread.run))
    monkeypatch.setattr(SqliteThread, "run_bare", counting(seen, "sqlite", SqliteThread.run_bare))
    general = RoundSteps._run_whole
    monkeypatch.setattr(RoundSteps, "_run_whole", counting(seen, "general", general))
    yield seen

"""The hot path's own pool of PostgreSQL connections (``DriverPool``): connections are
reused, never more than its size are open, and one a lease may have left mid-statement is
closed rather than handed to the next command."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from bot.engine.errors import RuleViolation
from bot.priority import urgent
from bot.store import db as db_module
from bot.store.db import DriverPool


@pytest.fixture
async def pool(postgres_url: str) -> AsyncIterator[DriverPool]:
    dsn = make_url(postgres_url).set(drivername="postgresql").render_as_string(False)
    driver_pool = DriverPool(dsn, 3)
    yield driver_pool
    await driver_pool.close()


async def _backend(pool: DriverPool) -> int:
    async with pool.connection() as driver:
        pid: int = await driver.fetchval("SELECT pg_backend_pid()")
        return pid


async def test_a_connection_is_reused_lease_after_lease(pool: DriverPool) -> None:
    assert len({await _backend(pool) for _ in range(5)}) == 1


async def test_filled_it_holds_its_size_and_knows_the_array_types(
    pool: DriverPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Filled at start-up, the pool opens no connection for a burst of commands, and none
    of them waits for asyncpg to look an array type up in the server's catalog."""
    await pool.fill()
    opened: list[asyncpg.Connection] = []
    open_one = pool._open

    async def counted() -> asyncpg.Connection:
        opened.append(await open_one())
        return opened[-1]

    monkeypatch.setattr(pool, "_open", counted)
    asked: list[str] = []

    async def lease() -> int:
        async with pool.connection() as driver:
            driver.add_query_logger(lambda record: asked.append(record.query))
            assert await driver.fetchval("SELECT $1::int8[]", [7, 8]) == [7, 8]
            assert await driver.fetchval("SELECT $1::bool[]", [True]) == [True]
            assert await driver.fetchval("SELECT $1::varchar[]", ["a"]) == ["a"]
            await asyncio.sleep(0.05)  # the three leases overlap
            pid: int = driver.get_server_pid()
            return pid

    with urgent():  # all three slots (one is kept for urgent work)
        pids = await asyncio.gather(lease(), lease(), lease())
    await asyncio.sleep(0)  # asyncpg tells its query loggers on the loop's next turn
    assert len(set(pids)) == 3
    assert opened == []
    assert len(asked) == 9
    assert not [query for query in asked if "typeinfo" in query]


async def test_never_more_connections_than_its_size_and_urgent_work_has_the_last(
    pool: DriverPool,
) -> None:
    # Of three connections, one is for urgent work only: two ordinary leases at a time.
    open_now = 0
    most = 0

    async def lease() -> int:
        nonlocal open_now, most
        async with pool.connection() as driver:
            open_now += 1
            most = max(most, open_now)
            await driver.execute("SELECT pg_sleep(0.02)")
            open_now -= 1
            pid: int = driver.get_server_pid()
            return pid

    backends = await asyncio.gather(*(lease() for _ in range(12)))
    assert most == 2
    assert len(set(backends)) == 2
    with urgent():
        backends_urgent = await asyncio.gather(*(lease() for _ in range(6)))
    assert len(set(backends_urgent)) == 3


async def test_errors_between_or_from_statements_keep_the_connection(pool: DriverPool) -> None:
    first = await _backend(pool)
    with pytest.raises(RuleViolation):
        async with pool.connection() as driver:
            await driver.fetchval("SELECT 1")
            raise RuleViolation("not_enough_chips_to_bet")
    with pytest.raises(asyncpg.DivisionByZeroError):
        async with pool.connection() as driver:
            await driver.fetchval("SELECT 1 / 0")
    assert await _backend(pool) == first


async def test_a_lease_cancelled_mid_statement_closes_its_connection(pool: DriverPool) -> None:
    first = await _backend(pool)
    held: list[asyncpg.Connection] = []

    async def slow() -> None:
        async with pool.connection() as driver:
            held.append(driver)
            await driver.execute("SELECT pg_sleep(5)")

    task = asyncio.create_task(slow())
    while not held:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert held[0].is_closed()
    second = await _backend(pool)
    assert second != first
    assert await _backend(pool) == second  # and the new one is reused in turn


async def test_a_transaction_left_open_is_not_handed_on(pool: DriverPool) -> None:
    first = await _backend(pool)
    async with pool.connection() as driver:
        await driver.execute("BEGIN")
    assert await _backend(pool) != first


async def test_closing_closes_idle_connections_and_leased_ones_at_their_end(
    pool: DriverPool,
) -> None:
    async with pool.connection() as leased:
        async with pool.connection() as idle:
            pass
        await pool.close()
        assert idle.is_closed() and not leased.is_closed()
    assert leased.is_closed()
    with pytest.raises(asyncpg.InterfaceError):
        await _backend(pool)


async def test_its_statements_are_planned_once_for_any_parameters(pool: DriverPool) -> None:
    async with pool.connection() as driver:
        assert await driver.fetchval("SHOW plan_cache_mode") == "force_generic_plan"


async def test_a_connection_idle_too_long_is_not_used_again(
    pool: DriverPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = await _backend(pool)
    monkeypatch.setattr(db_module, "IDLE_CONNECTION_SECONDS", -1.0)
    # A firewall may have dropped it silently: a new connection instead.
    assert await _backend(pool) != first


async def test_filling_with_the_server_away_is_left_to_the_leases(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Port 1 refuses at once: the bot starts, and its leases open connections later.
    pool = DriverPool("postgresql://postgres@127.0.0.1:1/nowhere", 2)
    await pool.fill()
    assert "opening the database's connections failed" in caplog.text
    with pytest.raises(OSError):
        async with pool.connection():
            pass
    await pool.close()

"""History bench: reads that must cost the same on a database with a long history as on an
empty one.

    python bench/bench_history.py [--rounds N] [--postings N] [--groups N] [--runs N]
                                  [--postgres-url URL] [--only sqlite|postgres]

For SQLite (temporary files) and PostgreSQL (fresh databases created on the server of
``--postgres-url`` and dropped afterwards; skipped with a message if unreachable), two
databases are migrated: a FULL one, filled with ``--rounds`` settled and announced rounds
(100,000 by default) and ``--postings`` postings (1,000,000; two per ledger transaction)
over ``--groups`` groups (300), and an EMPTY one. The fill is plain SQL on the server
(``INSERT ... SELECT`` over ``generate_series`` on PostgreSQL, a recursive CTE on SQLite).
In the full database:

- the busy group has a quarter of all rounds, and the long-playing player there has a
  fifth of all ledger transactions (bet holds, which net to zero for them, and wins);
- the quiet group has five rounds, the oldest of all;
- the other rounds and transactions are spread over the other groups.

Then both databases get the same few rows through ``GameService``, as a live bot writes
them: the tables open, chips credited, an open round in the busy group and a round of the
quiet group that ended without its results going out. PostgreSQL's full database is
``ANALYZE``d (as autovacuum would); SQLite's is not (nobody runs it on an embedded file).

It times, through ``GameService`` and alternating full and empty, ``--runs`` times each
(31 by default, after a warm-up): ``/history`` of the busy and of the quiet group,
``/balance`` and ``/ledger`` (the statement) of the long-playing player, ``/stats`` of the
busy group's dealer (a quarter of all outcomes) and of the long-playing player, ``/top``
of the busy and of the quiet group, the sweep's two
queries (``due_rounds`` and ``due_chat_ids``) and a restart's two (``unannounced`` and
``open_rounds``), and the console's lists (a page of rounds: of every group, of the busy
group, of a player, of one day; the overview's 30 days; a step of a group's ledger CSV
after the whole history; a page of the audit log). For each it prints the median on the
full and on the empty database and their ratio, against the aim (full within 2x of
empty), and then the plan of every SQL statement it sent on the full database
(PostgreSQL ``EXPLAIN``, SQLite ``EXPLAIN QUERY PLAN``), so that the indexes used are
visible. It asserts nothing about times.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_store import DEFAULT_POSTGRES_URL

from bot.engine.settings import Settings
from bot.service.console import ConsoleService, RoundFilter
from bot.service.game import GameService, Person
from bot.store.db import Database
from bot.store.migrate import upgrade_async
from bot.store.statements import Positional

AIM = 2.0
ADMIN = Person(1, "Admin")
DEALER = Person(2, "Dealer")
#: Group g is chat -(1000 + g): group 0 is the busy one, group 1 the quiet one.
BUSY, QUIET = -1000, -1001
#: Player p of group g is user 10000 + 20 g + p; the long-playing player is the busy
#: group's player 0.
LONG_PLAYER = Person(10_000, "Long")
#: The dealer of every round of the busy group in the fill (player 1 of group 0).
BUSY_DEALER_ID = 10_001
PLAYERS_PER_GROUP = 20
#: Accounts per group: the house, the mint, and each player's available and held.
ACCOUNTS_PER_GROUP = 2 + 2 * PLAYERS_PER_GROUP
HISTORY_STARTS_MS = 1_700_000_000_000
NOW_MS = 1_800_000_000_000
SETTINGS = Settings(min_bid=1_000, bid_increment=1_000)


@dataclass(frozen=True)
class Dialect:
    """What the fill's SQL spells differently on each database."""

    #: A query of one column ``n``, the integers 1..{count}.
    series: str
    true: str
    false: str
    empty_object: str
    empty_list: str
    seed: str
    explain: str


SQLITE = Dialect(
    series="WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < {count}) "
    "SELECT n FROM c",
    true="1",
    false="0",
    empty_object="'{}'",
    empty_list="'[]'",
    seed="zeroblob(32)",
    explain="EXPLAIN QUERY PLAN ",
)
POSTGRES = Dialect(
    series="SELECT n FROM generate_series(1::bigint, {count}) AS g(n)",
    true="true",
    false="false",
    empty_object="'{}'::json",
    empty_list="'[]'::json",
    seed="'\\x00'::bytea",
    explain="EXPLAIN ",
)


def fill_statements(dialect: Dialect, groups: int, rounds: int, postings: int) -> list[str]:
    """``INSERT ... SELECT`` statements that fill the history (ids given explicitly)."""
    transactions = postings // 2
    d = dialect

    def insert(table: str, columns: str, values: str, count: int, source: str = "") -> str:
        rows = f"({d.series.format(count=count)}) AS s"
        if source:  # a derived table over the series, for values that need it
            rows = f"(SELECT {source} FROM {rows}) AS s"
        return f"INSERT INTO {table} ({columns}) SELECT {values} FROM {rows}"

    # Round n: the quiet group's are the five oldest, a quarter are the busy group's.
    round_group = f"CASE WHEN n <= 5 THEN 1 WHEN n % 4 = 0 THEN 0 ELSE 2 + n % {groups - 2} END"
    # Transaction n: every fifth is the long-playing player's in the busy group: a bet's
    # hold (even k = n / 5) or a win (odd k); the others credit a player of group n % G.
    mine, hold = "n % 5 = 0", "(n / 5) % 2 = 0"
    sign = "(CASE WHEN leg = 0 THEN -1 ELSE 1 END)"
    return [
        insert(
            "chats",
            "id, title, is_group, is_open, settings, next_round_at_ms, created_at_ms",
            f"-(999 + n), 'group ' || n, {d.true}, {d.false}, {d.empty_object}, NULL, "
            f"{HISTORY_STARTS_MS}",
            groups,
        ),
        insert(
            "accounts",
            "id, chat_id, kind, user_id, balance",
            "n, -(1000 + g), CASE WHEN k = 0 THEN 'house' WHEN k = 1 THEN 'mint' "
            "WHEN k % 2 = 0 THEN 'available' ELSE 'held' END, "
            f"CASE WHEN k < 2 THEN 0 ELSE 10000 + {PLAYERS_PER_GROUP} * g + (k - 2) / 2 END, 0",
            groups * ACCOUNTS_PER_GROUP,
            source=f"n, (n - 1) / {ACCOUNTS_PER_GROUP} AS g, (n - 1) % {ACCOUNTS_PER_GROUP} AS k",
        ),
        insert(
            "rounds",
            "id, chat_id, phase, version, deadline_ms, commitment, seed, settings, high_bidder, "
            "high_bid, bid_hold, dealer_id, pool, shares, void_reason, board_message_id, "
            "started_at_ms, ended_at_ms, shoe_id, deal_offset, announced_at_ms",
            f"n, -(1000 + g), 'settled', 7, {HISTORY_STARTS_MS} + n * 60000 + 50000, "
            f"'commitment', {d.seed}, {d.empty_object}, 10001 + {PLAYERS_PER_GROUP} * g, "
            f"1000, 1100, 10001 + {PLAYERS_PER_GROUP} * g, 1000, {d.empty_list}, NULL, n, "
            f"{HISTORY_STARTS_MS} + n * 60000, {HISTORY_STARTS_MS} + n * 60000 + 55000, "
            f"NULL, NULL, {HISTORY_STARTS_MS} + n * 60000 + 55000",
            rounds,
            source=f"n, {round_group} AS g",
        ),
        insert(
            "outcomes",
            "id, round_id, user_id, role, stake, envelope, kind, points, multiplier, result, "
            "gross, rake, rebate, net",
            f"n, n, 10001 + {PLAYERS_PER_GROUP} * g, 'dealer', 1000, 342, 'bull', 9, 2, "
            "'dealer', 0, 0, 0, n % 201 - 100",
            rounds,
            source=f"n, {round_group} AS g",
        ),
        insert(
            "ledger_transactions",
            "id, chat_id, kind, round_id, actor_id, memo, created_at_ms",
            f"n, CASE WHEN {mine} THEN {BUSY} ELSE -(1000 + n % {groups}) END, "
            f"CASE WHEN {mine} AND {hold} THEN 'bet' WHEN {mine} THEN 'settle' ELSE 'credit' END, "
            f"NULL, NULL, '', {HISTORY_STARTS_MS} + n * 1000",
            transactions,
        ),
        insert(
            "postings",
            "id, transaction_id, account_id, amount",
            # Account ids: group g's k-th account is 42 g + k + 1 (the busy group's house
            # is 1, the long-playing player's available 3 and held 4).
            f"m, n, CASE WHEN {mine} AND {hold} THEN 3 + leg "
            f"WHEN {mine} THEN CASE WHEN leg = 0 THEN 1 ELSE 3 END "
            f"ELSE (n % {groups}) * {ACCOUNTS_PER_GROUP} + CASE WHEN leg = 0 THEN 2 "
            f"ELSE 3 + 2 * (1 + (n / {groups}) % {PLAYERS_PER_GROUP - 1}) END END, "
            f"CASE WHEN {mine} AND {hold} THEN {sign} * 300 "
            f"WHEN {mine} THEN {sign} * (1 + n % 97) ELSE {sign} * (100 + n % 1000) END",
            2 * transactions,
            source="n AS m, (n + 1) / 2 AS n, (n + 1) % 2 AS leg",
        ),
    ]


#: Tables whose ids the fill chose: PostgreSQL's sequences must continue after them.
FILLED_WITH_IDS = ("accounts", "rounds", "outcomes", "ledger_transactions", "postings")


async def fill(db: Database, dialect: Dialect, groups: int, rounds: int, postings: int) -> float:
    """Fill the history; the seconds it took."""
    started = time.perf_counter()
    async with db.engine.begin() as connection:
        for statement in fill_statements(dialect, groups, rounds, postings):
            await connection.exec_driver_sql(statement)
        if dialect is POSTGRES:
            for table in FILLED_WITH_IDS:
                await connection.exec_driver_sql(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                    f"(SELECT max(id) FROM {table}))"
                )
    if dialect is POSTGRES:
        async with db.engine.connect() as connection:
            autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
            await autocommit.exec_driver_sql("ANALYZE")
    return time.perf_counter() - started


class Clock:
    def __init__(self) -> None:
        self.now_ms = NOW_MS

    def __call__(self) -> int:
        return self.now_ms


async def add_live_rows(service: GameService, clock: Clock) -> None:
    """What a live bot adds, the same on both databases: open tables, chips, a round of
    the quiet group that ended unannounced and an open round in the busy group."""
    for chat_id in (BUSY, QUIET):
        await service.note_chat(chat_id, "bench")
        await service.set_open(chat_id, ADMIN, True)
    for person in (DEALER, LONG_PLAYER):
        await service.credit(BUSY, ADMIN, person.id, 1_000_000)
    quiet = (await service.start_round(QUIET, actor=ADMIN)).round
    assert quiet is not None
    clock.now_ms += SETTINGS.bid_seconds * 1000
    await service.advance(quiet.id)  # nobody bid: void, and not announced
    busy = (await service.start_round(BUSY, actor=ADMIN)).round
    assert busy is not None
    await service.bid(BUSY, DEALER, 10_000)


async def history_end(db: Database) -> int:
    """The last ledger transaction of the history (0 on the empty database): what the live
    rows come after."""
    async with db.engine.connect() as connection:
        found = await connection.exec_driver_sql("SELECT max(id) FROM ledger_transactions")
        return int(found.scalar() or 0)


def operations(
    service: GameService, after_history: int
) -> dict[str, Callable[[], Awaitable[object]]]:
    async def sweep() -> object:
        return await service.due_rounds(), await service.due_chat_ids()

    async def restart() -> object:
        return await service.unannounced(), await service.open_rounds()

    console = ConsoleService(service)
    a_day_of_history = HISTORY_STARTS_MS + 50_000 * 60_000

    def console_rounds(where: RoundFilter) -> Callable[[], Awaitable[object]]:
        return lambda: console.rounds(where, before_id=None, limit=50)

    return {
        "/history, busy group": lambda: service.history(BUSY, 10),
        "/history, quiet group": lambda: service.history(QUIET, 10),
        "/balance": lambda: service.balance(BUSY, LONG_PLAYER.id),
        "/ledger (statement), long player": lambda: service.statement(BUSY, LONG_PLAYER.id, 15),
        # The busy group's dealer has a quarter of all outcomes; the long player none.
        "/stats, busy group's dealer": lambda: service.player_stats(BUSY, BUSY_DEALER_ID),
        "/stats, long player": lambda: service.player_stats(BUSY, LONG_PLAYER.id),
        "/top, busy group": lambda: service.leaders(BUSY),
        "/top, quiet group": lambda: service.leaders(QUIET),
        "sweep (due_rounds + due_chat_ids)": sweep,
        "restart (unannounced + open_rounds)": restart,
        "console: rounds, every group": console_rounds(RoundFilter()),
        "console: rounds, busy group": console_rounds(RoundFilter(chat_id=BUSY)),
        "console: rounds, a player": console_rounds(RoundFilter(user_id=10_001)),
        "console: rounds, one day": console_rounds(
            RoundFilter(
                started_from_ms=a_day_of_history, started_before_ms=a_day_of_history + 86_400_000
            )
        ),
        # The worst case of the game filter: no round of the history is a Bull Bull round.
        "console: rounds, a game no round plays": console_rounds(RoundFilter(ruleset="bullbull")),
        "console: overview, 30 days": lambda: console.overview(None, now_ms=NOW_MS),
        # A step of the export after the whole history (the live rows: the same few on
        # both databases): a step deep in a long ledger must not cost more than the first
        # of a short one. (A step of 1,000 transactions would compare 1,000 rows read with
        # the empty database's three.)
        "console: group ledger, a CSV step": lambda: console.ledger(
            BUSY, after_id=after_history, limit=1000
        ),
        "console: audit page": lambda: console.audit(BUSY, before_id=None, limit=50),
    }


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await call()
    return time.perf_counter() - started


async def plans(db: Database, dialect: Dialect, call: Callable[[], Awaitable[object]]) -> str:
    """The plan of each SQL statement ``call`` sends (beyond BEGIN): through SQLAlchemy,
    and through the hot path's connections (``Database.read_one`` and ``read_all``)."""
    sent: list[tuple[str, Any]] = []
    sent_bare: list[tuple[str, Positional, dict[str, Any]]] = []

    def note(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if statement.lstrip().upper().startswith(("SELECT", "WITH")):
            sent.append((statement, parameters))

    read = db._read

    async def noting_read(
        sqlite: str, postgres: Positional, params: dict[str, Any], *, every_row: bool
    ) -> Any:
        sent_bare.append((sqlite, postgres, params))
        return await read(sqlite, postgres, params, every_row=every_row)

    engine = db.read_engine.sync_engine
    event.listen(engine, "before_cursor_execute", note)
    db._read = noting_read  # type: ignore[method-assign]
    try:
        await call()
    finally:
        event.remove(engine, "before_cursor_execute", note)
        del db._read
    lines = []
    async with db.read_engine.connect() as connection:
        for statement, parameters in sent:
            lines.append("    " + " ".join(statement.split()))
            plan = await connection.exec_driver_sql(dialect.explain + statement, parameters)
            lines += ["      | " + " ".join(str(part) for part in row[-1:]) for row in plan]
    for sqlite, postgres, params in sent_bare:
        lines.append("    " + " ".join((sqlite if db.sqlite_reader else postgres.sql).split()))
        lines += [
            "      | " + step for step in await _bare_plan(db, dialect, sqlite, postgres, params)
        ]
    return "\n".join(lines)


async def _bare_plan(
    db: Database, dialect: Dialect, sqlite: str, postgres: Positional, params: dict[str, Any]
) -> list[str]:
    """The plan of one read of the hot path's, on its own connections: on PostgreSQL the
    plan those connections run, made once for any parameters (prepared, then explained
    with every parameter NULL: a generic plan does not look at them)."""
    if db.sqlite_reader is not None:
        rows = await db.sqlite_reader.run(
            lambda connection: connection.execute(dialect.explain + sqlite, params).fetchall()
        )
        return [str(row[-1]) for row in rows]
    assert db.driver_pool is not None
    nulls = ", ".join("NULL" for _ in postgres.names)
    async with db.driver_pool.connection() as driver:
        await driver.execute(f"PREPARE bench_plan AS {postgres.sql}")
        try:
            found = await driver.fetch(f"EXPLAIN EXECUTE bench_plan({nulls})")
        finally:
            await driver.execute("DEALLOCATE bench_plan")
    return [str(row[0]) for row in found]


async def run(
    label: str,
    dialect: Dialect,
    full_url: str,
    empty_url: str,
    *,
    groups: int,
    rounds: int,
    postings: int,
    runs: int,
) -> None:
    print(f"\n{label}")
    databases: list[tuple[Database, GameService]] = []
    ends: list[int] = []
    try:
        for url in (full_url, empty_url):
            await upgrade_async(url)
            db = Database.from_url(url)
            clock = Clock()
            databases.append((db, GameService(db, SETTINGS, clock=clock)))
            if url == full_url:
                seconds = await fill(db, dialect, groups, rounds, postings)
                print(
                    f"  filled {rounds:,} rounds and {postings // 2 * 2:,} postings over "
                    f"{groups} groups in {seconds:.1f} s"
                )
            ends.append(await history_end(db))
            await add_live_rows(databases[-1][1], clock)
        (full_db, full), (_, empty) = databases
        full_ops, empty_ops = operations(full, ends[0]), operations(empty, ends[1])
        print(f"  median of {runs} runs, ms:    full     empty   full/empty (aim <= {AIM:.0f}x)")
        for name in full_ops:
            times: dict[str, list[float]] = {"full": [], "empty": []}
            for _ in range(3):  # warm-up: caches, prepared statements, pooled connections
                await full_ops[name]()
                await empty_ops[name]()
            for _ in range(runs):
                times["full"].append(await timed(full_ops[name]))
                times["empty"].append(await timed(empty_ops[name]))
            on_full, on_empty = statistics.median(times["full"]), statistics.median(times["empty"])
            ratio = on_full / on_empty
            print(
                f"  {name:<38} {on_full * 1e3:8.3f} {on_empty * 1e3:8.3f} {ratio:8.2f}x  "
                f"{'met' if ratio <= AIM else 'NOT met'}"
            )
        print("  plans on the full database:")
        for name, call in full_ops.items():
            print(f"  {name}:")
            print(await plans(full_db, dialect, call))
    finally:
        for db, _ in databases:
            await db.dispose()


async def sqlite_run(**sizes: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        await run(
            "SQLite (temporary files, WAL)",
            SQLITE,
            f"sqlite+aiosqlite:///{Path(directory) / 'full.db'}",
            f"sqlite+aiosqlite:///{Path(directory) / 'empty.db'}",
            **sizes,
        )


async def postgres_run(admin_url: str, **sizes: int) -> None:
    import asyncpg

    plain = make_url(admin_url).set(drivername="postgresql")
    try:
        admin = await asyncpg.connect(plain.render_as_string(hide_password=False), timeout=3)
    except Exception as error:  # any failure to connect means "no server here"
        print(f"\nPostgreSQL skipped: not reachable at {plain}: {error}")
        return
    names = [f"niuniu_bench_{kind}_{uuid.uuid4().hex[:8]}" for kind in ("full", "empty")]
    try:
        for name in names:
            await admin.execute(f'CREATE DATABASE "{name}"')
        full_url, empty_url = (
            plain.set(database=name).render_as_string(hide_password=False) for name in names
        )
        await run(
            f"PostgreSQL (fresh databases {', '.join(names)})",
            POSTGRES,
            full_url,
            empty_url,
            **sizes,
        )
    finally:
        for name in names:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100_000, help="settled rounds to fill")
    parser.add_argument("--postings", type=int, default=1_000_000, help="postings to fill")
    parser.add_argument("--groups", type=int, default=300, help="groups the history is spread over")
    parser.add_argument("--runs", type=int, default=31, help="timed runs of each read")
    parser.add_argument("--only", choices=("sqlite", "postgres"), help="one database only")
    parser.add_argument(
        "--postgres-url",
        default=DEFAULT_POSTGRES_URL,
        help="a PostgreSQL server URL whose user may create databases "
        f"(default: $NIUNIU_TEST_POSTGRES_URL or {DEFAULT_POSTGRES_URL})",
    )
    args = parser.parse_args(argv)
    if args.groups < 3 or args.rounds < 10 or args.postings < 20 or args.runs < 1:
        parser.error("needs --groups >= 3, --rounds >= 10, --postings >= 20, --runs >= 1")
    sizes = {
        "groups": args.groups,
        "rounds": args.rounds,
        "postings": args.postings,
        "runs": args.runs,
    }
    if args.only != "postgres":
        await sqlite_run(**sizes)
    if args.only != "sqlite":
        await postgres_run(args.postgres_url, **sizes)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

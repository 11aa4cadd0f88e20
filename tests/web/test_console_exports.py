"""CSV exports over HTTP on each database, checked against the ledger itself."""

from __future__ import annotations

import csv
import io
from collections import defaultdict

from sqlalchemy import select

from bot.money import format_amount
from bot.store.models import Account, LedgerTransaction
from bot.store.models import Posting as PostingRow
from tests.helpers.console import GROUP, Console
from tests.helpers.game import ADMIN, PLAYERS


async def csv_rows(console: Console, path: str) -> list[dict[str, str]]:
    response = await console.client.get(path)
    assert response.status == 200, await response.text()
    assert response.headers["Content-Type"].startswith("text/csv")
    assert "attachment" in response.headers["Content-Disposition"]
    return list(csv.DictReader(io.StringIO(await response.text())))


async def test_the_group_ledger_csv_is_every_posting_of_the_group(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    rows = await csv_rows(console, f"/console/export/groups/{GROUP}/ledger.csv")
    async with console.db.reading() as session:
        stored = (
            await session.execute(
                select(LedgerTransaction.id, Account.kind, Account.user_id, PostingRow.amount)
                .join(PostingRow, PostingRow.transaction_id == LedgerTransaction.id)
                .join(Account, Account.id == PostingRow.account_id)
                .where(LedgerTransaction.chat_id == GROUP)
                .order_by(LedgerTransaction.id, PostingRow.id)
            )
        ).all()
    exported = [
        (int(r["transaction"]), r["account"], int(r["user"] or 0), r["amount"]) for r in rows
    ]
    assert exported == [(t, k, u, format_amount(a)) for t, k, u, a in stored]
    per_transaction: defaultdict[int, int] = defaultdict(int)
    for row in rows:  # the decimal strings still balance, cent for cent
        units, cents = row["amount"].lstrip("-").split(".")
        sign = -1 if row["amount"].startswith("-") else 1
        per_transaction[int(row["transaction"])] += sign * (int(units) * 100 + int(cents))
    assert set(per_transaction.values()) == {0}


async def test_a_players_statement_csv_matches_their_statement(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    player = PLAYERS[1]
    rows = await csv_rows(console, f"/console/export/players/{player.id}.csv?group={GROUP}")
    lines = await console.service.statement(GROUP, player.id, 1000)
    assert [(int(r["transaction"]), r["kind"], r["change"]) for r in rows] == [
        (line.transaction_id, line.kind, format_amount(line.change)) for line in lines
    ]
    balance = await console.service.balance(GROUP, player.id)
    assert sum(line.change for line in lines) == balance.available + balance.held


async def test_the_rounds_csv_follows_the_filter(console: Console) -> None:
    await console.sign_in(ADMIN.id)
    history = console.history
    rows = await csv_rows(console, f"/console/export/rounds.csv?group={GROUP}")
    assert [int(r["round"]) for r in rows] == [history.open_round, *reversed(history.settled)]
    for row in rows:
        state = await console.service.round(int(row["round"]))
        assert state is not None
        assert (row["phase"], row["pool"]) == (state.phase.value, format_amount(state.pool))
    only_first = await csv_rows(
        console, f"/console/export/rounds.csv?group={GROUP}&before={history.settled[1]}"
    )
    assert [int(r["round"]) for r in only_first] == [history.settled[0]]

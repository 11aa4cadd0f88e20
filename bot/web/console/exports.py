"""CSV exports: rounds (as filtered on the rounds page), a player's statement in a group,
and a group's ledger. Written with the ``csv`` module and streamed a page of rows at a
time, so an export of 100,000 rounds never sits in memory whole. Amounts are decimal
strings made from integer cents at this edge (``bot.money.format_amount``)."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator, Sequence

from aiohttp import web

from bot.money import format_amount
from bot.web.console.app import not_yours, parts_of, viewer_of
from bot.web.console.filters import path_number, viewers_rounds_query, whole_number
from bot.web.console.render import when

#: Rows read from the database per step of an export.
EXPORT_STEP = 1000


def _csv_line(row: Sequence[object]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow(row)
    return out.getvalue().encode()


async def _stream(
    request: web.Request, filename: str, rows: AsyncIterator[Sequence[object]]
) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/csv; charset=utf-8",
            "Content-Disposition": f'attachment; filename="{filename}"',
        }
    )
    await response.prepare(request)
    async for row in rows:
        await response.write(_csv_line(row))
    await response.write_eof()
    return response


async def rounds_csv(request: web.Request) -> web.StreamResponse:
    """The rounds the rounds page would list with the same filter, all pages."""
    parts = parts_of(request)
    wanted = await viewers_rounds_query(request)
    if wanted is None:
        return not_yours(request)

    async def rows() -> AsyncIterator[Sequence[object]]:
        yield ("round", "group", "game", "phase", "dealer", "pool", "bets", "started", "ended")
        before = wanted.before_id
        while True:
            found = await parts.console.rounds(wanted.where, before_id=before, limit=EXPORT_STEP)
            for r in found:
                yield (
                    r.id, r.chat_id, r.ruleset, r.phase, r.dealer_id or "",
                    format_amount(r.pool), r.bet_count, when(r.started_at_ms),
                    when(r.ended_at_ms) if r.ended_at_ms else "",
                )  # fmt: skip
            if len(found) < EXPORT_STEP:
                return
            before = found[-1].id

    return await _stream(request, "rounds.csv", rows())


async def statement_csv(request: web.Request) -> web.StreamResponse:
    """A player's statement in one group, newest first, every line."""
    parts, viewer = parts_of(request), viewer_of(request)
    user_id = path_number(request, "user_id")
    chat_id = whole_number(request.query.get("group"), "group")
    if chat_id is None:
        raise web.HTTPBadRequest(text="group is required")
    if not await parts.access.may_see(viewer, chat_id):
        return not_yours(request)

    async def rows() -> AsyncIterator[Sequence[object]]:
        yield ("transaction", "time", "kind", "round", "change", "memo")
        before = None
        while True:
            found = await parts.console.statement(
                chat_id, user_id, before=before, limit=EXPORT_STEP
            )
            for line in found:
                yield (
                    line.transaction_id, when(line.created_at_ms), line.kind,
                    line.round_id or "", format_amount(line.change), line.memo,
                )  # fmt: skip
            if len(found) < EXPORT_STEP:
                return
            before = found[-1].transaction_id

    return await _stream(request, f"statement-{user_id}-{chat_id}.csv", rows())


async def ledger_csv(request: web.Request) -> web.StreamResponse:
    """Every posting of a group's ledger, oldest first: one row per posting."""
    parts, viewer = parts_of(request), viewer_of(request)
    chat_id = path_number(request, "chat_id")
    if not await parts.access.may_see(viewer, chat_id):
        return not_yours(request)

    async def rows() -> AsyncIterator[Sequence[object]]:
        yield ("transaction", "time", "kind", "round", "account", "user", "amount", "memo")
        after = None
        while True:
            found = await parts.console.ledger(chat_id, after_id=after, limit=EXPORT_STEP)
            for p in found:
                yield (
                    p.transaction_id, when(p.created_at_ms), p.kind, p.round_id or "",
                    p.account_kind, p.user_id or "", format_amount(p.amount), p.memo,
                )  # fmt: skip
            transactions = {p.transaction_id for p in found}
            if len(transactions) < EXPORT_STEP:
                return
            after = max(transactions)

    return await _stream(request, f"ledger-{chat_id}.csv", rows())


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/export/rounds.csv", rounds_csv)
    router.add_get("/export/players/{user_id}.csv", statement_csv)
    router.add_get("/export/groups/{chat_id}/ledger.csv", ledger_csv)

"""The console's pages: the overview, a group (settings, audit log, bank and shoe), rounds
and a round (with its verification), a player. Each checks that the viewer may see the
group first: a group one does not administer is refused (403), never shown."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from aiohttp import web

from bot.engine.edge import HOUSE_EDGE_LIMIT_BPS, EdgeAlarm
from bot.engine.errors import GameError
from bot.engine.settings import SETTING_NAMES, SettingError
from bot.engine.verification import Mismatch, NothingDealt, ShoeSecret, Verification, Verified
from bot.money import format_bps
from bot.rules.ruleset import RULESETS
from bot.service.console import PERIODS
from bot.service.game import Person, UnconfirmedChange
from bot.web.console.app import console_root, not_yours, page, parts_of, viewer_of
from bot.web.console.filters import PAGE_SIZE, path_number, viewers_rounds_query, whole_number

#: Height of the overview chart's tallest bar, in SVG units.
CHART_HEIGHT = 120


async def overview(request: web.Request) -> web.StreamResponse:
    """Counts now, money moved today / 7 / 30 days, and a bar per day."""
    parts, viewer = parts_of(request), viewer_of(request)
    visible = await parts.access.visible_groups(viewer)
    figures = await parts.console.overview(visible, now_ms=parts.now() * 1000)
    tallest = max((day.turnover for day in figures.days), default=0)
    bars = [(day, CHART_HEIGHT * day.turnover // (tallest or 1)) for day in figures.days]
    # Rake, rebates and fees side by side each day, on a scale of their own: next to the
    # turnover they would be too small to see.
    highest = max((max(d.rake, d.rebates, d.fees) for d in figures.days), default=0)
    income_bars = [
        (day, [CHART_HEIGHT * part // (highest or 1) for part in (day.rake, day.rebates, day.fees)])
        for day in figures.days
    ]
    return page(
        request,
        "overview.html",
        figures=figures,
        periods=PERIODS,
        bars=bars,
        tallest=tallest,
        income_bars=income_bars,
        highest_income=highest,
        chart_height=CHART_HEIGHT,
    )


async def group(request: web.Request) -> web.StreamResponse:
    """A group's settings (a form each), bank and shoe, and its audit log, paged."""
    parts, viewer = parts_of(request), viewer_of(request)
    chat_id = path_number(request, "chat_id")
    if not await parts.access.may_see(viewer, chat_id):
        return not_yours(request)
    saved = request.query.get("saved", "")
    return await _group_page(request, chat_id, saved=saved if saved in SETTING_NAMES else "")


async def _group_page(
    request: web.Request,
    chat_id: int,
    *,
    status: int = 200,
    saved: str = "",
    refused: SettingRefused | None = None,
    pending: EdgeNotice | None = None,
) -> web.StreamResponse:
    parts = parts_of(request)
    state = await parts.console.group(chat_id)
    if state is None:
        raise web.HTTPNotFound(text="The bot has no such group.")
    before = whole_number(request.query.get("audit_before"), "audit_before")
    audit = await parts.console.audit(chat_id, before_id=before, limit=PAGE_SIZE)
    named = {line.actor_id for line in audit}
    named |= {
        line.details["user_id"] for line in audit if isinstance(line.details.get("user_id"), int)
    }
    people = await parts.console.names(sorted(named))
    settings = [(name, state.settings.display(name)) for name in SETTING_NAMES]
    return page(
        request,
        "group.html",
        status=status,
        state=state,
        settings=settings,
        audit=audit,
        people=people,
        next_audit=audit[-1].id if len(audit) == PAGE_SIZE else None,
        saved=saved,
        error=refused.message if refused else "",
        error_key=refused.key if refused else "",
        typed=refused.typed if refused else (pending.typed if pending else ""),
        pending=pending,
    )


@dataclass(frozen=True, slots=True)
class EdgeNotice:
    """A change not saved until confirmed: what was typed, why, and the odds it gives (in
    % of the stake, signed)."""

    key: str
    typed: str
    why: str
    player: str
    dealer: str
    platform: str

    @classmethod
    def of(cls, change: UnconfirmedChange, typed: str) -> EdgeNotice:
        """The notice of a change the service did not make."""
        warning = change.warning
        edge, odds = warning.after.edge, warning.after.odds
        if warning.alarm is EdgeAlarm.PAYS_OUT:
            why = (
                f"With {change.name} {change.value} the table pays out more than it takes in:"
                f" the house loses {_percent(-edge)} of every stake on average."
            )
        else:
            why = (
                f"With {change.name} {change.value} the house takes {_percent(edge)} of every"
                f" stake on average, more than {format_bps(HOUSE_EDGE_LIMIT_BPS)}."
            )
        return cls(
            change.name,
            typed,
            why,
            _signed(odds.player),
            _signed(odds.dealer),
            _signed(odds.platform),
        )


def _percent(share: float) -> str:
    return f"{100 * share:.2f}%"


def _signed(share: float) -> str:
    return f"{100 * share:+.2f}%"


@dataclass(frozen=True, slots=True)
class SettingRefused:
    """A change the group page shows refused, with what was typed (cut to 64 characters)."""

    key: str
    typed: str
    message: str


async def change_setting(request: web.Request) -> web.StreamResponse:
    """Change one setting by the path ``/set`` takes (its validation, its audit line).

    A refused value is answered with the group page itself (400) rather than a redirect
    carrying the message, so that no address can make the page say words of its own."""
    parts, viewer = parts_of(request), viewer_of(request)
    chat_id = path_number(request, "chat_id")
    if not await parts.access.may_see(viewer, chat_id):
        return not_yours(request)
    form = await request.post()
    key, value = str(form.get("key", "")), str(form.get("value", ""))
    current = await parts.console.game.settings(chat_id)
    try:
        current.changed(key, value)  # the same check the service makes, for its English
    except SettingError as error:
        refused = SettingRefused(key, value[:64], str(error))
        return await _group_page(request, chat_id, status=400, refused=refused)
    actor = (await parts.console.names([viewer.user_id])).get(viewer.user_id)
    try:
        changed = await parts.console.change_setting(
            chat_id,
            actor or Person(viewer.user_id),
            key,
            value,
            confirmed=form.get("confirm") == "yes",
        )
    except GameError:  # valid alone, but not with what another admin changed in between
        message = f"{key} was not saved: the group's settings changed meanwhile. Try again."
        refused = SettingRefused(key, value[:64], message)
        return await _group_page(request, chat_id, status=400, refused=refused)
    if isinstance(changed, UnconfirmedChange):
        # Nothing was saved: the page shows the odds the change would give, and a button
        # that sends it again confirmed, as ``/set ... confirm`` does in the group.
        pending = EdgeNotice.of(changed, value[:64])
        return await _group_page(request, chat_id, status=409, pending=pending)
    back = f"{console_root(request)}/groups/{chat_id}"
    raise web.HTTPSeeOther(f"{back}?{urlencode({'saved': key})}")


async def rounds(request: web.Request) -> web.StreamResponse:
    """Rounds, newest first, filtered by group, player, game and dates, paged."""
    parts = parts_of(request)
    wanted = await viewers_rounds_query(request)
    if wanted is None:
        return not_yours(request)
    found = await parts.console.rounds(wanted.where, before_id=wanted.before_id, limit=PAGE_SIZE)
    people = await parts.console.names([r.dealer_id for r in found if r.dealer_id])
    groups = {g.id: g.title for g in await parts.console.groups(wanted.where.chat_ids)}
    filters = {key: value for key, value in wanted.typed.items() if value}
    next_page = None
    if len(found) == PAGE_SIZE:
        next_page = urlencode({**filters, "before": found[-1].id})
    return page(
        request,
        "rounds.html",
        rounds=found,
        people=people,
        groups=groups,
        typed=wanted.typed,
        games=sorted(RULESETS),
        next_page=next_page,
        export=urlencode(filters),
    )


def _verification_view(result: Verification | None) -> dict[str, object]:
    """What the round page shows of its verification."""
    if result is None:
        return {"status": "open"}
    if isinstance(result, ShoeSecret):
        return {
            "status": "shoe_secret",
            "shoe_id": result.shoe_id,
            "first": result.first,
            "last": result.last,
        }
    if isinstance(result, NothingDealt):
        return {"status": "nothing", "seed": result.seed.hex() if result.seed else ""}
    if isinstance(result, Mismatch):
        return {"status": "mismatch"}
    assert isinstance(result, Verified)
    return {
        "status": "verified",
        "seed": result.seed.hex(),
        "shares": result.shares,
        "hands": result.hands,
        "cards": result.cards,
    }


async def round_page(request: web.Request) -> web.StreamResponse:
    """A round: who played what, its outcomes, its ledger postings, its verification."""
    parts, viewer = parts_of(request), viewer_of(request)
    detail = await parts.console.round_detail(path_number(request, "round_id"))
    # A round of someone else's group is answered as one that does not exist: the answer
    # must not tell which round numbers are played where.
    if detail is None or not await parts.access.may_see(viewer, detail.round.chat_id):
        raise web.HTTPNotFound(text="No such round in your groups.")
    state = detail.round
    user_ids = {*state.participants, *(p.user_id for p in detail.postings if p.user_id)}
    people = await parts.console.names(sorted(user_ids))
    return page(
        request,
        "round.html",
        state=state,
        results=detail.results,
        postings=detail.postings,
        verification=_verification_view(detail.verification),
        people=people,
    )


async def player(request: web.Request) -> web.StreamResponse:
    """A player's chips in each group the viewer may see, and a group's statement, paged."""
    parts, viewer = parts_of(request), viewer_of(request)
    user_id = path_number(request, "user_id")
    visible = await parts.access.visible_groups(viewer)
    balances = await parts.console.balances(user_id, visible)
    if not balances and not viewer.is_operator:
        # Nobody with chips in the admin's groups: not a page that names them.
        raise web.HTTPNotFound(text="No such player in your groups.")
    chat_id = whole_number(request.query.get("group"), "group")
    if chat_id is None and balances:
        chat_id = balances[0][0]
    if chat_id is not None and not await parts.access.may_see(viewer, chat_id):
        return not_yours(request)
    before = whole_number(request.query.get("before"), "before")
    lines = []
    if chat_id is not None:
        lines = await parts.console.statement(chat_id, user_id, before=before, limit=PAGE_SIZE)
    people = await parts.console.names([user_id])
    titles = {chat: title for chat, title, _ in balances}
    # Only an operator may end a user's sessions, so only an operator sees how many.
    sessions = (
        await parts.console.live_sessions(user_id, now_ms=parts.now() * 1000)
        if viewer.is_operator
        else None
    )
    return page(
        request,
        "player.html",
        user_id=user_id,
        people=people,
        balances=balances,
        chat_id=chat_id,
        group_title=titles.get(chat_id) if chat_id is not None else None,
        lines=lines,
        next_before=lines[-1].transaction_id if len(lines) == PAGE_SIZE else None,
        sessions=sessions,
        sessions_ended=request.query.get("sessions") == "ended",
    )


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/", overview, name="overview")
    router.add_get("/groups/{chat_id}", group, name="group")
    router.add_post("/groups/{chat_id}/settings", change_setting)
    router.add_get("/rounds", rounds, name="rounds")
    router.add_get("/rounds/{round_id}", round_page, name="round")
    router.add_get("/players/{user_id}", player, name="player")

"""Reading what a browser asks for: ids, dates and the rounds filter from the query string.
Anything malformed is a 400, said plainly, never a traceback."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime

from aiohttp import web

from bot.rules.ruleset import RULESETS
from bot.service.console import DAY_MS, ConsoleService, RoundFilter
from bot.web.console.app import parts_of, viewer_of

#: Rows of a list page.
PAGE_SIZE = 50


#: The largest id the database stores (a signed 64-bit integer).
LARGEST_ID = 2**63 - 1


def whole_number(text: str | None, what: str) -> int | None:
    """A positive or negative whole number typed in a query, within what the database
    stores (ids are 64-bit); ``None`` if empty."""
    if text is None or text.strip() == "":
        return None
    stripped = text.strip()
    body = stripped.removeprefix("-")
    if not body.isascii() or not body.isdigit() or len(body) > 19 or int(body) > LARGEST_ID:
        raise web.HTTPBadRequest(text=f"{what} must be a whole number, not {stripped[:20]!r}")
    return int(stripped)


def path_number(request: web.Request, key: str) -> int:
    """A number in the path (``/rounds/{round_id}``)."""
    found = whole_number(request.match_info[key], key)
    assert found is not None
    return found


def day_start_ms(text: str | None, what: str) -> int | None:
    """A date typed as ``YYYY-MM-DD``: the start of that day, UTC, in ms."""
    if text is None or text.strip() == "":
        return None
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        raise web.HTTPBadRequest(text=f"{what} must be a date like 2026-12-01") from None
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp() * 1000)


@dataclass(frozen=True, slots=True)
class RoundsQuery:
    """The rounds list's filter as typed (to fill the form and the next page's link) and
    as the store reads it."""

    typed: dict[str, str]
    where: RoundFilter
    before_id: int | None


async def rounds_query(
    query: Mapping[str, str], console: ConsoleService, visible: list[int] | None
) -> RoundsQuery:
    """The filter of ``/rounds`` and its CSV: group, player (id or @username), game,
    dates from and to (inclusive), and the page (``before``)."""
    typed = {key: query.get(key, "").strip() for key in ("group", "player", "game", "from", "to")}
    player_text = typed["player"]
    user_id = None
    if player_text.startswith("@"):
        person = await console.game.find_user(player_text)
        user_id = -1 if person is None else person.id  # nobody: no rounds
    else:
        user_id = whole_number(player_text, "player")
    game = typed["game"] or None
    if game is not None and game not in RULESETS:
        raise web.HTTPBadRequest(text=f"game must be one of {', '.join(sorted(RULESETS))}")
    until = day_start_ms(typed["to"], "to")
    where = RoundFilter(
        chat_ids=visible,
        chat_id=whole_number(typed["group"], "group"),
        user_id=user_id,
        ruleset=game,
        started_from_ms=day_start_ms(typed["from"], "from"),
        started_before_ms=None if until is None else until + DAY_MS,
    )
    return RoundsQuery(typed, where, whole_number(query.get("before"), "before"))


async def viewers_rounds_query(request: web.Request) -> RoundsQuery | None:
    """The rounds filter of ``request`` (``/rounds`` and its CSV) within the groups its
    viewer may see; ``None`` when it names a group the viewer does not administer."""
    parts, viewer = parts_of(request), viewer_of(request)
    visible = await parts.access.visible_groups(viewer)
    wanted = await rounds_query(request.query, parts.console, visible)
    chat_id = wanted.where.chat_id
    if chat_id is None:
        return wanted
    if not await parts.access.may_see(viewer, chat_id):
        return None
    # Theirs, even if not among the groups listed for them (those they touched).
    return dataclasses.replace(wanted, where=dataclasses.replace(wanted.where, chat_ids=None))

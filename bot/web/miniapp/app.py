"""The Mini App as an aiohttp application, mounted under ``/miniapp/`` by the web server
(``build_web_app(miniapp=...)``).

- ``GET /``: the page (``static/index.html``; plain HTML, CSS and JS, no build step).
- ``GET /api/texts?language_code=zh-hans``: the page's texts in the language of the
  user's app, and that language (``bot.web.miniapp.page_texts``); asked before signing in.
- ``POST /api/session`` ``{"initData": "..."}``: fresh, signed ``initData`` exchanged
  for a session token (``bot.web.miniapp.sessions``) and the group its ``start_param``
  names (``bot.web.miniapp.start_param``); 401 and the reason otherwise, 400 for a
  ``start_param`` naming no group.
- ``GET /api/table?chat=ID``: the group's table for the signed-in user
  (``bot.web.miniapp.table``), with their standing bet.
- ``GET /api/feed?chat=ID``: the live feed, Server-Sent Events (``bot.web.miniapp.feed``):
  the group's table as ``/api/table`` gives it, sent as it is now and again whenever the
  group's round changes; each event's id is where the table stands (``RoundKey``), and a
  page reconnecting with ``Last-Event-ID`` (or ``&since=``) gets the current table at once
  only if it is newer.
- What the page shows besides the live round (``bot.web.miniapp.past_rounds``), each
  ``GET ?chat=ID``: ``/api/results`` ``&round=N`` (a finished round's results: its
  picture and the dealer's cards), ``/api/history`` ``[&before=N]`` (the player's own
  rounds), ``/api/stats``, ``/api/rules`` (and odds) and ``/api/verify`` ``&round=N``.
- The moves, each ``POST {"chat": ID, ...}``, played as the group's commands are
  (``bot.web.miniapp.moves``) and answered here, never in the group, with the table
  after the move: ``/api/bet`` ``{"amount": "12.50", "round": N}`` (again to change,
  ``"0"`` cancels), ``/api/bid`` ``{"amount", "round"}``, ``/api/grab`` ``{"round"}``,
  ``/api/autobet`` ``{"amount"}`` (``"off"`` stops it) and ``/api/again`` ``{"round"}``
  (the round just ended). ``round`` is the round the page shows: a move for a round that
  is not the group's open one is refused, as an old round's board button is.

Every ``/api/`` request but signing in carries ``Authorization: Bearer TOKEN`` (the
feed, which a browser's ``EventSource`` opens without headers, may carry ``&token=``). A group is
shown only to its members, asked of Telegram (``is_member``), and only for a group the
bot knows: an id typed by a stranger makes the bot ask Telegram nothing. Anything refused
is answered ``{"error": "..."}`` with a status saying why (400 not understood, 401 not
signed in, 403 not in the group, 404 no such round in the group, 409 the move was not
taken) and changes nothing; a refusal the page may meet says ``"reason"`` too, which the
page shows in its own words. A feed asks again whether its user is in the group every
``member_seconds`` (the answer is cached as the admin check's are), and ends once they are
not.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.service.game import GameService, Person, TableSnapshot
from bot.service.round_changes import RoundKey
from bot.web.miniapp.feed import FeedHub, Render, Viewer, sse_event
from bot.web.miniapp.moves import MiniAppBot, MoveAnswer, Moves
from bot.web.miniapp.page_texts import Catalogues, PageTexts, page_keys
from bot.web.miniapp.past_rounds import Asked, NotShown, PastRounds, RoundTexts
from bot.web.miniapp.sessions import MiniAppSessions
from bot.web.miniapp.start_param import NoGroup, decode_group
from bot.web.miniapp.table import standing_view, table_view
from bot.web.signing import USER_ID_LIMIT, Session, SignatureRefused

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
#: A group's id as the page sends it: a minus and its digits (ASCII only).
GROUP_ID = re.compile(r"-[0-9]{1,16}")
#: Telegram's chat ids fit in 52 bits, as its user ids do.
GROUP_ID_LIMIT = USER_ID_LIMIT
#: A round's id as the page sends it: ASCII digits, no sign or leading zero.
ROUND_ID = re.compile(r"[1-9][0-9]{0,18}")
#: The largest round id (the database's 64-bit integers).
ROUND_ID_MAX = 2**63 - 1

#: What the page may load and whom it may talk to: itself, and Telegram's script; it may
#: be framed only by Telegram's web client (the other clients open it in a web view).
PAGE_POLICY = (
    "default-src 'self'; script-src 'self' https://telegram.org; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors https://web.telegram.org"
)
#: How often a feed with nothing to send writes a comment line: proxies keep it open, and
#: a page that went away is noticed.
KEEPALIVE_SECONDS = 15.0
#: How soon a page's ``EventSource`` reconnects after the feed dropped.
RECONNECT_MS = 1000
#: An open feed asks whether its user is still in the group this many times per
#: ``member_seconds`` (the member check's cache): one who left stops getting the group's
#: events at most a quarter of that after the cached answer runs out.
MEMBER_CHECKS_PER_CACHE = 4
FEED_HEADERS = {"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"}

HEADERS = {
    # The table and the player's chips change every second and are the player's own.
    "Cache-Control": "no-store",
    "Content-Security-Policy": PAGE_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


@dataclass(frozen=True, slots=True)
class MiniAppParts:
    """What every handler of the Mini App uses (``request.app[PARTS]``)."""

    service: GameService
    sessions: MiniAppSessions
    #: The bots in the order of ``sessions``' tokens: a page's session names its bot.
    bots: tuple[MiniAppBot, ...]
    clock: Callable[[], float]
    feed: FeedHub
    round_texts: RoundTexts
    past: PastRounds
    page_texts: PageTexts
    #: How often an open feed asks again whether its user is in the group.
    member_check_seconds: float

    def now(self) -> int:
        """Seconds since the epoch."""
        return int(self.clock())


PARTS = web.AppKey("miniapp_parts", MiniAppParts)


class Refused(Exception):
    """A request answered with ``{"error": text}`` and ``status``; and ``"reason"``, a
    word the page shows in its own words (``miniapp.refused.<reason>``), if given."""

    def __init__(self, status: int, text: str, reason: str | None = None) -> None:
        super().__init__(text)
        self.status = status
        self.text = text
        self.reason = reason


def refusal(error: Refused) -> web.Response:
    body = {"error": error.text}
    if error.reason is not None:
        body["reason"] = error.reason
    return web.json_response(body, status=error.status)


#: What a refused sign-in says, by ``SignatureRefused.reason`` (also its ``"reason"``).
SIGN_IN_REFUSALS = {
    "malformed": "This is not Telegram's initData. Open the app from Telegram.",
    "signature": "Telegram's signature does not match. Open the app from Telegram.",
    "expired": "This sign-in is too old. Close the app and open it again.",
}


def group_id(value: object) -> int:
    """A group's id as the page sent it (text or a JSON number); ``Refused`` (400) for
    anything else: not a number, not a group's (negative), or out of range."""
    text = str(value) if type(value) is int else value
    if not isinstance(text, str) or GROUP_ID.fullmatch(text) is None:
        raise Refused(400, "chat must be a group's id, like -1001234567890.")
    chat_id = int(text)
    if -chat_id >= GROUP_ID_LIMIT:
        raise Refused(400, "chat is out of range for a Telegram group's id.")
    return chat_id


def linked_group(start_param: str | None) -> int | None:
    """The group the link that opened the app names (``start_param``), None for a link
    naming none (opened from ``/table`` or the bot's profile); ``Refused`` (400) for a
    ``start_param`` that is no group's (``bot.web.miniapp.start_param``)."""
    if not start_param:
        return None
    try:
        return decode_group(start_param)
    except NoGroup:
        raise Refused(
            400, "This link names no group: open the table from your group's board.", "no_group"
        ) from None


def signed_in(request: web.Request) -> tuple[Session, MiniAppBot]:
    """The session of the request's bearer token and the bot whose page it is; ``Refused``
    (401) without a valid one."""
    parts = request.app[PARTS]
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if not scheme and request.path.endswith("/api/feed"):
        scheme, token = "Bearer", request.query.get("token", "")
    if scheme != "Bearer" or not token:
        raise Refused(401, "Not signed in: open the app from Telegram.", "signed_out")
    try:
        session, bot = parts.sessions.check(token.strip(), parts.now())
    except SignatureRefused as error:
        if error.reason == "expired":
            raise Refused(
                401, "Your session ended: close the app and open it again.", "session_ended"
            ) from None
        raise Refused(401, "Not signed in: open the app from Telegram.", "signed_out") from None
    return session, parts.bots[bot]


async def check_member(parts: MiniAppParts, bot: MiniAppBot, chat_id: int, user_id: int) -> None:
    """``Refused`` (403) unless the user is in a group the bot knows (asked of ``bot``)."""
    # The database first: an id typed in a request must not spend the bot's requests to
    # Telegram on a group it has nothing of.
    if not await parts.service.knows_chat(chat_id) or not await bot.is_member(chat_id, user_id):
        raise Refused(
            403, "You are not in this group, so its table is not shown to you.", "not_member"
        )


async def json_body(request: web.Request) -> dict[str, Any]:
    """The request's JSON object; ``Refused`` (400) for anything else."""
    try:
        body = await request.json()
    except ValueError:
        raise Refused(400, "The request's body is not JSON.") from None
    if not isinstance(body, dict):
        raise Refused(400, "The request's body must be a JSON object.")
    return body


async def index(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC / "index.html")


async def texts(request: web.Request) -> web.Response:
    """The page's texts in the language of ``language_code`` (the user's app's), and that
    language. Public: they are the same for everyone, and the page needs them to say even
    that it cannot sign in."""
    code = request.query.get("language_code", "")[:35] or None
    language, shown = request.app[PARTS].page_texts.of(code)
    return web.json_response({"language": language, "texts": shown})


async def sign_in(request: web.Request) -> web.Response:
    """``initData`` for a token; the user, and the group the link opened, if any."""
    parts = request.app[PARTS]
    try:
        body = await json_body(request)
        init_data = body.get("initData")
        if not isinstance(init_data, str):
            raise Refused(400, "initData is missing.")
        try:
            signed = parts.sessions.sign_in(init_data, parts.now())
        except SignatureRefused as error:
            raise Refused(401, SIGN_IN_REFUSALS[error.reason], error.reason) from None
        chat = linked_group(signed.user.start_param)
    except Refused as error:
        return refusal(error)
    user = signed.user
    # Stored as the bot stores whoever writes in a group: the board names them.
    await parts.service.note_people([Person(user.user_id, user.first_name, user.username)])
    return web.json_response(
        {
            "token": signed.token,
            "expires_at": signed.session.expires_at,
            "user": {"id": user.user_id, "first_name": user.first_name, "username": user.username},
            "chat": chat,
        }
    )


async def current_table(parts: MiniAppParts, chat_id: int, user_id: int) -> dict[str, Any]:
    """The group's table as ``user_id`` sees it now, with their standing bet (which the
    feed's tables leave out: it is no round's state)."""
    snapshot = await parts.service.table_snapshot(chat_id, [user_id])
    shown = table_view(snapshot, viewer=user_id, now_ms=int(parts.clock() * 1000))
    standing = await parts.service.autobet(chat_id, user_id)
    shown["standing"] = standing_view(standing, snapshot.settings.currency)
    return shown


def feed_events(clock: Callable[[], float]) -> Render:
    """The feed's events: a viewer's table, as ``/api/table`` gives it, at the time it goes."""

    def render(snapshot: TableSnapshot, user_id: int) -> bytes:
        view = table_view(snapshot, viewer=user_id, now_ms=int(clock() * 1000))
        data = json.dumps(view, separators=(",", ":"), ensure_ascii=False)
        return sse_event(str(snapshot.key), "table", data)

    return render


async def table(request: web.Request) -> web.Response:
    parts = request.app[PARTS]
    try:
        session, bot = signed_in(request)
        chat_id = group_id(request.query.get("chat"))
        await check_member(parts, bot, chat_id, session.user_id)
    except Refused as error:
        return refusal(error)
    return web.json_response(await current_table(parts, chat_id, session.user_id))


def last_seen(request: web.Request) -> RoundKey | None:
    """What a reconnecting page saw last: ``Last-Event-ID`` (``EventSource`` sends it),
    else ``since``; None (send the table as it is) for none, or for anything not a key."""
    seen = request.headers.get("Last-Event-ID") or request.query.get("since") or ""
    return RoundKey.parse(seen[:40])


async def feed(request: web.Request) -> web.StreamResponse:
    """The live feed of a group's table, until the page goes, its session ends or the
    server stops."""
    parts = request.app[PARTS]
    try:
        session, bot = signed_in(request)
        chat_id = group_id(request.query.get("chat"))
        await check_member(parts, bot, chat_id, session.user_id)
    except Refused as error:
        return refusal(error)
    response = web.StreamResponse(headers=FEED_HEADERS)
    await response.prepare(request)
    viewer = parts.feed.join(chat_id, session.user_id, last_seen(request))
    membership = asyncio.create_task(still_member(parts, bot, viewer), name=f"member-{chat_id}")
    try:
        await response.write(f"retry: {RECONNECT_MS}\n\n".encode())
        while (left := session.expires_at - parts.now()) > 0:
            event = await viewer.next_event(min(KEEPALIVE_SECONDS, left))
            if viewer.closed:
                break
            await response.write(event if event is not None else b": keepalive\n\n")
    except ConnectionResetError:
        pass  # the page went away
    finally:
        membership.cancel()
        await asyncio.gather(membership, return_exceptions=True)
        parts.feed.leave(viewer)
    return response


async def still_member(parts: MiniAppParts, bot: MiniAppBot, viewer: Viewer) -> None:
    """Close ``viewer``'s feed once its user is not in the group any more (asked of
    ``bot``, the page's, every ``member_check_seconds``, beside the feed: an event never
    waits for Telegram)."""
    while not viewer.closed:
        await asyncio.sleep(parts.member_check_seconds)
        try:
            inside = await bot.is_member(viewer.chat_id, viewer.user_id)
        except Exception:  # the check must not outlive the feed silently
            log.exception("live feed: the member check of %s failed", viewer.chat_id)
            continue
        if not inside:
            viewer.close()


#: A move the page asked for, its fields read: played by the shell's ``Moves`` for the
#: group and the player.
Move = Callable[[Moves, int, Person], Awaitable[MoveAnswer]]


def round_id(value: object, name: str = "round") -> int:
    """A round's id as the page sent it (text or a JSON number) as ``name``: the round it
    shows, which the move is for; ``Refused`` (400) for anything else."""
    text = str(value) if type(value) is int else value
    if not isinstance(text, str) or ROUND_ID.fullmatch(text) is None or int(text) > ROUND_ID_MAX:
        shown = "the round shown" if name == "round" else "a round"
        raise Refused(400, f"{name} must be the number of {shown}, like 412.")
    return int(text)


def typed_amount(body: dict[str, Any]) -> str:
    """The amount as the player typed it (the bot reads it as a command's)."""
    amount = body.get("amount")
    if not isinstance(amount, str):
        raise Refused(400, 'amount must be text, like "12.50".')
    return amount


def bet_move(body: dict[str, Any]) -> Move:
    """``{"amount": "12.50", "round": 412}``: bet, change the bet, or cancel it (``"0"``);
    without ``round``, in whatever round takes bets, as ``/bet`` is."""
    amount = typed_amount(body)
    shown = round_id(body["round"]) if body.get("round") is not None else None
    return lambda moves, chat_id, player: moves.bet(chat_id, player, amount, shown)


def bid_move(body: dict[str, Any]) -> Move:
    """``{"amount": "100", "round": 412}``: bid for dealer."""
    amount, shown = typed_amount(body), round_id(body.get("round"))
    return lambda moves, chat_id, player: moves.bid(chat_id, player, amount, shown)


def grab_move(body: dict[str, Any]) -> Move:
    """``{"round": 412}``: grab the next share."""
    shown = round_id(body.get("round"))
    return lambda moves, chat_id, player: moves.grab(chat_id, player, shown)


def autobet_move(body: dict[str, Any]) -> Move:
    """``{"amount": "20"}``: the standing bet; ``"off"`` or ``"0"`` stops it."""
    amount = typed_amount(body)
    return lambda moves, chat_id, player: moves.autobet(chat_id, player, amount)


def again_move(body: dict[str, Any]) -> Move:
    """``{"round": 411}``: "same again" of the group's last round (settled)."""
    shown = round_id(body.get("round"))
    return lambda moves, chat_id, player: moves.same_again(chat_id, player, shown)


def move_handler(
    read: Callable[[dict[str, Any]], Move],
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """A move's endpoint: signed in, ``{"chat": ID, ...}`` of a group the player is in,
    the move's fields as ``read`` reads them; 200 with the bot's confirmation and the
    table after it, or 409 with the bot's refusal (nothing changed)."""

    async def handle(request: web.Request) -> web.Response:
        parts = request.app[PARTS]
        try:
            session, bot = signed_in(request)
            body = await json_body(request)
            chat_id = group_id(body.get("chat"))
            await check_member(parts, bot, chat_id, session.user_id)
            move = read(body)
        except Refused as error:
            return refusal(error)
        known = await parts.service.names([session.user_id])
        player = known.get(session.user_id, Person(session.user_id))
        answer = await move(bot.moves, chat_id, player)
        if not answer.taken:
            return web.json_response({"error": answer.text}, status=409)
        shown = await current_table(parts, chat_id, session.user_id)
        return web.json_response({"text": answer.text, "table": shown})

    return handle


#: One of ``PastRounds``' answers, given the checked request.
PastAnswer = Callable[[PastRounds, Asked], Awaitable[dict[str, Any]]]


def past_handler(answer: PastAnswer) -> Callable[[web.Request], Awaitable[web.Response]]:
    """An endpoint of what the page shows besides the live round: signed in, ``?chat=ID``
    of a group the player is in, ``round`` and ``before`` read as round ids if given."""

    async def handle(request: web.Request) -> web.Response:
        parts = request.app[PARTS]
        query = request.query
        try:
            session, bot = signed_in(request)
            chat_id = group_id(query.get("chat"))
            await check_member(parts, bot, chat_id, session.user_id)
            shown = round_id(query["round"]) if "round" in query else None
            before = round_id(query["before"], "before") if "before" in query else None
            known = await parts.service.names([session.user_id])
            player = known.get(session.user_id, Person(session.user_id))
            asked = Asked(parts.service, parts.round_texts, chat_id, player, shown, before)
            return web.json_response(await answer(parts.past, asked))
        except Refused as error:
            return refusal(error)
        except NotShown as error:
            return web.json_response({"error": error.text}, status=error.status)

    return handle


async def add_headers(request: web.Request, response: web.StreamResponse) -> None:
    """The Mini App's signal handler for ``on_response_prepare``: on every response."""
    response.headers.update(HEADERS)


def build_miniapp(
    *,
    service: GameService,
    bots: Sequence[MiniAppBot],
    round_texts: RoundTexts,
    clock: Callable[[], float],
    catalogues: Catalogues,
    member_seconds: float,
) -> web.Application:
    """The Mini App, to mount with ``app.add_subapp("/miniapp/", miniapp)``.

    ``service`` is a bot's (what it reads is the groups', whichever bot serves them);
    ``bots`` are the process's bots, each with its token, whose ``is_member(chat_id,
    user_id)`` says whether a user is in a group (the shell's ``MemberCheck.is_member``)
    and whose ``moves`` play the page's moves as the group's commands (the shell's
    ``MiniAppMoves``): a page signed in with one bot's ``initData`` is that bot's.
    ``round_texts`` are the texts of past rounds and of the table (the shell's
    ``MiniAppRounds``, any bot's: they are the group's); ``clock`` gives seconds since the
    epoch; ``catalogues`` give the page its words (the shell's ``MiniAppCatalogues``);
    ``member_seconds`` is how long ``is_member`` keeps an answer (an open feed asks again
    ``MEMBER_CHECKS_PER_CACHE`` times as often). Its live feed watches the service's
    ``round_changes``, and starts them (on PostgreSQL: notices to and from the other
    workers) as the server starts."""
    app = web.Application()
    app.on_response_prepare.append(add_headers)
    hub = FeedHub(service.table_snapshot, feed_events(clock))
    changes = service.round_changes
    changes.watch(hub.changed, hub.resync, hub.chips_changed)
    app[PARTS] = MiniAppParts(
        service=service,
        sessions=MiniAppSessions(*(bot.token for bot in bots)),
        bots=tuple(bots),
        clock=clock,
        feed=hub,
        round_texts=round_texts,
        past=PastRounds(),
        page_texts=PageTexts(catalogues, page_keys()),
        member_check_seconds=member_seconds / MEMBER_CHECKS_PER_CACHE,
    )

    async def start_feed(app: web.Application) -> None:
        await changes.start()

    async def stop_feed(app: web.Application) -> None:
        await hub.close()  # before the server waits for its requests to end
        await changes.close()

    app.on_startup.append(start_feed)
    app.on_shutdown.append(stop_feed)
    app.router.add_get("/", index, name="index")
    app.router.add_get("/api/texts", texts)
    app.router.add_post("/api/session", sign_in)
    app.router.add_get("/api/table", table)
    app.router.add_get("/api/feed", feed)
    app.router.add_post("/api/bet", move_handler(bet_move))
    app.router.add_post("/api/bid", move_handler(bid_move))
    app.router.add_post("/api/grab", move_handler(grab_move))
    app.router.add_post("/api/autobet", move_handler(autobet_move))
    app.router.add_post("/api/again", move_handler(again_move))
    app.router.add_get("/api/results", past_handler(PastRounds.results))
    app.router.add_get("/api/history", past_handler(PastRounds.history))
    app.router.add_get("/api/stats", past_handler(PastRounds.stats))
    app.router.add_get("/api/rules", past_handler(PastRounds.rules))
    app.router.add_get("/api/verify", past_handler(PastRounds.verify))
    app.router.add_static("/static/", STATIC)
    return app

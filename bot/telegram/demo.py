"""``niuniu-bot demo``: the real bot against the project's fake Telegram, offline.

It starts the fake Bot API server, the bot (polling it) on a temporary SQLite file, and
a handful of simulated players: an admin opens the table and credits chips, players bid
for dealer, bet and press "Grab". The group is printed as it happens, each message in the
order the group gets it, and the chip totals at the end (after the answer to the admin's
``/close``), which must add up to what was credited. ``pictures`` is a folder the
pictures the group gets are written into (the results, and on a card table the dealer's
cards turning over).

``ruleset`` plays a card game instead (the admin sends ``/set ruleset bullbull``): the
cards are dealt as betting closes, so nobody grabs. ``dealer="house"`` has the admin send
``/set dealer house`` (and confirm it where the bank would lose, as in Niu-Niu Poker) and
``/fund`` the group's bank, which then deals every round with no bidding; the bank counts
in the end check, which must add up to what was credited and funded.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.bootstrap import assemble, migrate_async
from bot.config import Config
from bot.engine.edge import edge_warning
from bot.engine.round import HOUSE_DEALER, Phase, Round
from bot.engine.settings import Settings
from bot.fakegram.media import image_size
from bot.fakegram.server import FakeTelegram
from bot.money import format_amount, parse_amount
from bot.service.game import GameService
from bot.telegram.serving import running

GROUP = -1001234567890
CHAT_TITLE = "68 NiuNiu demo"
ADMIN: dict[str, Any] = {"id": 1000, "first_name": "Ada", "username": "ada_admin"}
PLAYERS: list[dict[str, Any]] = [
    {"id": 1001, "first_name": "Bao", "username": "bao"},
    {"id": 1002, "first_name": "Chen", "username": "chen"},
    {"id": 1003, "first_name": "Dewi", "username": "dewi"},
    {"id": 1004, "first_name": "Eko", "username": "eko"},
    {"id": 1005, "first_name": "<b>Fay & co</b>", "username": "fay"},
]
CREDIT = "2000"
#: What the admin funds the bank with when the house deals.
FUND = "1000"
DEMO_SETTINGS = Settings(
    bid_seconds=3,
    bet_seconds=3,
    grab_seconds=3,
    pause_seconds=1,
    min_bid=10_000,
    bid_increment=5_000,
    min_bet=100,
    max_bet=5_000,
    quick_bets=(500, 1_000, 2_000),
)
#: How long the demo waits for a round's results once it is over (drawn and sent).
RESULTS_SECONDS = 15.0
#: How long the demo waits for an answer: one may wait for a slot of the group's minute.
ANSWER_SECONDS = 75.0
#: What the pictures the bot sends show, by their kind, for the names of their files.
PICTURE_NAMES = {"photo": "results", "animation": "dealer"}
#: Someone in the group writes a text; their message's id.
Say = Callable[[dict[str, Any], str], int]


def _plain(html_text: str) -> str:
    return (
        re.sub(r"<[^>]+>", "", html_text)
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
    )


class Transcript:
    """The group as its members see it, printed as it happens: each person's message and
    each of the bot's sends and edits, in the order the fake Telegram got them; with
    ``pictures``, each picture the bot sends is written into that folder too.

    People speak through ``say``, which first prints what the bot did before them: their
    line then comes after everything the group saw before it, and before its answer."""

    def __init__(
        self, fake: FakeTelegram, out: Callable[[str], None], pictures: Path | None = None
    ) -> None:
        self.fake = fake
        self.out = out
        self.pictures = pictures
        self.seen = 0
        self.written: list[Path] = []

    def say(self, user: dict[str, Any], text: str, *, reply_to: int | None = None) -> int:
        """``user`` writes ``text`` in the group (replying to message ``reply_to``); the
        message's id."""
        self.flush()
        update = self.fake.post_message(
            GROUP, user, text, chat_title=CHAT_TITLE, reply_to_message_id=reply_to
        )
        message_id: int = update["message"]["message_id"]
        replying = f", replying to {reply_to}" if reply_to is not None else ""
        self.out(f"\n[{user['first_name']}, message {message_id}{replying}]\n{text}")
        return message_id

    def flush(self) -> None:
        """Print the bot's actions not printed yet."""
        entries = self.fake.transcript(GROUP)
        for entry in entries[self.seen :]:
            text = entry.get("plain_text") or _plain(entry.get("text") or "")
            media = entry.get("media")
            message_id = entry["message_id"]
            replying = entry.get("reply_to_message_id")
            to = f", replying to {replying}" if replying else ""
            if entry["kind"] == "send" and media:
                # A picture cannot be printed: what it is, where it was written, its caption.
                size = f"{media['width']}x{media['height']}"
                saved = self._write_picture(message_id, media)
                self.out(f"\n[bot, message {message_id}{to}: {media['kind']} {size}{saved}]")
                if text:
                    self.out(text)
            elif entry["kind"] == "send":
                self.out(f"\n[bot, message {message_id}{to}]\n{text}")
            elif entry["kind"] == "edit":
                first_lines = " | ".join(text.splitlines()[:2])
                self.out(f"  (board {message_id} updated: {first_lines})")
        self.seen = len(entries)

    def _write_picture(self, message_id: int, media: dict[str, Any]) -> str:
        """Write a picture the bot sent into the pictures folder, if there is one; the
        words that say where."""
        if self.pictures is None:
            return ""
        data = self.fake.file_bytes(media["file_id"])
        found = image_size(data)
        extension = found[0] if found else "bin"
        shows = PICTURE_NAMES.get(media["kind"], media["kind"])
        path = self.pictures / f"message-{message_id:03d}-{shows}.{extension}"
        path.write_bytes(data)
        self.written.append(path)
        return f", written to {path}"


async def _wait_round(
    service: GameService, predicate: Callable[[Round | None], bool], timeout: float = 20.0
) -> Round | None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        state = await service.current_round(GROUP)
        if predicate(state):
            return state
        await asyncio.sleep(0.05)
    raise TimeoutError("the demo round did not move on in time")


async def _wait_until(
    service: GameService, predicate: Callable[[Settings, int], bool], timeout: float = 10.0
) -> None:
    """Wait until the group's settings and bank balance satisfy ``predicate``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        settings = await service.settings(GROUP)
        if predicate(settings, await service.bank_balance(GROUP)):
            return
        await asyncio.sleep(0.05)
    raise TimeoutError("the demo's settings did not take effect in time")


async def _top_up(service: GameService, previous: int, say: Say) -> int:
    """Between rounds: when the bank that deals is down to less than half of ``FUND``, the
    admin funds it again (and starts the round if the empty bank held it back); what was
    funded."""
    bank = await service.bank_balance(GROUP)
    amount = parse_amount(FUND)
    if bank >= amount // 2:
        return 0
    say(ADMIN, f"/fund {FUND}")
    await _wait_until(service, lambda _, balance: balance == bank + amount)
    if bank == 0:
        # A round due while the bank was empty does not start: the table waits for one.
        try:
            await _wait_round(
                service,
                lambda r: r is not None and r.id != previous,
                timeout=DEMO_SETTINGS.pause_seconds + 2,
            )
        except TimeoutError:
            say(PLAYERS[0], "/newround")
    return amount


async def _play_round(
    fake: FakeTelegram,
    service: GameService,
    previous: int | None,
    rng: random.Random,
    say: Say,
) -> int:
    """Play the round after round ``previous``: bid (unless the house deals), bet, and
    grab (unless cards are dealt as betting closes); its id once it is over."""

    def opened(r: Round | None) -> bool:
        return r is not None and r.id != previous and r.phase in (Phase.BIDDING, Phase.BETTING)

    state = await _wait_round(service, opened)
    assert state is not None
    round_id = state.id
    if state.phase is Phase.BIDDING:
        bidders = rng.sample(PLAYERS, 2)
        say(bidders[0], "/bid 100")
        await asyncio.sleep(0.3)
        say(bidders[1], "150")  # a bare number is a bid while bidding
        state = await _wait_round(
            service, lambda r: r is not None and r.id == round_id and r.phase is Phase.BETTING
        )
        assert state is not None and state.dealer_id is not None
    bettors = [p for p in PLAYERS if p["id"] != state.dealer_id]
    for player in bettors:
        say(player, rng.choice(["/bet 5", "/bet 10", "10", "20"]))
        await asyncio.sleep(0.1)
    state = await _wait_round(
        service, lambda r: r is None or r.id != round_id or r.phase is not Phase.BETTING
    )
    # Card games are dealt and settled as betting closes: only envelopes are grabbed, on
    # the button of the board as the group sees it (grabbing opens on a new board message).
    if state is not None and state.id == round_id and state.phase is Phase.GRABBING:
        grab = f"{round_id}:grab:0"
        board = await fake.wait_for(lambda: _message_with_button(fake, grab), timeout=5)
        assert board is not None
        for user_id in state.participants[: max(1, len(state.participants) - 1)]:
            player = next(p for p in [ADMIN, *PLAYERS] if p["id"] == user_id)
            fake.press_button(GROUP, board, player, f"{round_id}:grab:0")
            await asyncio.sleep(0.15)
        # The last participant is slow: their envelope is grabbed for them at the deadline.
    await _wait_round(service, lambda r: r is None or r.id != round_id, timeout=15)
    # The players read the results before anyone goes on (the admin's /close, at the end).
    with contextlib.suppress(TimeoutError):
        await fake.wait_for(lambda: _results_shown(fake, round_id), timeout=RESULTS_SECONDS)
    return round_id


def _results_shown(fake: FakeTelegram, round_id: int) -> bool:
    """Whether the group got round ``round_id``'s results: their last line, in every
    language, says how to check it with ``/verify`` and its number."""
    check = re.compile(rf"/verify {round_id}\b")
    return any(
        entry["kind"] == "send" and check.search(entry["plain_text"] or "")
        for entry in fake.transcript(GROUP)
    )


def _answered(fake: FakeTelegram, message_id: int, user: dict[str, Any]) -> bool:
    """Whether the bot answered ``user``'s message ``message_id``: by a reply to it, or by a
    line of a combined answer (led by their name) sent after it."""
    lead = f"{user['first_name']}: "
    for entry in fake.transcript(GROUP):
        if entry["kind"] != "send" or entry["message_id"] < message_id:
            continue
        if entry["reply_to_message_id"] == message_id:
            return True
        lines = (entry["plain_text"] or "").splitlines()
        if not entry["reply_to_message_id"] and any(line.startswith(lead) for line in lines):
            return True
    return False


def _message_with_button(fake: FakeTelegram, data: str) -> int | None:
    """The group's bot message that shows a button with callback data ``data``."""
    for message_id, message in fake.messages(GROUP).items():
        rows = (message.get("reply_markup") or {}).get("inline_keyboard", [])
        if any(button.get("callback_data") == data for row in rows for button in row):
            return message_id
    return None


async def run_demo(
    rounds: int = 3,
    out: Callable[[str], None] = print,
    seed: int = 68,
    *,
    ruleset: str = "envelope68",
    dealer: str = "bid",
    language: str = "en",
    pictures: Path | None = None,
) -> int:
    """Play ``rounds`` rounds of ``ruleset`` offline, with players bidding for the dealer
    or (``dealer="house"``) the group's bank dealing, and print them (and write the
    pictures the group gets into the folder ``pictures``, made if missing); 0 when the
    chips add up."""
    if pictures is not None:
        pictures.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(level=logging.WARNING)
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="niuniu-demo-") as folder:
        url = f"sqlite+aiosqlite:///{Path(folder) / 'demo.db'}"
        await migrate_async(url)
        async with FakeTelegram() as fake:
            config = Config(
                database_url=url,
                telegram_token=fake.token,
                telegram_base_url=fake.base_url,
                operators=frozenset({ADMIN["id"]}),
                game=dataclasses.replace(DEMO_SETTINGS, language=language),
                sweep_seconds=0.2,
                board_edit_seconds=1.0,
            )
            assembly = assemble(config, rate_limiter=False)
            application, game, service = assembly.application, assembly.game, assembly.service
            transcript = Transcript(fake, out, pictures)

            async def print_transcript() -> None:
                while True:
                    transcript.flush()
                    await asyncio.sleep(0.1)

            printer = asyncio.create_task(print_transcript())
            try:
                async with running(application, game, poll_timeout=1):
                    code = await _script(
                        fake,
                        service,
                        transcript,
                        rounds,
                        rng,
                        ruleset=ruleset,
                        dealer=dealer,
                        answers_a_minute=config.replies_per_minute,
                    )
            finally:
                printer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await printer
                transcript.flush()
                await assembly.database.dispose()
    return code


async def _script(
    fake: FakeTelegram,
    service: GameService,
    transcript: Transcript,
    rounds: int,
    rng: random.Random,
    *,
    ruleset: str,
    dealer: str,
    answers_a_minute: int,
) -> int:
    say, out = transcript.say, transcript.out
    hellos = {player["id"]: say(player, "hi!") for player in PLAYERS}
    say(ADMIN, "/open")
    await asyncio.sleep(0.3)
    for player in PLAYERS:
        transcript.say(ADMIN, f"/credit {CREDIT}", reply_to=hellos[player["id"]])
    await asyncio.sleep(0.5)
    defaults = await service.settings(GROUP)
    if ruleset != defaults.ruleset:
        say(ADMIN, f"/set ruleset {ruleset}")
        await _wait_until(service, lambda settings, _: settings.ruleset == ruleset)
    if dealer != defaults.dealer:
        say(ADMIN, f"/set dealer {dealer}")
        before = await service.settings(GROUP)
        dealing = dataclasses.replace(before, dealer=dealer)
        if await asyncio.to_thread(edge_warning, before, dealing):
            # The bot shows the odds and changes nothing until the admin confirms.
            say(ADMIN, f"/set dealer {dealer} confirm")
    funded = parse_amount(FUND) if dealer == HOUSE_DEALER else 0
    if funded:
        say(ADMIN, f"/fund {FUND}")
    await _wait_until(
        service,
        lambda settings, bank: (
            (settings.ruleset, settings.dealer, bank) == (ruleset, dealer, funded)
        ),
    )
    say(PLAYERS[0], "/newround")
    played: list[int] = []
    for _ in range(rounds):
        if played and funded:
            funded += await _top_up(service, played[-1], say)
        played.append(await _play_round(fake, service, played[-1] if played else None, rng, say))
    close = say(ADMIN, "/close")
    # The summary follows its answer, which may wait for a slot of the group's minute.
    try:
        await fake.wait_for(lambda: _answered(fake, close, ADMIN), timeout=1.0)
    except TimeoutError:
        transcript.flush()
        out(
            f"\n(the answer to /close waits for a slot: a group gets {answers_a_minute}"
            " answers a minute at most, the rest of Telegram's 20 is for the rounds)"
        )
        await fake.wait_for(lambda: _answered(fake, close, ADMIN), timeout=ANSWER_SECONDS)
    transcript.flush()
    if transcript.written:
        count = len(transcript.written)
        out(f"\n{count} picture{'' if count == 1 else 's'} written to {transcript.pictures}")
    numbers = ", ".join(f"#{number}" for number in played)
    out(f"\n=== chips after {len(played)} rounds ({numbers}) ===")
    credited = len(PLAYERS) * parse_amount(CREDIT)
    total = 0
    for player in PLAYERS:
        balance = await service.balance(GROUP, player["id"])
        total += balance.total
        out(
            f"{player['first_name']:>16}: {format_amount(balance.total, 'RM'):>10}"
            f"  (held {format_amount(balance.held, 'RM')})"
        )
    house = await service.house_balance(GROUP)
    out(f"{'house':>16}: {format_amount(house, 'RM'):>10}  (rake and fees less rebates)")
    total += house
    bank = await service.bank_balance(GROUP)
    if funded or bank:
        out(f"{'bank':>16}: {format_amount(bank, 'RM'):>10}  (the house's dealer pool)")
        total += bank
    out(f"{'total':>16}: {format_amount(total, 'RM'):>10}")
    source = f"{format_amount(credited, 'RM')} were credited"
    if funded:
        source += f" and {format_amount(funded, 'RM')} funded"
    if total != credited + funded:
        out(f"chips do not add up: {source}")
        return 1
    out(f"every chip is accounted for: {source}")
    current = await service.current_round(GROUP)
    if current is not None:
        out("a round is still open; the demo stops here")
    return 0

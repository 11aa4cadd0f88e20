"""End-to-end harness: the real bot process (``python -m bot run``) against ``FakeTelegram``.

The fake Telegram server runs on the test's event loop; the bot runs as a subprocess that
long-polls it over HTTP and keeps its state in a temporary SQLite file. The test reads
outcomes from that file through ``GameService`` and drives everything through the fake:
messages, button presses and redeliveries. Nothing sleeps for a fixed time where a
condition can be awaited.

What the bot says is checked by message key, not by sentence: :class:`Texts` renders a
catalogue message as a group should read it, in the group's language and currency
(``E2E.message``, ``E2E.expect_reply``, ``E2E.expect_toast``), so a test run in a group
that chose another language checks that language's catalogue.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import os
import re
import string
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import func, select

from bot.config import load_config
from bot.engine.round import Phase, Round
from bot.engine.settings import LANGUAGES, Settings, field_name, label
from bot.fakegram.formatting import parse_html, strip_formatted
from bot.fakegram.server import FakeTelegram
from bot.money import parse_amount
from bot.rules.ruleset import get_ruleset
from bot.service.game import GameService
from bot.store.db import Database
from bot.store.ledger import Balance
from bot.store.models import AuditEntry, BetRow, Chat, LedgerTransaction, RoundRow
from bot.telegram.i18n import CATALOGUES, DEFAULT_LANGUAGE, translate, translate_plural

T = TypeVar("T")
JsonDict = dict[str, Any]

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Windows of 2 s: short, yet long enough for a loaded 2-core machine to get every
#: command of a phase in before its deadline.
FAST_GAME: dict[str, Any] = {
    "bid_seconds": 2,
    "bet_seconds": 2,
    "grab_seconds": 2,
    "pause_seconds": 1,
    "min_bid": "100",
    "bid_increment": "10",
    "min_bet": "1",
    "max_bet": "50",
    "quick_bets": ["5", "10", "20"],
    # The results as text alone: these tests read them; tests/e2e/test_pictures.py turns
    # the pictures on (the default outside the tests).
    "pictures": "off",
}
#: Replies a group may get per minute: more than the bot's default (10), so that tests of
#: what one command answers can ask a dozen things in one group without waiting a minute
#: (``test_message_rate`` keeps the default and checks the limit).
REPLIES_PER_MINUTE = 16
STARTUP_SECONDS = 45.0
#: Longest a single step (a reply, a phase change) may take before a test fails.
STEP_SECONDS = 15.0


def user(user_id: int, first_name: str, username: str | None = None) -> JsonDict:
    """A Telegram user as the fake takes it."""
    found: JsonDict = {"id": user_id, "first_name": first_name}
    if username:
        found["username"] = username
    return found


def shown(who: JsonDict) -> str:
    """A test user's name as the bot puts it into a message: HTML-escaped (the tests'
    users all have a first name)."""
    return html.escape(who["first_name"])


# -- what the group should see ---------------------------------------------------------


def group_in(language: str, group: int) -> int:
    """A group id of its own for a test that runs in ``language``: ``group`` itself in
    English, another id for each other language (tests of a module share one bot)."""
    return group - 1_000_000 * LANGUAGES.index(language)


def plain_text(text: str) -> str:
    """Telegram HTML as users see it: the ``plain_text`` the fake records for a message
    sent in HTML parse mode (its parser, then Telegram's trim of the ends)."""
    return strip_formatted(parse_html(text)).text


#: Stands in for a parameter a test does not know, in :meth:`Texts.pattern`.
_UNKNOWN = "\x00"


@dataclass(frozen=True)
class Texts:
    """Catalogue messages as a group sees them: in its language, money in its currency.

    Parameters are passed the way the bot passes them: amounts in cents, and names and
    other text from users HTML-escaped (:func:`shown`, ``html.escape``); a parameter that
    is itself a catalogue message is passed as :meth:`html`.
    """

    language: str = DEFAULT_LANGUAGE
    currency: str = Settings().currency

    def html(self, key: str, /, **params: Any) -> str:
        """The message as the bot sends it (Telegram HTML)."""
        return translate(self.language, key, self.currency, **params)

    def html_plural(self, key: str, number: int, /, **params: Any) -> str:
        """A message with plural forms, in its form for ``number``, as the bot sends it."""
        return translate_plural(self.language, key, number, self.currency, **params)

    def message(self, key: str, /, **params: Any) -> str:
        """The message as the group reads it (its plain text)."""
        return plain_text(self.html(key, **params))

    def plural(self, key: str, number: int, /, **params: Any) -> str:
        """A message with plural forms, in its form for ``number``, as the group reads it."""
        return plain_text(self.html_plural(key, number, **params))

    def pattern(self, key: str, /, number: int | None = None, **known: Any) -> str:
        """A regular expression for the plain text of message ``key`` whose parameters
        other than ``known`` may be anything: each is a named group (its first place;
        later places must repeat it). ``number`` picks a plural form."""
        catalogue = CATALOGUES.get(self.language, CATALOGUES[DEFAULT_LANGUAGE])
        template = (
            catalogue.gettext(key) if number is None else catalogue.ngettext(key, key, number)
        )
        names = {name for _, name, _, _ in string.Formatter().parse(template) if name}
        marked = {name: f"{_UNKNOWN}{name}{_UNKNOWN}" for name in names - known.keys()}
        if number is None:
            text = self.message(key, **known, **marked)
        else:
            text = self.plural(key, number, **known, **marked)
        parts, seen = [], set()
        for index, part in enumerate(text.split(_UNKNOWN)):
            if index % 2 == 0:
                parts.append(re.escape(part))
            elif part in seen:
                parts.append(f"(?P={part})")
            else:
                seen.add(part)
                parts.append(f"(?P<{part}>.+?)")
        return "".join(parts)

    def match(
        self, text: str, key: str, /, number: int | None = None, **known: Any
    ) -> dict[str, str] | None:
        """If ``text`` is message ``key`` with the ``known`` parameters, the plain text of
        the others; else None."""
        found = re.fullmatch(self.pattern(key, number, **known), text, re.DOTALL)
        return None if found is None else found.groupdict()


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")


def write_config(
    path: Path,
    *,
    game: Mapping[str, Any],
    operators: list[int] | None = None,
    sweep_seconds: float = 0.2,
    board_edit_seconds: float = 0.5,
    delivery_lease_seconds: float | None = None,
    replies_per_minute: int = 16,
) -> Path:
    """A config file with short windows. Token, API URL and database come from the env."""
    lines = ["[game]"]
    lines += [f"{key} = {_toml_value(value)}" for key, value in game.items()]
    lines += [
        "",
        "[bot]",
        f"sweep_seconds = {sweep_seconds!r}",
        f"board_edit_seconds = {board_edit_seconds!r}",
        f"replies_per_minute = {replies_per_minute!r}",
    ]
    if delivery_lease_seconds is not None:
        lines.append(f"delivery_lease_seconds = {delivery_lease_seconds!r}")
    lines += [
        'log_level = "INFO"',
        "",
        "[telegram]",
        f"operators = {_toml_value(list(operators or []))}",
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


async def eventually(
    check: Callable[[], Awaitable[T | None]] | Callable[[], T | None],
    *,
    timeout: float = STEP_SECONDS,
    interval: float = 0.05,
    what: str = "condition",
    on_timeout: Callable[[], str] | None = None,
) -> T:
    """Poll ``check`` (sync or async) until it returns something truthy; return it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return result  # type: ignore[return-value]
        if loop.time() >= deadline:
            extra = on_timeout() if on_timeout else ""
            raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{extra}")
        await asyncio.sleep(interval)


class BotProcess:
    """``python -m bot run --config …`` as a child process, its log in a file."""

    def __init__(
        self,
        fake: FakeTelegram,
        config: Path,
        database_url: str,
        log: Path,
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        self.fake = fake
        self.config = config
        self.database_url = database_url
        self.log_path = log
        #: More environment for the bot (``NIUNIU_WEB_LISTEN``…), over the harness's own.
        self.extra_env = dict(extra_env or {})
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def env(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("NIUNIU_") and key != "PYTHONSTARTUP"
        }
        env.update(
            NIUNIU_TELEGRAM_TOKEN=self.fake.token,
            NIUNIU_TELEGRAM_BASE_URL=self.fake.base_url,
            NIUNIU_DATABASE_URL=self.database_url,
            PYTHONUNBUFFERED="1",
        )
        env.update(self.extra_env)
        return env

    def log(self, tail: int = 6000) -> str:
        """The end of the bot's log (stderr of every start)."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return "(no bot log)"
        return text[-tail:]

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    async def start(self, *, ready: Callable[[], Awaitable[bool]] | None = None) -> None:
        """Start the bot and wait until it long-polls the fake for updates (or until
        ``ready()``: a bot in webhook mode never polls)."""
        assert not self.running, "the bot is already running"
        # A killed bot's long poll ends when the fake notices the closed connection.
        await eventually(lambda: not self.fake.is_polling, what="the old long poll to end")
        self.starts += 1
        with self.log_path.open("ab") as log:
            log.write(f"\n===== start {self.starts} =====\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                [sys.executable, "-m", "bot", "run", "--config", str(self.config)],
                cwd=REPO_ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )

        async def started() -> bool:
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(
                    f"the bot exited with {self.process.returncode} while starting:\n{self.log()}"
                )
            return self.fake.is_polling if ready is None else await ready()

        await eventually(
            started,
            timeout=STARTUP_SECONDS,
            what="the bot to poll for updates" if ready is None else "the bot to be ready",
            on_timeout=self.log,
        )

    async def terminate(self) -> int:
        """SIGTERM, as a service manager stops it; the exit code once it has stopped."""
        assert self.process is not None, "the bot is not running"
        self.process.terminate()
        code = await asyncio.to_thread(self.process.wait)
        self.process = None
        return code

    async def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as after a crash or a power cut."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        await asyncio.to_thread(self.process.wait)
        self.process = None


@dataclass
class Snapshot:
    """What a refused command must not change in a group."""

    balances: dict[int, Balance]
    house: int
    is_open: bool
    settings: JsonDict
    audit_count: int
    ledger_count: int
    bets: list[tuple[int, int, int, int]]
    round: tuple[Any, ...] | None


@dataclass
class E2E:
    """The fake, the bot process and a reader of the bot's database."""

    fake: FakeTelegram
    bot: BotProcess
    database_url: str
    database: Database = field(init=False)
    service: GameService = field(init=False)
    _barriers: int = 0

    def __post_init__(self) -> None:
        # The bot's configured defaults, so that group settings read as the bot sees them.
        defaults = load_config(self.bot.config, environ={}).game
        self.database = Database.from_url(self.database_url)
        # The bot's own id: a group it sets up is the bot's (``bot.store.chat_bots``).
        bot_id = int(self.fake.token.split(":")[0])
        self.service = GameService(self.database, defaults, bot_id=bot_id)

    # -- talking to the bot ---------------------------------------------------------

    def say(self, chat_id: int, who: JsonDict, text: str, reply_to: int | None = None) -> JsonDict:
        """``who`` writes ``text`` in the group; returns the update (with its message)."""
        return self.fake.post_message(
            chat_id, who, text, chat_title=f"E2E {chat_id}", reply_to_message_id=reply_to
        )

    def sends(self, chat_id: int) -> list[JsonDict]:
        """Every message the bot sent to the chat (transcript entries of kind "send")."""
        return [entry for entry in self.fake.transcript(chat_id) if entry["kind"] == "send"]

    def reply_of(self, chat_id: int, message_id: int) -> JsonDict | None:
        """The bot's reply to a message, if it sent one."""
        for entry in self.sends(chat_id):
            if entry["reply_to_message_id"] == message_id:
                return entry
        return None

    async def wait_reply(
        self, chat_id: int, update: JsonDict, timeout: float = STEP_SECONDS
    ) -> JsonDict:
        """Wait for the bot's reply to the message of ``update``."""
        message_id = update["message"]["message_id"]
        try:
            return await self.fake.wait_for(
                lambda: self.reply_of(chat_id, message_id), timeout=timeout
            )
        except TimeoutError as error:
            sent = "\n".join(
                f"  reply to {entry['reply_to_message_id']}: {entry['plain_text'][:200]!r}"
                for entry in self.sends(chat_id)[-8:]
            )
            raise AssertionError(
                f"no reply to {update['message']['text'][:60]!r} (message {message_id}); "
                f"the bot's last messages in the chat:\n{sent}\n{self.bot.log()}"
            ) from error

    async def ask(
        self,
        chat_id: int,
        who: JsonDict,
        text: str,
        reply_to: int | None = None,
        timeout: float = STEP_SECONDS,
    ) -> str:
        """Say something and return the plain text of the bot's reply."""
        entry = await self.wait_reply(chat_id, self.say(chat_id, who, text, reply_to), timeout)
        return str(entry["plain_text"])

    async def texts(self, chat_id: int) -> Texts:
        """The catalogue in the group's language and currency, as its settings are now."""
        settings = await self.service.settings(chat_id)
        return Texts(settings.language, settings.currency)

    async def message(self, chat_id: int, key: str, /, **params: Any) -> str:
        """Message ``key`` as the group should read it now (see :class:`Texts`)."""
        return (await self.texts(chat_id)).message(key, **params)

    async def expect_reply(
        self,
        chat_id: int,
        who: JsonDict,
        text: str,
        key: str,
        /,
        *,
        reply_to: int | None = None,
        **params: Any,
    ) -> str:
        """``who`` says ``text`` and the bot replies with exactly message ``key``; the reply."""
        answer = await self.ask(chat_id, who, text, reply_to)
        expected = await self.message(chat_id, key, **params)
        assert answer == expected, f"{text[:40]!r} got {answer!r}, not {key}: {expected!r}"
        return answer

    async def expect_toast(self, chat_id: int, press: JsonDict, key: str, /, **params: Any) -> str:
        """The toast answering ``press`` is exactly message ``key``; the toast."""
        toast = str((await self.wait_answer(press))["text"])
        expected = await self.message(chat_id, key, **params)
        data = press["callback_query"]["data"]
        assert toast == expected, f"{data!r} got {toast!r}, not {key}: {expected!r}"
        return toast

    def press(self, chat_id: int, message_id: int, who: JsonDict, data: str) -> JsonDict:
        """``who`` presses a button with ``data`` on a bot message; returns the update."""
        return self.fake.press_button(chat_id, message_id, who, data)

    def answer_of(self, update: JsonDict) -> JsonDict | None:
        """The answerCallbackQuery (toast) for a button press, if answered."""
        query_id = update["callback_query"]["id"]
        for answer in self.fake.callback_answers:
            if answer["callback_query_id"] == query_id:
                return answer
        return None

    async def wait_answer(self, update: JsonDict) -> JsonDict:
        """Wait for the toast answering a button press."""
        try:
            return await self.fake.wait_for(lambda: self.answer_of(update), timeout=STEP_SECONDS)
        except TimeoutError as error:
            raise AssertionError(f"press {update!r} never answered:\n{self.bot.log()}") from error

    async def barrier(self, chat_id: int, who: JsonDict) -> None:
        """Wait until the bot has handled everything sent to the chat so far.

        The bot handles a chat's updates in order, so once a junk button press (refused
        with a toast, which uses no reply budget) is answered, every earlier update of
        the chat has been handled. Needs a bot message in the chat to press on.
        """
        board = max(self.fake.messages(chat_id))
        self._barriers += 1
        await self.wait_answer(self.press(chat_id, board, who, f"barrier-{self._barriers}"))

    # -- the board ------------------------------------------------------------------

    def button_message(self, chat_id: int, data: str) -> int | None:
        """The bot message that now shows a button with callback data ``data``."""
        for message_id, state in self.fake.messages(chat_id).items():
            markup = state.get("reply_markup") or {}
            for row in markup.get("inline_keyboard", []):
                if any(button.get("callback_data") == data for button in row):
                    return message_id
        return None

    async def wait_button(self, chat_id: int, data: str) -> int:
        """Wait until some bot message shows a button with ``data``; its message id."""
        try:
            return await self.fake.wait_for(
                lambda: self.button_message(chat_id, data), timeout=STEP_SECONDS
            )
        except TimeoutError as error:
            raise AssertionError(f"no button {data!r} appeared:\n{self.bot.log()}") from error

    # -- the database ---------------------------------------------------------------

    async def current_round(self, chat_id: int) -> Round | None:
        return await self.service.current_round(chat_id)

    async def wait_phase(
        self,
        chat_id: int,
        phase: Phase,
        round_id: int | None = None,
        *,
        timeout: float = STEP_SECONDS,
    ) -> Round:
        """Wait until the chat's open round is in ``phase``."""

        async def check() -> Round | None:
            state = await self.service.current_round(chat_id)
            if state is None or state.phase is not phase:
                return None
            return state if round_id is None or state.id == round_id else None

        return await eventually(
            check, timeout=timeout, what=f"a round in {phase}", on_timeout=self.bot.log
        )

    async def wait_ended(self, round_id: int, timeout: float = STEP_SECONDS) -> Round:
        """Wait until the round is settled or void."""

        async def check() -> Round | None:
            state = await self.service.round(round_id)
            return state if state is not None and not state.phase.is_open else None

        return await eventually(
            check, timeout=timeout, what=f"round {round_id} to end", on_timeout=self.bot.log
        )

    async def wait_bets(self, chat_id: int, count: int) -> Round:
        """Wait until the chat's open round has ``count`` bets."""

        async def check() -> Round | None:
            state = await self.service.current_round(chat_id)
            return state if state is not None and len(state.bets) >= count else None

        return await eventually(check, what=f"{count} bets", on_timeout=self.bot.log)

    async def scalar(self, statement: Any) -> Any:
        async with self.database.transaction() as session:
            return await session.scalar(statement)

    async def snapshot(self, chat_id: int, user_ids: list[int]) -> Snapshot:
        """Everything about the group a refused command must leave alone."""
        balances = {uid: await self.service.balance(chat_id, uid) for uid in user_ids}
        async with self.database.transaction() as session:
            chat = await session.get(Chat, chat_id)
            audit = await session.scalar(
                select(func.count()).select_from(AuditEntry).where(AuditEntry.chat_id == chat_id)
            )
            ledger = await session.scalar(
                select(func.count())
                .select_from(LedgerTransaction)
                .where(LedgerTransaction.chat_id == chat_id)
            )
            bets = (
                await session.execute(
                    select(BetRow.round_id, BetRow.user_id, BetRow.amount, BetRow.hold)
                    .join(RoundRow, RoundRow.id == BetRow.round_id)
                    .where(RoundRow.chat_id == chat_id)
                    .order_by(BetRow.id)
                )
            ).all()
        state = await self.service.current_round(chat_id)
        return Snapshot(
            balances=balances,
            house=await self.service.house_balance(chat_id),
            is_open=bool(chat and chat.is_open),
            settings=dict(chat.settings) if chat else {},
            audit_count=int(audit or 0),
            ledger_count=int(ledger or 0),
            bets=[(r[0], r[1], r[2], r[3]) for r in bets],
            round=None
            if state is None
            else (state.id, state.phase, state.version, state.high_bidder, state.high_bid),
        )

    async def reconnect(self) -> None:
        """New connections for the test's reads: the database server restarted, and the
        pooled ones died with it."""
        await self.database.dispose()
        self.__post_init__()

    async def close(self) -> None:
        await self.database.dispose()


def sliding_max(times: list[float], window: float = 60.0) -> int:
    """The most events in any window of ``window`` seconds."""
    times = sorted(times)
    best = start = 0
    for end, moment in enumerate(times):
        while moment - times[start] >= window:
            start += 1
        best = max(best, end - start + 1)
    return best


def miniapp_environment(web_port: int) -> dict[str, str]:
    """The bot's environment that serves its Mini App on ``web_port`` (``[web]``)."""
    return {"NIUNIU_WEB_LISTEN": f"127.0.0.1:{web_port}", "NIUNIU_WEB_MINIAPP": "true"}


@contextlib.asynccontextmanager
async def running_bot(
    tmp_path: Path,
    *,
    game: Mapping[str, Any] | None = None,
    operators: list[int] | None = None,
    delivery_lease_seconds: float | None = None,
    replies_per_minute: int | None = None,
    env: Mapping[str, str] | None = None,
    database_url: str | None = None,
) -> AsyncIterator[E2E]:
    """A fake Telegram, the bot process polling it (``env``: more of its environment),
    and a reader of its database (``database_url``, else a new SQLite file)."""
    database_url = database_url or f"sqlite+aiosqlite:///{tmp_path / 'e2e.db'}"
    config = write_config(
        tmp_path / "niuniu.toml",
        game=dict(game or FAST_GAME),
        operators=operators,
        delivery_lease_seconds=delivery_lease_seconds,
        replies_per_minute=replies_per_minute or REPLIES_PER_MINUTE,
    )
    async with FakeTelegram() as fake:
        bot = BotProcess(fake, config, database_url, tmp_path / "bot.log", env)
        try:
            await bot.start()
            e2e = E2E(fake, bot, database_url)
            try:
                yield e2e
            finally:
                await e2e.close()
        finally:
            await bot.kill()


CREDIT = "1000"
CREDIT_CENTS = 100_000


async def change_setting(e2e: E2E, chat_id: int, admin: JsonDict, key: str, value: str) -> str:
    """An admin's ``/set key value`` changes the setting and says so (``set.done``, in
    the group's language after the change: a change of language answers in the new one);
    the reply (a change of game adds its table's defaults)."""
    name = field_name(key)
    old = (await e2e.service.settings(chat_id)).display(name)
    answer = await e2e.ask(chat_id, admin, f"/set {key} {value}")
    new = (await e2e.service.settings(chat_id)).display(name)
    assert new != old, f"/set {key} {value} left {old!r}: {answer!r}"
    expected = await e2e.message(
        chat_id, "set.done", name=label(name), old=html.escape(old), new=html.escape(new)
    )
    assert answer.splitlines()[0] == expected, (answer, expected)
    return answer


async def choose_language(e2e: E2E, chat_id: int, admin: JsonDict, language: str) -> None:
    """An admin sets the group's language (if it has another)."""
    if (await e2e.texts(chat_id)).language != language:
        await change_setting(e2e, chat_id, admin, "language", language)
    assert (await e2e.texts(chat_id)).language == language


async def open_table(
    e2e: E2E,
    chat_id: int,
    admin: JsonDict,
    players: list[JsonDict],
    *,
    credit: str = CREDIT,
    settings: Mapping[str, str] | None = None,
    language: str = DEFAULT_LANGUAGE,
) -> dict[int, int]:
    """An admin (by chat member status) sets the group's ``language``, opens the table,
    changes ``settings`` and credits every player as a reply to their message; each reply
    is checked against the catalogue. Returns each player's greeting message id."""
    e2e.fake.set_chat_member(chat_id, admin["id"], "administrator")
    hellos = {p["id"]: e2e.say(chat_id, p, f"hi, I am {p['first_name']}") for p in players}
    await choose_language(e2e, chat_id, admin, language)
    await e2e.expect_reply(chat_id, admin, "/open", "table.opened")
    for key, value in (settings or {}).items():
        await change_setting(e2e, chat_id, admin, key, value)
    amount = parse_amount(credit)
    for player in players:
        before = await e2e.service.balance(chat_id, player["id"])
        await e2e.expect_reply(
            chat_id,
            admin,
            f"/credit {credit}",
            "credit.done",
            reply_to=hellos[player["id"]]["message"]["message_id"],
            amount=amount,
            name=shown(player),
            available=before.available + amount,
        )
    return {uid: update["message"]["message_id"] for uid, update in hellos.items()}


async def start_round(e2e: E2E, chat_id: int, who: JsonDict) -> Round:
    """``/newround`` and wait for the round's board to be posted with its bid buttons."""
    e2e.say(chat_id, who, "/newround")
    state = await e2e.wait_phase(chat_id, Phase.BIDDING)
    await e2e.wait_button(chat_id, f"{state.id}:bid:{state.settings.min_bid}")
    return state


async def grab_all(e2e: E2E, chat_id: int, state: Round, people: list[JsonDict]) -> list[str]:
    """Everyone in ``people`` presses the Grab button of the round's board; their toasts."""
    data = f"{state.id}:grab:0"
    board = await e2e.wait_button(chat_id, data)
    presses = [e2e.press(chat_id, board, who, data) for who in people]
    return [str((await e2e.wait_answer(press))["text"]) for press in presses]


def grab_toasts(texts: Texts, ended: Round, people: list[JsonDict]) -> list[str]:
    """The toasts ``grab_all`` should have got for the round: each grabber's share."""
    shares = {grab.user_id: grab.amount for grab in ended.grabs}
    return [texts.message("answer.grabbed", share=shares[who["id"]]) for who in people]


def results_title(texts: Texts, state: Round) -> str:
    """The first line of a settled round's results message, as the group reads it."""
    game = texts.html(f"game.{get_ruleset(state.settings.ruleset).name}")
    return texts.message("results.title", round_id=state.id, game=game)

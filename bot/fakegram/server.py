"""A fake Telegram Bot API server that python-telegram-bot can talk to unchanged.

Point a bot at ``FakeTelegram.base_url`` and drive the conversation from the other side,
either in-process (``post_message``, ``press_button``, ``transcript`` …) or over HTTP
through the ``/_fake/*`` control endpoints (``bot.fakegram.control``; see
``bot.fakegram.client``).

It can also misbehave as Telegram does at its bad moments (``set_faults``, ``outage``;
``bot.fakegram.faults`` has the details): a share of the calls answered with a 429
``retry_after``, a 502 ``bad_gateway`` from the proxy, a ``late_answer`` after the bot's
read timeout (the call performed), a ``reset`` connection, and outages in which every
request is reset. A refused call changes nothing; ``faults_injected`` counts them all.

``FakeTelegram`` is the server and its in-process API; the state and the Bot API methods
live in one module per job: ``chats`` (chats, messages, transcripts), ``updates`` (the
queue, the long poll, the webhook), ``messages`` (sends, edits, deletes), ``callbacks``,
``members``, ``profile`` (getMe, commands), ``flood`` (429 limits) and ``api`` (the
endpoint that dispatches to them).

All state lives on the event loop of the running server: the in-process API must be called
from that loop's thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from aiohttp import web

from bot.fakegram.api import BotApiEndpoint, Handler
from bot.fakegram.callbacks import CallbackQueries
from bot.fakegram.changes import Changes
from bot.fakegram.chats import Chats
from bot.fakegram.control import add_control_routes
from bot.fakegram.faults import FaultMix
from bot.fakegram.flood import FloodControl
from bot.fakegram.holds import SendHolds
from bot.fakegram.members import ChatMembers
from bot.fakegram.messages import MessageMethods
from bot.fakegram.profile import BotProfile
from bot.fakegram.updates import UpdateQueue

JsonDict = dict[str, Any]
_T = TypeVar("_T")


class FakeTelegram:
    """An in-memory Telegram Bot API served over HTTP for one bot.

    Answers like the real API: ``{"ok": true, "result": …}`` or
    ``{"ok": false, "error_code": N, "description": …}`` with HTTP status N. Text with
    ``parse_mode`` HTML is validated like Telegram (stricter only for a bare ``&``);
    Markdown parse modes are accepted but not parsed.

    ``round_trip_ms`` delays every Bot API answer as a network between the bot and
    Telegram would (half before the call is performed, half after).

    Use as ``async with FakeTelegram() as fake:`` or call ``start``/``stop``.
    """

    def __init__(
        self,
        *,
        token: str = "123456:TEST",
        bot_username: str = "niuniu_test_bot",
        group_message_limit_per_minute: int | None = None,
        round_trip_ms: float = 0.0,
    ) -> None:
        bot_id, separator, _secret = token.partition(":")
        if not separator or not bot_id.isdigit():
            raise ValueError(f"a bot token looks like '<bot id>:<secret>', got {token!r}")
        self.token = token
        self.bot_username = bot_username
        self.group_message_limit_per_minute = group_message_limit_per_minute
        self.bot_user: JsonDict = {
            "id": int(bot_id),
            "is_bot": True,
            "first_name": "Test Bot",
            "username": bot_username,
        }
        self._changes = Changes()
        self._chats = Chats(self.bot_user)
        self._updates = UpdateQueue(self._changes)
        self._holds = SendHolds(self._changes)
        self._callbacks = CallbackQueries(self._chats, self._updates)
        self._members = ChatMembers(self._chats)
        self._api = BotApiEndpoint(
            token, self._bot_api_methods(), self._changes, round_trip_seconds=round_trip_ms / 1000
        )
        #: The bots this server answers for, by token: its own, and any it ``host``s.
        self._endpoints = {token: self._api}
        self._runner: web.AppRunner | None = None
        self._host = "127.0.0.1"
        self._port: int | None = None

    def _bot_api_methods(self) -> dict[str, Handler]:
        """Every Bot API method the fake serves, by its Bot API name."""
        profile = BotProfile(self.bot_user)
        flood = FloodControl(self.group_message_limit_per_minute)
        messages = MessageMethods(self._chats, flood, self._holds)
        return {
            "getMe": profile.get_me,
            "logOut": profile.log_out,
            "close": profile.log_out,
            "getUpdates": self._updates.get_updates,
            "setWebhook": self._updates.set_webhook,
            "deleteWebhook": self._updates.delete_webhook,
            "getWebhookInfo": self._updates.get_webhook_info,
            "sendMessage": messages.send_message,
            "sendPhoto": messages.send_photo,
            "sendAnimation": messages.send_animation,
            "editMessageText": messages.edit_message_text,
            "editMessageReplyMarkup": messages.edit_message_reply_markup,
            "deleteMessage": messages.delete_message,
            "sendChatAction": messages.send_chat_action,
            "answerCallbackQuery": self._callbacks.answer_callback_query,
            "getChatMember": self._members.get_chat_member,
            "setMyCommands": profile.set_my_commands,
            "deleteMyCommands": profile.delete_my_commands,
            "getMyCommands": profile.get_my_commands,
        }

    # ------------------------------------------------------------------ lifecycle

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Serve on ``host:port``; port 0 picks a free port (see ``port``)."""
        if self._runner is not None:
            raise RuntimeError("the fake Telegram server is already running")
        self._changes.closing = False
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._bot_api)
        add_control_routes(app, self)
        # Cancelling handlers of vanished clients ends their long polls with them.
        runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self._port = int(runner.addresses[0][1])
        self._host = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host

    def host(self, other: FakeTelegram) -> None:
        """Answer ``other``'s Bot API calls here too, as Telegram serves every bot at one
        address: a process with both tokens reaches both bots at this ``base_url``.
        ``other`` keeps its own chats and calls (its in-process API), whether or not it
        serves on a port of its own."""
        self._endpoints[other.token] = other._api

    async def _bot_api(self, request: web.Request) -> web.Response:
        # A token of no bot here is answered by this fake's own endpoint: 401.
        endpoint = self._endpoints.get(request.match_info["token"], self._api)
        return await endpoint.handle(request)

    async def stop(self) -> None:
        """Answer pending long polls and shut the server down."""
        if self._runner is None:
            return
        self._changes.closing = True
        self._changes.bump()
        self._api.faults.release_held()
        await self._runner.cleanup()
        self._runner = None
        self._port = None

    async def __aenter__(self) -> FakeTelegram:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        if self._port is None:
            raise RuntimeError("the fake Telegram server is not running")
        return self._port

    @property
    def root_url(self) -> str:
        """``http://HOST:PORT``, the base for ``FakeTelegramClient``."""
        return f"http://{self._host}:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/bot``, the ``base_url`` to give python-telegram-bot."""
        return f"{self.root_url}/bot"

    # ------------------------------------------------------ users' side of chats

    def post_message(
        self,
        chat_id: int,
        user: Mapping[str, Any],
        text: str,
        *,
        chat_type: str = "supergroup",
        chat_title: str = "Test group",
        reply_to_message_id: int | None = None,
    ) -> JsonDict:
        """Have ``user`` write ``text`` in a chat; returns the queued ``message`` update.

        Group chats have negative ids; a private chat's id is the user's id. ``user`` needs
        ``id`` and ``first_name`` (``username``, ``last_name`` optional).
        """
        message = self._chats.add_user_message(
            chat_id,
            user,
            text,
            chat_type=chat_type,
            chat_title=chat_title,
            reply_to_message_id=reply_to_message_id,
        )
        return self._updates.enqueue("message", message)

    def press_button(
        self, chat_id: int, message_id: int, user: Mapping[str, Any], data: str
    ) -> JsonDict:
        """Have ``user`` press an inline button of a bot message; returns the update.

        ``data`` is not checked against the current keyboard, so a test can simulate a
        press that raced with an edit, as happens with real clients.
        """
        return self._callbacks.press_button(chat_id, message_id, user, data)

    def redeliver(self, update_id: int) -> JsonDict:
        """Queue an already sent update again, with the same ``update_id``."""
        return self._updates.redeliver(update_id)

    def set_chat_member(self, chat_id: int, user_id: int, status: str) -> None:
        """Set what ``getChatMember`` reports for the user in the chat (default "member")."""
        self._members.set_status(chat_id, user_id, status)
        self._changes.bump()

    # ------------------------------------------------------ what the bot did

    def transcript(self, chat_id: int) -> list[JsonDict]:
        """Every bot action in the chat, in order.

        Entries have ``kind`` ("send", "edit" or "delete"), ``message_id``, ``text`` (as the
        bot sent it), ``plain_text`` (as users see it), ``entities``, ``reply_markup``,
        ``parse_mode``, ``reply_to_message_id``, ``media`` (None, or for a photo or an
        animation its ``kind``, ``file_id``, ``width`` and ``height``; ``text`` is then its
        caption: ``file_bytes`` gives its bytes) and ``time`` (Unix seconds, float).
        """
        return self._chats.transcript(chat_id)

    def messages(self, chat_id: int) -> dict[int, JsonDict]:
        """The bot's messages in the chat as they are now (deleted ones are gone)."""
        return self._chats.messages(chat_id)

    def file_bytes(self, file_id: str) -> bytes:
        """The bytes of a photo or an animation the bot sent."""
        return self._chats.file_bytes(file_id)

    @property
    def callback_answers(self) -> list[JsonDict]:
        """Every successful ``answerCallbackQuery``, with the query it answered."""
        return self._callbacks.answers

    @property
    def calls(self) -> list[JsonDict]:
        """Every Bot API request in completion order.

        Entries have ``method``, ``params`` (as received: form values are strings), ``time``
        (when it was answered), ``ok``, for a ``getUpdates`` the ``update_ids`` it answered,
        and, for failures, ``error_code`` and ``description``. An injected 429 is
        a failure here; calls that a ``bad_gateway``, a ``reset`` or an outage refused
        never reached "Telegram" and are not (``faults_injected`` counts them).
        """
        return self._api.calls

    @property
    def is_polling(self) -> bool:
        """Whether a ``getUpdates`` long poll is waiting right now."""
        return self._updates.is_polling

    def take_webhook_updates(self) -> list[JsonDict]:
        """While a webhook is set, take the queued updates Telegram would push to it (none
        otherwise): the fake does not push, so a test that needs the push plays it."""
        return self._updates.take_for_webhook()

    # ------------------------------------------------------ held sends

    def hold_sends(self, pattern: str, *, delivered_first: bool = False) -> None:
        """Hold every ``sendMessage`` whose text (as users see it; a photo's or an
        animation's caption) matches the regular expression ``pattern``, until
        ``release_sends``: to kill a bot while it waits for Telegram's answer
        (``held_sends`` counts the requests waiting).

        Without ``delivered_first`` a request is held before its message exists, as if it
        had not reached Telegram yet: if the bot goes away meanwhile, no message is sent.
        With it, the message is in the chat (and the transcript) first and the answer is
        held: Telegram has it, the bot never learns its id.
        """
        self._holds.hold(pattern, delivered_first=delivered_first)

    def release_sends(self) -> None:
        """Let held ``sendMessage`` requests go on, and hold no more."""
        self._holds.release()

    @property
    def held_sends(self) -> int:
        """How many ``sendMessage`` requests ``hold_sends`` holds right now."""
        return self._holds.held

    # ------------------------------------------------------ faults

    def set_faults(self, mix: FaultMix | None) -> None:
        """Inject faults into Bot API calls as ``mix`` says, from now on (None: no more);
        see ``bot.fakegram.faults``.

        Raises:
            ValueError: if ``mix.methods`` names a method the fake does not serve.
        """
        self._api.faults.set_mix(mix)
        self._changes.bump()

    @property
    def faults(self) -> FaultMix | None:
        """The fault mix in force, if any."""
        return self._api.faults.mix

    def outage(self, seconds: float) -> None:
        """Reset every Bot API request, ``getUpdates`` included, for ``seconds`` from now,
        and those in flight now; then serve as before."""
        self._api.faults.start_outage(seconds)
        self._changes.bump()

    @property
    def in_outage(self) -> bool:
        """Whether an ``outage`` is on."""
        return self._api.faults.in_outage

    @property
    def faults_injected(self) -> dict[str, dict[str, int]]:
        """How many faults were injected since the server was made: kind -> method ->
        count, every kind of ``bot.fakegram.faults.FAULT_KINDS`` present."""
        return self._api.faults.injected

    # ------------------------------------------------------ waiting for changes

    @property
    def version(self) -> int:
        """A counter that every change bumps: queued updates, Bot API calls, member statuses."""
        return self._changes.version

    async def wait_for_change(self, version: int, timeout: float) -> int:
        """Wait until ``version`` is outdated, ``timeout`` passes or the server stops.

        Returns the current version.
        """
        return await self._changes.wait_for_change(version, timeout)

    async def wait_for(self, predicate: Callable[[], _T], timeout: float = 5.0) -> _T:
        """Return ``predicate()``'s first truthy value, re-checked after every change.

        Raises:
            TimeoutError: if it stays falsy for ``timeout`` seconds (saying the last calls).
        """
        return await self._changes.wait_until(
            predicate, timeout, lambda: f"last Bot API calls: {self._api.last_calls(5)}"
        )

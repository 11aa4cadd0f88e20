"""A fake Telegram Bot API server that python-telegram-bot can talk to unchanged.

Point a bot at ``FakeTelegram.base_url`` and drive the conversation from the other side,
either in-process (``post_message``, ``press_button``, ``transcript`` …) or over HTTP
through the ``/_fake/*`` control endpoints (see ``bot.fakegram.client``).

It can also misbehave as Telegram does at its bad moments (``set_faults``, ``outage``;
``bot.fakegram.faults`` has the details): a share of the calls answered with a 429
``retry_after``, a 502 ``bad_gateway`` from the proxy, a ``late_answer`` after the bot's
read timeout (the call performed), a ``reset`` connection, and outages in which every
request is reset. A refused call changes nothing; ``faults_injected`` counts them all.

All state lives on the event loop of the running server: the in-process API must be called
from that loop's thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import math
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiohttp import web

from bot.fakegram.control import add_control_routes
from bot.fakegram.faults import FaultInjector, FaultMix
from bot.fakegram.formatting import (
    EntityParseError,
    FormattedText,
    find_bot_commands,
    parse_html,
    strip_formatted,
)
from bot.fakegram.media import StoredFile, media_json, store_file, uploaded_bytes
from bot.fakegram.params import (
    ApiError,
    RequestParams,
    Upload,
    bad_request,
    read_request_params,
)

JsonDict = dict[str, Any]
_T = TypeVar("_T")
_Handler = Callable[[RequestParams], Awaitable[Any]]

MEMBER_STATUSES = ("creator", "administrator", "member", "restricted", "left", "kicked")
"""Chat member statuses accepted by ``set_chat_member``, as the Bot API spells them."""

# Telegram's update ids start at an arbitrary large number; bots must not assume 1.
_FIRST_UPDATE_ID = 100_000_001
_FIRST_CALLBACK_QUERY_ID = 4_000_000_000_000_000_001
_MAX_TEXT_LENGTH = 4096
_MAX_CAPTION_LENGTH = 1024
_MAX_CALLBACK_ANSWER_LENGTH = 200
_MAX_CALLBACK_DATA_BYTES = 64
_MAX_COMMANDS = 100
_MAX_UPDATES_PER_POLL = 100
_RATE_WINDOW_SECONDS = 60.0
_COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")
# Without allowed_updates Telegram sends every update type except these.
_OPT_IN_UPDATE_TYPES = frozenset({"chat_member", "message_reaction", "message_reaction_count"})
_CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)
_INLINE_BUTTON_ACTIONS = frozenset(
    {
        "callback_data",
        "url",
        "web_app",
        "login_url",
        "switch_inline_query",
        "switch_inline_query_current_chat",
        "switch_inline_query_chosen_chat",
        "copy_text",
        "callback_game",
        "pay",
    }
)
_ADMINISTRATOR_RIGHTS: JsonDict = {
    "can_be_edited": False,
    "is_anonymous": False,
    "can_manage_chat": True,
    "can_delete_messages": True,
    "can_manage_video_chats": True,
    "can_restrict_members": True,
    "can_promote_members": False,
    "can_change_info": True,
    "can_invite_users": True,
    "can_post_stories": True,
    "can_edit_stories": True,
    "can_delete_stories": True,
    "can_pin_messages": True,
    "can_manage_topics": False,
}
_RESTRICTED_RIGHTS: JsonDict = {
    "is_member": True,
    "can_send_messages": False,
    "can_send_audios": False,
    "can_send_documents": False,
    "can_send_photos": False,
    "can_send_videos": False,
    "can_send_video_notes": False,
    "can_send_voice_notes": False,
    "can_send_polls": False,
    "can_send_other_messages": False,
    "can_add_web_page_previews": False,
    "can_react_to_messages": False,
    "can_change_info": False,
    "can_invite_users": False,
    "can_pin_messages": False,
    "can_manage_topics": False,
    "can_edit_tag": False,
    "until_date": 0,
}
_NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are exactly "
    "the same as a current content and reply markup of the message"
)
_QUERY_INVALID = "query is too old and response timeout expired or query ID is invalid"


class _Signal:
    """A broadcast wake-up that sync code can fire: waiters re-check their condition."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def fire(self) -> None:
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self, timeout: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._event.wait(), timeout)


@dataclass(frozen=True)
class _SendHold:
    """Which ``sendMessage`` requests ``FakeTelegram.hold_sends`` holds, and where."""

    pattern: re.Pattern[str]
    delivered_first: bool


@dataclass
class _Message:
    message_id: int
    sender: JsonDict
    date: int
    content: FormattedText
    source_text: str
    parse_mode: str | None
    sent_by_bot: bool
    reply_markup: JsonDict | None = None
    reply_to_message_id: int | None = None
    edit_date: int | None = None
    #: A photo's or an animation's file; ``content`` is then its caption.
    media: StoredFile | None = None


@dataclass
class _Chat:
    info: JsonDict
    chat_instance: str
    next_message_id: int = 1
    messages: dict[int, _Message] = field(default_factory=dict)
    transcript: list[JsonDict] = field(default_factory=list)
    member_status: dict[int, str] = field(default_factory=dict)
    recent_sends: deque[float] = field(default_factory=deque)

    def take_message_id(self) -> int:
        message_id = self.next_message_id
        self.next_message_id += 1
        return message_id


@dataclass
class _QueuedUpdate:
    update: JsonDict
    is_redelivery: bool
    delivered: bool = False

    @property
    def update_id(self) -> int:
        update_id: int = self.update["update_id"]
        return update_id

    @property
    def kind(self) -> str:
        return next(key for key in self.update if key != "update_id")


@dataclass
class _CallbackQuery:
    chat_id: int
    message_id: int
    user_id: int
    data: str
    answered: bool = False


def _chat_instance(chat_id: int) -> str:
    """A stable opaque id per chat, shaped like Telegram's (a signed 64-bit number)."""
    digest = hashlib.sha256(str(chat_id).encode()).digest()
    return str(int.from_bytes(digest[:8], "big", signed=True))


class FakeTelegram:
    """An in-memory Telegram Bot API served over HTTP for one bot.

    Answers like the real API: ``{"ok": true, "result": …}`` or
    ``{"ok": false, "error_code": N, "description": …}`` with HTTP status N. Text with
    ``parse_mode`` HTML is validated like Telegram (stricter only for a bare ``&``);
    Markdown parse modes are accepted but not parsed.

    Use as ``async with FakeTelegram() as fake:`` or call ``start``/``stop``.
    """

    def __init__(
        self,
        *,
        token: str = "123456:TEST",
        bot_username: str = "niuniu_test_bot",
        group_message_limit_per_minute: int | None = None,
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

        self._chats: dict[int, _Chat] = {}
        self._users: dict[int, JsonDict] = {}
        self._updates: dict[int, JsonDict] = {}
        self._pending: list[_QueuedUpdate] = []
        self._next_update_id = _FIRST_UPDATE_ID
        self._allowed_updates: frozenset[str] = frozenset()
        self._poll_generation = 0
        self._waiting_polls = 0
        self._webhook: JsonDict | None = None
        self._commands: dict[tuple[str, str], list[JsonDict]] = {}
        self._callback_queries: dict[str, _CallbackQuery] = {}
        self._next_callback_query_id = _FIRST_CALLBACK_QUERY_ID
        self._callback_answers: list[JsonDict] = []
        self._calls: list[JsonDict] = []
        self._version = 0
        self._changed = _Signal()
        self._closing = False
        self._files: dict[str, StoredFile] = {}
        self._send_hold: _SendHold | None = None
        self._held_sends = 0
        self._runner: web.AppRunner | None = None
        self._host = "127.0.0.1"
        self._port: int | None = None
        self._methods: dict[str, tuple[str, _Handler]] = {
            name.lower(): (name, handler)
            for name, handler in {
                "getMe": self._get_me,
                "logOut": self._log_out,
                "close": self._log_out,
                "getUpdates": self._get_updates,
                "setWebhook": self._set_webhook,
                "deleteWebhook": self._delete_webhook,
                "getWebhookInfo": self._get_webhook_info,
                "sendMessage": self._send_message,
                "sendPhoto": self._send_photo,
                "sendAnimation": self._send_animation,
                "editMessageText": self._edit_message_text,
                "editMessageReplyMarkup": self._edit_message_reply_markup,
                "deleteMessage": self._delete_message,
                "answerCallbackQuery": self._answer_callback_query,
                "getChatMember": self._get_chat_member,
                "setMyCommands": self._set_my_commands,
                "deleteMyCommands": self._delete_my_commands,
                "getMyCommands": self._get_my_commands,
                "sendChatAction": self._send_chat_action,
            }.items()
        }
        self._faults = FaultInjector(
            {key: name for key, (name, _handler) in self._methods.items()}, self._bump
        )

    # ------------------------------------------------------------------ lifecycle

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Serve on ``host:port``; port 0 picks a free port (see ``port``)."""
        if self._runner is not None:
            raise RuntimeError("the fake Telegram server is already running")
        self._closing = False
        # Cancelling handlers of vanished clients ends their long polls with them.
        runner = web.AppRunner(self._build_app(), handler_cancellation=True, access_log=None)
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

    async def stop(self) -> None:
        """Answer pending long polls and shut the server down."""
        if self._runner is None:
            return
        self._closing = True
        self._bump()
        self._faults.release_held()
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

    # ------------------------------------------------------------ in-process API

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
        if not text:
            raise ValueError("a user message needs text")
        sender = self._register_user(user)
        chat_info = self._user_chat_info(chat_id, sender, chat_type, chat_title)
        chat = self._chat(chat_id, chat_info)
        if reply_to_message_id is not None and reply_to_message_id not in chat.messages:
            raise ValueError(f"chat {chat_id} has no message {reply_to_message_id} to reply to")
        message = _Message(
            message_id=chat.take_message_id(),
            sender=sender,
            date=int(time.time()),
            content=FormattedText(text, find_bot_commands(text)),
            source_text=text,
            parse_mode=None,
            sent_by_bot=False,
            reply_to_message_id=reply_to_message_id,
        )
        chat.messages[message.message_id] = message
        return self._enqueue("message", self._message_json(chat, message))

    def press_button(
        self, chat_id: int, message_id: int, user: Mapping[str, Any], data: str
    ) -> JsonDict:
        """Have ``user`` press an inline button of a bot message; returns the update.

        ``data`` is not checked against the current keyboard, so a test can simulate a
        press that raced with an edit, as happens with real clients.
        """
        presser = self._register_user(user)
        chat = self._chats.get(chat_id)
        message = chat.messages.get(message_id) if chat else None
        if chat is None or message is None or not message.sent_by_bot:
            raise ValueError(f"chat {chat_id} has no bot message {message_id}")
        query_id = str(self._next_callback_query_id)
        self._next_callback_query_id += 1
        self._callback_queries[query_id] = _CallbackQuery(
            chat_id=chat_id, message_id=message_id, user_id=presser["id"], data=data
        )
        callback_query = {
            "id": query_id,
            "from": presser,
            "message": self._message_json(chat, message),
            "chat_instance": chat.chat_instance,
            "data": data,
        }
        return self._enqueue("callback_query", callback_query)

    def redeliver(self, update_id: int) -> JsonDict:
        """Queue an already sent update again, with the same ``update_id``."""
        update = self._updates.get(update_id)
        if update is None:
            raise ValueError(f"no update {update_id} was ever queued")
        self._pending.append(_QueuedUpdate(copy.deepcopy(update), is_redelivery=True))
        self._bump()
        return copy.deepcopy(update)

    def set_chat_member(self, chat_id: int, user_id: int, status: str) -> None:
        """Set what ``getChatMember`` reports for the user in the chat (default "member")."""
        if status not in MEMBER_STATUSES:
            raise ValueError(f"status must be one of {', '.join(MEMBER_STATUSES)}; got {status!r}")
        self._chat(chat_id).member_status[user_id] = status
        self._bump()

    def transcript(self, chat_id: int) -> list[JsonDict]:
        """Every bot action in the chat, in order.

        Entries have ``kind`` ("send", "edit" or "delete"), ``message_id``, ``text`` (as the
        bot sent it), ``plain_text`` (as users see it), ``entities``, ``reply_markup``,
        ``parse_mode``, ``reply_to_message_id``, ``media`` (None, or for a photo or an
        animation its ``kind``, ``file_id``, ``width`` and ``height``; ``text`` is then its
        caption: ``file_bytes`` gives its bytes) and ``time`` (Unix seconds, float).
        """
        chat = self._chats.get(chat_id)
        return copy.deepcopy(chat.transcript) if chat else []

    def messages(self, chat_id: int) -> dict[int, JsonDict]:
        """The bot's messages in the chat as they are now (deleted ones are gone)."""
        chat = self._chats.get(chat_id)
        if chat is None:
            return {}
        return {
            message_id: self._message_state(message)
            for message_id, message in chat.messages.items()
            if message.sent_by_bot
        }

    def file_bytes(self, file_id: str) -> bytes:
        """The bytes of a photo or an animation the bot sent."""
        stored = self._files.get(file_id)
        if stored is None:
            raise ValueError(f"no file {file_id!r} was ever sent")
        return stored.data

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
        try:
            compiled = re.compile(pattern)
        except re.error as error:
            raise ValueError(f"pattern: {error}") from None
        self._send_hold = _SendHold(compiled, delivered_first)
        self._bump()

    def release_sends(self) -> None:
        """Let held ``sendMessage`` requests go on, and hold no more."""
        self._send_hold = None
        self._bump()

    @property
    def held_sends(self) -> int:
        """How many ``sendMessage`` requests ``hold_sends`` holds right now."""
        return self._held_sends

    async def _hold_send(self, text: str, *, delivered: bool) -> None:
        """Wait while a ``hold_sends`` for this request and stage is in force."""
        hold = self._send_hold
        if hold is None or hold.delivered_first != delivered or not hold.pattern.search(text):
            return
        self._held_sends += 1
        self._bump()
        try:
            # A bot killed meanwhile cancels this handler (its connection closed).
            while self._send_hold is hold and not self._closing:
                await self._changed.wait(60.0)
        finally:
            self._held_sends -= 1
            self._bump()

    def set_faults(self, mix: FaultMix | None) -> None:
        """Inject faults into Bot API calls as ``mix`` says, from now on (None: no more);
        see ``bot.fakegram.faults``.

        Raises:
            ValueError: if ``mix.methods`` names a method the fake does not serve.
        """
        self._faults.set_mix(mix)
        self._bump()

    @property
    def faults(self) -> FaultMix | None:
        """The fault mix in force, if any."""
        return self._faults.mix

    def outage(self, seconds: float) -> None:
        """Reset every Bot API request, ``getUpdates`` included, for ``seconds`` from now,
        and those in flight now; then serve as before."""
        self._faults.start_outage(seconds)
        self._bump()

    @property
    def in_outage(self) -> bool:
        """Whether an ``outage`` is on."""
        return self._faults.in_outage

    @property
    def faults_injected(self) -> dict[str, dict[str, int]]:
        """How many faults were injected since the server was made: kind -> method ->
        count, every kind of ``bot.fakegram.faults.FAULT_KINDS`` present."""
        return self._faults.injected

    @property
    def callback_answers(self) -> list[JsonDict]:
        """Every successful ``answerCallbackQuery``, with the query it answered."""
        return copy.deepcopy(self._callback_answers)

    @property
    def calls(self) -> list[JsonDict]:
        """Every Bot API request in completion order.

        Entries have ``method``, ``params`` (as received: form values are strings), ``time``,
        ``ok`` and, for failures, ``error_code`` and ``description``. An injected 429 is
        a failure here; calls that a ``bad_gateway``, a ``reset`` or an outage refused
        never reached "Telegram" and are not (``faults_injected`` counts them).
        """
        return copy.deepcopy(self._calls)

    @property
    def version(self) -> int:
        """A counter that every change bumps: queued updates, Bot API calls, member statuses."""
        return self._version

    async def wait_for_change(self, version: int, timeout: float) -> int:
        """Wait until ``version`` is outdated, ``timeout`` passes or the server stops.

        Returns the current version.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._version == version and not self._closing:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            await self._changed.wait(remaining)
        return self._version

    @property
    def is_polling(self) -> bool:
        """Whether a ``getUpdates`` long poll is waiting right now."""
        return self._waiting_polls > 0

    async def wait_for(self, predicate: Callable[[], _T], timeout: float = 5.0) -> _T:
        """Return ``predicate()``'s first truthy value, re-checked after every change.

        Raises:
            TimeoutError: if it stays falsy for ``timeout`` seconds.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            result = predicate()
            if result:
                return result
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(
                    f"condition not met within {timeout} s; last Bot API calls: {self._calls[-5:]}"
                )
            await self._changed.wait(remaining)

    # ----------------------------------------------------------------- HTTP glue

    def _build_app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._handle_bot_api)
        add_control_routes(app, self)
        return app

    async def _handle_bot_api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        raw_params: JsonDict = {}
        with self._faults.guard(request, method):
            try:
                if request.match_info["token"] != self.token:
                    raise ApiError(401, "Unauthorized")
                entry = self._methods.get(method.lower())
                if entry is None:
                    raise ApiError(404, "Not Found")
                method, handler = entry
                raw_params = await read_request_params(request)
                # A refusing fault raises before the call; a late answer is held after it.
                answer_delay = self._faults.draw(request, method)
                result = await handler(RequestParams(raw_params))
            except ApiError as error:
                self._record_call(method, raw_params, error)
                return web.json_response(error.to_json(), status=error.error_code)
            self._record_call(method, raw_params, None)
            await self._faults.hold(answer_delay)
            return web.json_response({"ok": True, "result": result})

    def _record_call(self, method: str, params: JsonDict, error: ApiError | None) -> None:
        shown = {
            name: value.described() if isinstance(value, Upload) else value
            for name, value in params.items()
        }
        call: JsonDict = {"method": method, "params": shown, "time": time.time()}
        if error is None:
            call["ok"] = True
        else:
            call.update(ok=False, error_code=error.error_code, description=error.description)
        self._calls.append(call)
        self._bump()

    def _bump(self) -> None:
        self._version += 1
        self._changed.fire()

    # ---------------------------------------------------------- state helpers

    def _register_user(self, user: Mapping[str, Any]) -> JsonDict:
        if "id" not in user or "first_name" not in user:
            raise ValueError("a user needs at least 'id' and 'first_name'")
        registered: JsonDict = {
            "id": int(user["id"]),
            "is_bot": bool(user.get("is_bot", False)),
            "first_name": str(user["first_name"]),
        }
        for optional in ("last_name", "username", "language_code"):
            if user.get(optional):
                registered[optional] = str(user[optional])
        self._users[registered["id"]] = registered
        return copy.deepcopy(registered)

    @staticmethod
    def _user_chat_info(chat_id: int, user: JsonDict, chat_type: str, chat_title: str) -> JsonDict:
        if chat_type == "private":
            if chat_id != user["id"]:
                raise ValueError("a private chat's id is the user's id")
            info = {"id": chat_id, "type": "private", "first_name": user["first_name"]}
            info.update({key: user[key] for key in ("last_name", "username") if key in user})
            return info
        if chat_type not in ("group", "supergroup"):
            raise ValueError(f"chat_type must be private, group or supergroup; got {chat_type!r}")
        if chat_id >= 0:
            raise ValueError("group chats have negative ids")
        return {"id": chat_id, "type": chat_type, "title": chat_title}

    def _chat(self, chat_id: int, info: JsonDict | None = None) -> _Chat:
        chat = self._chats.get(chat_id)
        if chat is None:
            chat = _Chat(
                info=info or self._guess_chat_info(chat_id), chat_instance=_chat_instance(chat_id)
            )
            self._chats[chat_id] = chat
        elif info is not None:
            chat.info = info
        return chat

    def _guess_chat_info(self, chat_id: int) -> JsonDict:
        """Chat info for a chat the bot writes to before any user did."""
        if chat_id < 0:
            chat_type = "supergroup" if str(chat_id).startswith("-100") else "group"
            return {"id": chat_id, "type": chat_type, "title": "Test group"}
        user = self._users.get(chat_id, {"first_name": f"User {chat_id}"})
        info = {"id": chat_id, "type": "private", "first_name": user["first_name"]}
        info.update({key: user[key] for key in ("last_name", "username") if key in user})
        return info

    def _user(self, user_id: int) -> JsonDict:
        if user_id == self.bot_user["id"]:
            return dict(self.bot_user)
        known = self._users.get(user_id)
        if known is not None:
            return dict(known)
        return {"id": user_id, "is_bot": False, "first_name": f"User {user_id}"}

    def _member_status(self, chat_id: int, user_id: int) -> str:
        chat = self._chats.get(chat_id)
        return chat.member_status.get(user_id, "member") if chat else "member"

    def _enqueue(self, kind: str, payload: JsonDict) -> JsonDict:
        update: JsonDict = {"update_id": self._next_update_id, kind: payload}
        self._next_update_id += 1
        self._updates[update["update_id"]] = update
        self._pending.append(_QueuedUpdate(copy.deepcopy(update), is_redelivery=False))
        self._bump()
        return copy.deepcopy(update)

    def _message_json(self, chat: _Chat, message: _Message, *, with_reply: bool = True) -> JsonDict:
        result: JsonDict = {
            "message_id": message.message_id,
            "from": dict(message.sender),
            "chat": dict(chat.info),
            "date": message.date,
        }
        if message.edit_date is not None:
            result["edit_date"] = message.edit_date
        replied = chat.messages.get(message.reply_to_message_id or 0)
        if with_reply and replied is not None:
            result["reply_to_message"] = self._message_json(chat, replied, with_reply=False)
        if message.media is not None:
            result.update(media_json(message.media))
            if message.content.text:
                result["caption"] = message.content.text
            if message.content.entities:
                result["caption_entities"] = copy.deepcopy(message.content.entities)
        else:
            result["text"] = message.content.text
            if message.content.entities:
                result["entities"] = copy.deepcopy(message.content.entities)
        if message.reply_markup is not None:
            result["reply_markup"] = copy.deepcopy(message.reply_markup)
        return result

    @staticmethod
    def _message_state(message: _Message) -> JsonDict:
        return {
            "text": message.source_text,
            "plain_text": message.content.text,
            "entities": copy.deepcopy(message.content.entities),
            "reply_markup": copy.deepcopy(message.reply_markup),
            "parse_mode": message.parse_mode,
            "reply_to_message_id": message.reply_to_message_id,
            "media": None
            if message.media is None
            else {
                "kind": message.media.kind,
                "file_id": message.media.file_id,
                "width": message.media.width,
                "height": message.media.height,
            },
        }

    def _record_action(self, chat: _Chat, kind: str, message: _Message) -> None:
        entry: JsonDict = {"kind": kind, "message_id": message.message_id, "time": time.time()}
        if kind == "delete":
            entry.update(
                text=None,
                plain_text=None,
                entities=[],
                reply_markup=None,
                parse_mode=None,
                reply_to_message_id=None,
                media=None,
            )
        else:
            entry.update(self._message_state(message))
        chat.transcript.append(entry)

    # ------------------------------------------------------- Bot API: text

    def _formatted_text(
        self, params: RequestParams, field: str = "text"
    ) -> tuple[str, FormattedText, str | None]:
        """The ``text`` of a send/edit (or a ``caption``, which may be empty) as Telegram
        stores it, validated the same way."""
        source = params.optional_str(field) or ""
        parse_mode = params.optional_str("parse_mode")
        explicit_entities = params.optional_json(
            "entities" if field == "text" else f"{field}_entities"
        )
        if explicit_entities is not None:
            if not isinstance(explicit_entities, list):
                raise bad_request("can't parse entities JSON object")
            formatted = FormattedText(source, explicit_entities)
        elif parse_mode is None or parse_mode.lower() in ("markdown", "markdownv2"):
            formatted = FormattedText(source)
        elif parse_mode.lower() == "html":
            try:
                formatted = parse_html(source)
            except EntityParseError as error:
                raise bad_request(f"can't parse entities: {error}") from None
        else:
            raise bad_request("unsupported parse_mode")
        formatted = strip_formatted(formatted)
        if field == "caption":
            if len(formatted.text) > _MAX_CAPTION_LENGTH:
                raise bad_request("message caption is too long")
        elif not formatted.text:
            raise bad_request("message text is empty")
        elif len(formatted.text) > _MAX_TEXT_LENGTH:
            raise bad_request("message is too long")
        for entity in formatted.entities:
            if entity.get("type") == "text_mention":
                entity["user"] = self._user(int(entity["user"]["id"]))
        return source, formatted, parse_mode

    @staticmethod
    def _inline_markup(params: RequestParams) -> JsonDict | None:
        """The inline keyboard of a send/edit; other keyboards are not part of a message."""
        markup = params.optional_json(
            "reply_markup", "can't parse reply keyboard markup JSON object"
        )
        if markup is None:
            return None
        if not isinstance(markup, dict):
            raise bad_request("can't parse reply keyboard markup JSON object")
        if "inline_keyboard" not in markup:
            return None
        rows = markup["inline_keyboard"]
        if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
            raise bad_request("can't parse inline keyboard markup JSON object")
        for row in rows:
            for button in row:
                _check_inline_button(button)
        kept_rows = [row for row in rows if row]
        return {"inline_keyboard": kept_rows} if kept_rows else None

    def _reply_target(self, params: RequestParams, chat: _Chat) -> int | None:
        reply_parameters = params.optional_json("reply_parameters")
        if isinstance(reply_parameters, dict):
            nested = RequestParams(reply_parameters)
            target = nested.required_int("message_id", "message to be replied not found")
            allow_missing = nested.flag("allow_sending_without_reply")
        else:
            target_or_none = params.optional_int("reply_to_message_id")
            if target_or_none is None:
                return None
            target = target_or_none
            allow_missing = params.flag("allow_sending_without_reply")
        if target in chat.messages:
            return target
        if allow_missing:
            return None
        raise bad_request("message to be replied not found")

    def _check_flood(self, chat_id: int, chat: _Chat) -> None:
        limit = self.group_message_limit_per_minute
        if limit is None or chat_id >= 0:
            return
        now = time.monotonic()
        while chat.recent_sends and chat.recent_sends[0] <= now - _RATE_WINDOW_SECONDS:
            chat.recent_sends.popleft()
        if len(chat.recent_sends) >= limit:
            retry_after = max(1, math.ceil(chat.recent_sends[0] + _RATE_WINDOW_SECONDS - now))
            raise ApiError(
                429, f"Too Many Requests: retry after {retry_after}", {"retry_after": retry_after}
            )
        chat.recent_sends.append(now)

    def _editable_message(self, params: RequestParams) -> tuple[_Chat, _Message]:
        if params.optional_str("inline_message_id") is not None:
            raise bad_request("inline messages are not supported by the fake")
        chat_id = params.chat_id()
        message_id = params.required_int("message_id", "message identifier is not specified")
        chat = self._chats.get(chat_id)
        if chat is None:
            raise bad_request("chat not found")
        message = chat.messages.get(message_id)
        if message is None:
            raise bad_request("message to edit not found")
        if not message.sent_by_bot:
            raise bad_request("message can't be edited")
        return chat, message

    async def _send_message(self, params: RequestParams) -> JsonDict:
        return await self._send(params, "text")

    async def _send_photo(self, params: RequestParams) -> JsonDict:
        return await self._send(params, "caption", "photo")

    async def _send_animation(self, params: RequestParams) -> JsonDict:
        return await self._send(params, "caption", "animation")

    async def _send(
        self, params: RequestParams, text_field: str, media_kind: str | None = None
    ) -> JsonDict:
        """A new message of the bot's: its text (or a media's caption) from ``text_field``,
        and the photo or animation ``media_kind`` names, if any (an upload, or a file sent
        before)."""
        chat_id = params.chat_id()
        source, formatted, parse_mode = self._formatted_text(params, text_field)
        media = None
        if media_kind is not None:
            media = store_file(
                media_kind, uploaded_bytes(params, media_kind, self._files), self._files
            )
        markup = self._inline_markup(params)
        chat = self._chat(chat_id)
        reply_to = self._reply_target(params, chat)
        await self._hold_send(formatted.text, delivered=False)
        self._check_flood(chat_id, chat)
        message = _Message(
            message_id=chat.take_message_id(),
            sender=dict(self.bot_user),
            date=int(time.time()),
            content=formatted,
            source_text=source,
            parse_mode=parse_mode,
            sent_by_bot=True,
            reply_markup=markup,
            reply_to_message_id=reply_to,
            media=media,
        )
        chat.messages[message.message_id] = message
        self._record_action(chat, "send", message)
        await self._hold_send(formatted.text, delivered=True)
        return self._message_json(chat, message)

    async def _edit_message_text(self, params: RequestParams) -> JsonDict:
        chat, message = self._editable_message(params)
        if message.media is not None:
            raise bad_request("there is no text in the message to edit")
        source, formatted, parse_mode = self._formatted_text(params)
        # As in Telegram, an edit without reply_markup removes the inline keyboard.
        markup = self._inline_markup(params)
        if formatted == message.content and markup == message.reply_markup:
            raise bad_request(_NOT_MODIFIED)
        message.content = formatted
        message.source_text = source
        message.parse_mode = parse_mode
        message.reply_markup = markup
        message.edit_date = int(time.time())
        self._record_action(chat, "edit", message)
        return self._message_json(chat, message)

    async def _edit_message_reply_markup(self, params: RequestParams) -> JsonDict:
        chat, message = self._editable_message(params)
        markup = self._inline_markup(params)
        if markup == message.reply_markup:
            raise bad_request(_NOT_MODIFIED)
        message.reply_markup = markup
        message.edit_date = int(time.time())
        self._record_action(chat, "edit", message)
        return self._message_json(chat, message)

    async def _delete_message(self, params: RequestParams) -> bool:
        chat_id = params.chat_id()
        message_id = params.required_int("message_id", "message identifier is not specified")
        chat = self._chats.get(chat_id)
        message = chat.messages.get(message_id) if chat else None
        if chat is None or message is None:
            raise bad_request("message to delete not found")
        bot_status = self._member_status(chat_id, self.bot_user["id"])
        if (
            not message.sent_by_bot
            and chat_id < 0
            and bot_status not in ("creator", "administrator")
        ):
            raise bad_request("message can't be deleted")
        del chat.messages[message_id]
        self._record_action(chat, "delete", message)
        return True

    # ------------------------------------------------ Bot API: everything else

    async def _get_me(self, params: RequestParams) -> JsonDict:
        return {
            **self.bot_user,
            "can_join_groups": True,
            "can_read_all_group_messages": True,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    async def _log_out(self, params: RequestParams) -> bool:
        return True

    async def _get_updates(self, params: RequestParams) -> list[JsonDict]:
        if self._webhook is not None:
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        offset = params.optional_int("offset")
        limit = min(
            max(params.optional_int("limit") or _MAX_UPDATES_PER_POLL, 1), _MAX_UPDATES_PER_POLL
        )
        timeout = max(params.optional_number("timeout") or 0.0, 0.0)
        self._set_allowed_updates(params)
        self._confirm_updates(offset)
        # A newer getUpdates terminates a waiting older one, as Telegram does.
        self._poll_generation += 1
        generation = self._poll_generation
        self._bump()

        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        self._waiting_polls += 1
        try:
            while True:
                if generation != self._poll_generation:
                    raise ApiError(
                        409,
                        "Conflict: terminated by other getUpdates request; "
                        "make sure that only one bot instance is running",
                    )
                batch = self._take_updates(limit)
                remaining = deadline - loop.time()
                if batch or self._closing or remaining <= 0:
                    return batch
                await self._changed.wait(remaining)
        finally:
            self._waiting_polls -= 1

    def _set_allowed_updates(self, params: RequestParams) -> None:
        allowed = params.optional_json("allowed_updates")
        if allowed is None:
            return  # Telegram keeps the previous setting
        if not isinstance(allowed, list):
            raise bad_request("can't parse allowed_updates JSON object")
        self._allowed_updates = frozenset(str(kind) for kind in allowed)

    def _is_allowed(self, kind: str) -> bool:
        if self._allowed_updates:
            return kind in self._allowed_updates
        return kind not in _OPT_IN_UPDATE_TYPES

    def _confirm_updates(self, offset: int | None) -> None:
        """Forget updates as Telegram does for ``offset`` (see getUpdates)."""
        if not offset:
            return
        if offset < 0:
            self._pending = self._pending[offset:]
            return
        # A redelivered copy has an old id; it must survive until it was actually sent.
        self._pending = [
            queued
            for queued in self._pending
            if queued.update_id >= offset or (queued.is_redelivery and not queued.delivered)
        ]

    def _take_updates(self, limit: int) -> list[JsonDict]:
        self._pending = [queued for queued in self._pending if self._is_allowed(queued.kind)]
        batch = self._pending[:limit]
        for queued in batch:
            queued.delivered = True
        # Clients confirm with the last update's id + 1, so the batch must end with its largest.
        return [copy.deepcopy(queued.update) for queued in sorted(batch, key=lambda q: q.update_id)]

    async def _set_webhook(self, params: RequestParams) -> bool:
        url = params.optional_str("url") or ""
        if not url:
            self._webhook = None
            return True
        if not url.startswith("https://"):
            raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
        self._set_allowed_updates(params)
        if params.flag("drop_pending_updates"):
            self._pending.clear()
        # Telegram would push updates to this URL; the fake only records it, as a local bot
        # cannot serve HTTPS to it anyway.
        self._webhook = {
            "url": url,
            "max_connections": params.optional_int("max_connections") or 40,
        }
        return True

    async def _delete_webhook(self, params: RequestParams) -> bool:
        if params.flag("drop_pending_updates"):
            self._pending.clear()
        self._webhook = None
        return True

    async def _get_webhook_info(self, params: RequestParams) -> JsonDict:
        info: JsonDict = {
            "url": "",
            "has_custom_certificate": False,
            "pending_update_count": len(self._pending),
        }
        if self._webhook is not None:
            info.update(self._webhook)
            if self._allowed_updates:
                info["allowed_updates"] = sorted(self._allowed_updates)
        return info

    async def _answer_callback_query(self, params: RequestParams) -> bool:
        query_id = params.optional_str("callback_query_id") or ""
        query = self._callback_queries.get(query_id)
        if query is None or query.answered:
            raise bad_request(_QUERY_INVALID)
        text = params.optional_str("text")
        if text is not None and len(text) > _MAX_CALLBACK_ANSWER_LENGTH:
            raise bad_request("MESSAGE_TOO_LONG")
        query.answered = True
        self._callback_answers.append(
            {
                "callback_query_id": query_id,
                "chat_id": query.chat_id,
                "message_id": query.message_id,
                "user_id": query.user_id,
                "data": query.data,
                "text": text,
                "show_alert": params.flag("show_alert"),
                "url": params.optional_str("url"),
                "cache_time": params.optional_int("cache_time") or 0,
                "time": time.time(),
            }
        )
        return True

    async def _get_chat_member(self, params: RequestParams) -> JsonDict:
        chat_id = params.chat_id()
        user_id = params.required_int("user_id", "user not found")
        status = self._member_status(chat_id, user_id)
        member: JsonDict = {"status": status, "user": self._user(user_id)}
        if status == "creator":
            member["is_anonymous"] = False
        elif status == "administrator":
            member.update(_ADMINISTRATOR_RIGHTS)
        elif status == "restricted":
            member.update(_RESTRICTED_RIGHTS)
        elif status == "kicked":
            member["until_date"] = 0
        return member

    @staticmethod
    def _commands_key(params: RequestParams) -> tuple[str, str]:
        scope = params.optional_json("scope") or {"type": "default"}
        if not isinstance(scope, dict) or "type" not in scope:
            raise bad_request("can't parse BotCommandScope JSON object")
        scope_key = ",".join(f"{key}={scope[key]}" for key in sorted(scope))
        return scope_key, params.optional_str("language_code") or ""

    async def _set_my_commands(self, params: RequestParams) -> bool:
        commands = params.optional_json("commands")
        if not isinstance(commands, list):
            raise bad_request("can't parse commands JSON object")
        if len(commands) > _MAX_COMMANDS:
            raise bad_request("BOT_COMMANDS_TOO_MUCH")
        stored = []
        for command in commands:
            if not isinstance(command, dict):
                raise bad_request("can't parse BotCommand JSON object")
            name = str(command.get("command", ""))
            description = str(command.get("description", ""))
            if not _COMMAND_NAME.fullmatch(name):
                raise bad_request("BOT_COMMAND_INVALID")
            if not (1 <= len(description) <= 256):
                raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
            stored.append({"command": name, "description": description})
        self._commands[self._commands_key(params)] = stored
        return True

    async def _delete_my_commands(self, params: RequestParams) -> bool:
        self._commands.pop(self._commands_key(params), None)
        return True

    async def _get_my_commands(self, params: RequestParams) -> list[JsonDict]:
        return copy.deepcopy(self._commands.get(self._commands_key(params), []))

    async def _send_chat_action(self, params: RequestParams) -> bool:
        params.chat_id()
        if params.optional_str("action") not in _CHAT_ACTIONS:
            raise bad_request("wrong parameter action in request")
        return True


def _check_inline_button(button: object) -> None:
    """Reject inline buttons Telegram would reject (no action, oversized callback_data)."""
    if not isinstance(button, dict) or not isinstance(button.get("text"), str):
        raise bad_request(
            'can\'t parse inline keyboard button: Field "text" must be of type String'
        )
    if not _INLINE_BUTTON_ACTIONS & button.keys():
        raise bad_request(
            "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"
        )
    if "callback_data" in button:
        data = button["callback_data"]
        if not isinstance(data, str) or not 1 <= len(data.encode()) <= _MAX_CALLBACK_DATA_BYTES:
            raise bad_request("BUTTON_DATA_INVALID")

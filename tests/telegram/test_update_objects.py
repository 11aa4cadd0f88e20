"""Updates built directly (``bot.telegram.update_objects``): a plain message is the object
python-telegram-bot's ``de_json`` builds, field for field; a press keeps everything the
bot reads of it; anything else is ``de_json``'s own; ``getUpdates`` waits as long as
python-telegram-bot's own."""

from __future__ import annotations

import copy
import json
import warnings
from datetime import timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from telegram import Bot, InaccessibleMessage, Message, Update
from telegram.ext import Application, CallbackQueryHandler, CommandHandler, Defaults
from telegram.request import BaseRequest, RequestData

from bot.fakegram import FakeTelegram
from bot.telegram.update_objects import UpdatesBot, update_of

BOT = Bot("123456:test-token")

names = st.text(min_size=1, max_size=12)
users = st.fixed_dictionaries(
    {"id": st.integers(1, 2**52), "is_bot": st.booleans(), "first_name": names},
    optional={
        "last_name": names,
        "username": names,
        "language_code": st.sampled_from(["en", "zh-hans", "ms"]),
        "is_premium": st.just(True),
    },
)
chats = st.one_of(
    st.fixed_dictionaries(
        {"id": st.integers(-(10**13), -1), "type": st.sampled_from(["group", "supergroup"])},
        optional={"title": names, "username": names, "is_forum": st.booleans()},
    ),
    st.fixed_dictionaries(
        {"id": st.integers(1, 2**52), "type": st.just("private")},
        optional={"first_name": names, "last_name": names, "username": names},
    ),
)
entities = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["bot_command", "mention", "bold"]),
            "offset": st.integers(0, 50),
            "length": st.integers(1, 50),
        }
    ),
    max_size=3,
)
messages = st.fixed_dictionaries(
    {
        "message_id": st.integers(1, 2**31),
        "date": st.integers(0, 2**32),
        "chat": chats,
        "from": users,
        "text": st.text(max_size=40),
    },
    optional={"entities": entities},
)
presses = st.fixed_dictionaries(
    {
        "id": st.text(min_size=1, max_size=20),
        "from": users,
        "chat_instance": st.text(max_size=20),
        "message": st.fixed_dictionaries(
            {"message_id": st.integers(1, 2**31), "chat": chats, "date": st.integers(0, 2**32)},
            optional={"from": users},
        ),
    },
    optional={"data": st.text(max_size=64)},
)


def _ptb(data: dict[str, Any], bot: Bot = BOT) -> Update:
    return Update.de_json(copy.deepcopy(data), bot)


@given(update_id=st.integers(0, 2**40), message=messages)
def test_a_plain_message_is_the_object_de_json_builds(update_id: int, message: Any) -> None:
    data = {"update_id": update_id, "message": message}
    built = update_of(data, BOT)
    assert built.to_dict() == _ptb(data).to_dict()
    assert built.message is not None and built.message.get_bot() is BOT
    assert built.message.from_user is not None and built.message.from_user.get_bot() is BOT
    assert built.message.date == _ptb(data).message.date  # type: ignore[union-attr]


@given(update_id=st.integers(0, 2**40), press=presses)
def test_a_press_keeps_what_the_bot_reads_of_it(update_id: int, press: Any) -> None:
    data = {"update_id": update_id, "callback_query": press}
    built, expected = update_of(data, BOT), _ptb(data)
    query, wanted = built.callback_query, expected.callback_query
    assert query is not None and wanted is not None
    assert (query.id, query.data, query.chat_instance) == (
        wanted.id,
        wanted.data,
        press["chat_instance"],
    )
    assert query.from_user.to_dict() == wanted.from_user.to_dict()
    assert isinstance(query.message, InaccessibleMessage)
    assert query.message.message_id == press["message"]["message_id"]
    assert built.effective_chat is not None and expected.effective_chat is not None
    assert built.effective_chat.to_dict() == expected.effective_chat.to_dict()
    assert built.effective_user == expected.effective_user
    assert query.get_bot() is BOT and built.update_id == update_id


MESSAGE: dict[str, Any] = {
    "message_id": 5,
    "date": 1_700_000_000,
    "chat": {"id": -100, "type": "supergroup", "title": "T"},
    "from": {"id": 7, "is_bot": False, "first_name": "Ann"},
    "text": "/credit 20",
}


ANN = MESSAGE["from"]
PHOTO = {"file_id": "a", "file_unique_id": "b", "width": 1, "height": 1}
TEXT_MENTION = {"type": "text_mention", "offset": 0, "length": 2, "user": ANN}
PRESSED = {"message_id": 5, "date": 0, "chat": MESSAGE["chat"]}
PRESSED_IN_TOPIC = {**PRESSED, "message_thread_id": 3, "is_topic_message": True}
PRESS = {"id": "q", "from": ANN, "chat_instance": "c", "data": "x"}


@pytest.mark.parametrize(
    "data",
    [
        {"update_id": 1, "message": {**MESSAGE, "reply_to_message": {**MESSAGE, "text": "hi"}}},
        {"update_id": 1, "message": {**MESSAGE, "message_thread_id": 3, "is_topic_message": True}},
        {"update_id": 1, "message": {**MESSAGE, "photo": [PHOTO]}},
        {"update_id": 1, "message": {**MESSAGE, "entities": [TEXT_MENTION]}},
        {"update_id": 1, "message": {**MESSAGE, "from": {**ANN, "unknown_field": 1}}},
        {"update_id": 1, "edited_message": MESSAGE},
        {"update_id": 1, "message": MESSAGE, "edited_message": MESSAGE},
        {"update_id": 1, "callback_query": {**PRESS, "inline_message_id": "i"}},
        {"update_id": 1, "callback_query": {**PRESS, "message": PRESSED_IN_TOPIC}},
    ],
    ids=[
        "a reply", "in a topic", "a photo", "an entity naming a user", "a field unknown here",
        "an edit", "two kinds", "a press on an inline message", "a press in a topic",
    ],
)  # fmt: skip
def test_anything_else_is_what_de_json_builds(data: dict[str, Any]) -> None:
    built = update_of(copy.deepcopy(data), BOT)
    assert built.to_dict() == _ptb(data).to_dict()
    assert built.api_kwargs == _ptb(data).api_kwargs


def test_a_bot_with_a_time_zone_of_its_own_dates_messages_as_de_json_does() -> None:
    bot = UpdatesBot("123456:test-token", defaults=Defaults(tzinfo=timezone(timedelta(hours=8))))
    data = {"update_id": 1, "message": MESSAGE}
    built = update_of(data, bot)
    assert built.message is not None and built.message.date.utcoffset() == timedelta(hours=8)
    assert built.to_dict() == _ptb(data, bot).to_dict()


def test_a_bad_press_fails_as_de_json_fails() -> None:
    broken = {
        "update_id": 1,
        "callback_query": {"id": "q", "chat_instance": "c", "from": {"id": 7}},
    }
    with pytest.raises(TypeError):
        _ptb(broken)
    with pytest.raises(TypeError):
        update_of(broken, BOT)


async def test_a_press_meets_the_handlers_without_a_warning() -> None:
    """python-telegram-bot warns when a handler asks a press on an InaccessibleMessage for
    its message; the shell installs its button handler first (``GameBot.install``), and
    here the commands' handler comes second likewise."""
    pressed: list[str] = []

    async def press(update: Update, context: Any) -> None:
        assert update.callback_query is not None and update.callback_query.data is not None
        pressed.append(update.callback_query.data)

    async def command(update: Update, context: Any) -> None:
        raise AssertionError("a press is no command")

    data = {"update_id": 9, "callback_query": {**PRESS, "data": "grab:1", "message": PRESSED}}
    async with FakeTelegram() as fake:
        application = Application.builder().token(fake.token).base_url(fake.base_url).build()
        application.add_handler(CallbackQueryHandler(press))
        application.add_handler(CommandHandler("bet", command))
        async with application:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                await application.process_update(update_of(data, application.bot))
    assert pressed == ["grab:1"]


class _Request(BaseRequest):
    """Stands in for the getUpdates transport: the read timeout of each call, one answer."""

    def __init__(self, answer: list[dict[str, Any]]) -> None:
        self.answer = answer
        self.read_timeouts: list[float | None] = []

    @property
    def read_timeout(self) -> float:
        return 5.0

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: float | object | None = BaseRequest.DEFAULT_NONE,
        write_timeout: float | object | None = BaseRequest.DEFAULT_NONE,
        connect_timeout: float | object | None = BaseRequest.DEFAULT_NONE,
        pool_timeout: float | object | None = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        assert isinstance(read_timeout, float | int)
        self.read_timeouts.append(read_timeout)
        return 200, json.dumps({"ok": True, "result": self.answer}).encode()

    async def initialize(self) -> None:
        """Nothing to open."""

    async def shutdown(self) -> None:
        """Nothing to close."""


@pytest.mark.parametrize(
    ("timeout", "read_timeout", "waited"),
    [(10, None, 15.0), (0, None, 5.0), (None, None, 5.0), (timedelta(seconds=3), 2.0, 5.0)],
)
async def test_get_updates_waits_the_long_poll_on_top_of_the_read_timeout(
    timeout: Any, read_timeout: float | None, waited: float
) -> None:
    request = _Request([{"update_id": 3, "message": MESSAGE}])
    bot = UpdatesBot("123456:test-token", get_updates_request=request)
    if read_timeout is None:  # the transport's own
        updates = await bot.get_updates(offset=3, timeout=timeout)
    else:
        updates = await bot.get_updates(offset=3, timeout=timeout, read_timeout=read_timeout)
    assert request.read_timeouts == [waited]
    assert [update.to_dict() for update in updates] == [
        _ptb({"update_id": 3, "message": MESSAGE}, bot).to_dict()
    ]
    assert isinstance(updates[0].message, Message)

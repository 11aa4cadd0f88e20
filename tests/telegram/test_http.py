"""The Bot API's transport (``bot.telegram.http``): parameters reach the
server as python-telegram-bot encodes them (a form, or multipart with a file), and
failures surface as python-telegram-bot's own errors."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.web_request import FileField
from telegram import Bot, Chat, InputFile, Message, Update, User
from telegram.error import BadRequest, NetworkError, TimedOut
from telegram.request import RequestData
from telegram.request._requestparameter import RequestParameter

from bot.telegram.http import OWN_MESSAGE_FIELDS, BotApiRequest
from bot.telegram.reachability import Reachability


def shown(value: str | bytes | bytearray | FileField) -> str:
    """A form field as the echo server reports it: text as it is, a file by its name."""
    if isinstance(value, str):
        return value
    assert isinstance(value, FileField), value
    return f"file {value.filename}: " + value.file.read().decode()


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, list[dict[str, str]]]]:
    seen: list[dict[str, str]] = []

    async def echo(request: web.Request) -> web.Response:
        form = await request.post()
        seen.append({name: shown(value) for name, value in form.items()})
        return web.json_response({"ok": True, "result": True})

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(2)
        return web.json_response({"ok": True, "result": True})

    async def proxy_page(request: web.Request) -> web.Response:
        """What a proxy in front of the Bot API answers when the API is down."""
        return web.Response(
            status=502,
            text="<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
            content_type="text/html",
        )

    async def edited(request: web.Request) -> web.Response:
        """An edit's answer as Telegram gives it: the edited message, whole."""
        return web.json_response({"ok": True, "result": board(5)})

    async def me(request: web.Request) -> web.Response:
        return web.json_response({"ok": True, "result": BOT_USER})

    async def not_modified(request: web.Request) -> web.Response:
        description = "Bad Request: message is not modified"
        return web.json_response(
            {"ok": False, "error_code": 400, "description": description}, status=400
        )

    async def telegram_error(request: web.Request) -> web.Response:
        return web.json_response(
            {"ok": False, "error_code": 502, "description": "Bad Gateway"}, status=502
        )

    app = web.Application()
    app.router.add_post("/echo", echo)
    app.router.add_post("/slow", slow)
    app.router.add_post("/proxy-page", proxy_page)
    app.router.add_post("/telegram-error", telegram_error)
    app.router.add_post("/bot1:x/editMessageText", edited)
    app.router.add_post("/bot1:x/editMessageReplyMarkup", not_modified)
    app.router.add_post("/bot1:x/sendMessage", edited)
    app.router.add_post("/bot1:x/getMe", me)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}", seen
    finally:
        await runner.cleanup()


async def test_parameters_go_as_a_form_and_files_as_multipart(
    server: tuple[str, list[dict[str, str]]],
) -> None:
    base, seen = server
    request = BotApiRequest()
    await request.initialize()
    try:
        form = RequestData(
            [
                RequestParameter.from_input("chat_id", -1001),
                RequestParameter.from_input("text", "hé & a=b+c%"),
            ]
        )
        status, body = await request.do_request(f"{base}/echo", "POST", form)
        assert (status, body) == (200, b'{"ok": true, "result": true}')
        upload = RequestData(
            [
                RequestParameter.from_input("chat_id", -1001),
                RequestParameter.from_input("photo", InputFile(b"png bytes", filename="board.png")),
            ]
        )
        status, _ = await request.do_request(f"{base}/echo", "POST", upload)
        assert status == 200
    finally:
        await request.shutdown()
    assert seen == [
        {"chat_id": "-1001", "text": "hé & a=b+c%"},
        {"chat_id": "-1001", "photo": "file board.png: png bytes"},
    ]


async def test_an_answer_slower_than_the_read_timeout_is_timed_out(
    server: tuple[str, list[dict[str, str]]],
) -> None:
    base, _ = server
    request = BotApiRequest(read_timeout=0.2)
    await request.initialize()
    try:
        with pytest.raises(TimedOut):
            await request.do_request(f"{base}/slow", "POST")
        # A timeout given to the call wins over the transport's own.
        status, _ = await request.do_request(f"{base}/slow", "POST", read_timeout=5)
        assert status == 200
    finally:
        await request.shutdown()


async def test_a_refused_connection_is_a_network_error() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    request = BotApiRequest()
    await request.initialize()
    try:
        with pytest.raises(NetworkError) as raised:
            await request.do_request(f"http://127.0.0.1:{port}/echo", "POST")
        assert not isinstance(raised.value, TimedOut)
    finally:
        await request.shutdown()


async def test_a_request_before_initialize_or_after_shutdown_is_refused() -> None:
    request = BotApiRequest()
    with pytest.raises(RuntimeError):
        await request.do_request("http://127.0.0.1:9/echo", "POST")
    await request.initialize()
    await request.shutdown()
    with pytest.raises(RuntimeError):
        await request.do_request("http://127.0.0.1:9/echo", "POST")


async def test_an_upload_the_server_stops_taking_is_timed_out() -> None:
    """aiohttp times out no write: the call as a whole is bounded instead."""
    stalled: list[asyncio.StreamWriter] = []

    async def never_read(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        stalled.append(writer)  # kept open, never read: the client's writes fill the buffers

    server = await asyncio.start_server(never_read, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    request = BotApiRequest(
        read_timeout=0.2, connect_timeout=0.2, pool_timeout=0.2, media_write_timeout=0.5
    )
    await request.initialize()
    upload = RequestData(
        [
            RequestParameter.from_input("chat_id", -1001),
            RequestParameter.from_input("photo", InputFile(bytes(64 << 20), filename="big.png")),
        ]
    )
    try:
        with pytest.raises(TimedOut):
            await asyncio.wait_for(
                request.do_request(f"http://127.0.0.1:{port}/sendPhoto", "POST", upload), 10
            )
    finally:
        await request.shutdown()
        for writer in stalled:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_a_proxy_set_in_the_environment_carries_the_calls(
    server: tuple[str, list[dict[str, str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As with httpx: ``HTTP_PROXY`` (here the echo server, which answers any host) is
    where the call goes, unless ``NO_PROXY`` names the host."""
    base, seen = server
    monkeypatch.setenv("HTTP_PROXY", base)
    monkeypatch.setenv("NO_PROXY", "direct.invalid")
    request = BotApiRequest(connect_timeout=1)
    await request.initialize()
    form = RequestData([RequestParameter.from_input("chat_id", -1001)])
    try:
        status, _ = await request.do_request("http://api.telegram.invalid/echo", "POST", form)
        assert status == 200
        with pytest.raises(NetworkError):  # not proxied, and no such host
            await request.do_request("http://direct.invalid/echo", "POST", form)
    finally:
        await request.shutdown()
    assert seen == [{"chat_id": "-1001"}]


async def test_a_server_error_answered_with_a_page_not_json_is_a_network_error_unlogged(
    server: tuple[str, list[dict[str, str]]], caplog: pytest.LogCaptureFixture
) -> None:
    """As python-telegram-bot fails a 5xx that Telegram answers in JSON, without its
    parser's ERROR (the page and a traceback) at every retry."""
    base, _ = server
    caplog.set_level(logging.DEBUG)
    request = BotApiRequest()
    await request.initialize()
    try:
        with pytest.raises(NetworkError) as from_a_proxy:
            await request.post(f"{base}/proxy-page")
        with pytest.raises(NetworkError) as from_telegram:
            await request.post(f"{base}/telegram-error")
    finally:
        await request.shutdown()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert type(from_a_proxy.value) is NetworkError
    assert from_a_proxy.value.message == "Bad Gateway (502)"
    assert type(from_telegram.value) is NetworkError  # python-telegram-bot's own path
    assert from_telegram.value.message == "Bad Gateway"


async def test_an_edit_done_is_answered_true_and_one_refused_as_telegram_said(
    server: tuple[str, list[dict[str, str]]],
) -> None:
    base, _ = server
    request = BotApiRequest()
    async with Bot("1:x", base_url=f"{base}/bot", request=request) as bot:
        assert await bot.edit_message_text("new", chat_id=-1001, message_id=5) is True
        with pytest.raises(BadRequest, match="not modified"):
            await bot.edit_message_reply_markup(chat_id=-1001, message_id=5)
        # A message sent is still read: the bot needs its id.
        sent = await bot.send_message(-1001, "hello")
        assert (sent.message_id, sent.chat.id) == (5, -1001)


# -- the bot's own messages, cut -------------------------------------------------------------

BOT_USER = {"id": 1, "is_bot": True, "first_name": "Niu"}
GROUP_CHAT = {"id": -1001, "type": "supergroup", "title": "Group"}
ANN_USER = {"id": 11, "is_bot": False, "first_name": "Ann"}


def board(message_id: int) -> dict[str, object]:
    return {
        "message_id": message_id,
        "from": BOT_USER,
        "chat": GROUP_CHAT,
        "date": 1_790_000_000,
        "text": "Round 7 · grabbing",
        "entities": [{"type": "bold", "offset": 0, "length": 7}],
        "reply_markup": {"inline_keyboard": [[{"text": "Grab", "callback_data": "7:grab:0"}]]},
    }


def test_a_message_sent_back_is_cut_to_what_the_bot_reads_of_it() -> None:
    payload = json.dumps({"ok": True, "result": board(5)}).encode()

    answer = BotApiRequest.parse_json_payload(payload)

    message = Message.de_json(answer["result"], Bot("1:x"))
    assert message is not None
    assert (message.message_id, message.chat.id, message.from_user) == (
        5,
        -1001,
        User(1, "Niu", is_bot=True),
    )
    assert (message.text, message.entities, message.reply_markup) == (None, (), None)
    assert set(answer["result"]) <= OWN_MESSAGE_FIELDS


def test_a_press_loses_its_boards_text_and_a_users_message_keeps_everything() -> None:
    press = {
        "update_id": 1,
        "callback_query": {
            "id": "9",
            "from": ANN_USER,
            "message": board(5),
            "chat_instance": "1",
            "data": "7:grab:0",
        },
    }
    command = {
        "update_id": 2,
        "message": {
            "message_id": 6,
            "from": ANN_USER,
            "chat": GROUP_CHAT,
            "date": 1_790_000_001,
            "text": "/bet 20",
            "entities": [{"type": "bot_command", "offset": 0, "length": 4}],
            "reply_to_message": board(5),
        },
    }
    payload = json.dumps({"ok": True, "result": [press, command]}).encode()

    pressed, typed = Update.de_list(BotApiRequest.parse_json_payload(payload)["result"], None)

    query = pressed.callback_query
    assert query is not None and query.message is not None
    assert (query.data, query.from_user.id, pressed.effective_chat) == (
        "7:grab:0",
        11,
        Chat(-1001, "supergroup", title="Group"),
    )
    assert query.message.message_id == 5
    assert isinstance(query.message, Message) and query.message.text is None
    assert typed.message is not None and typed.message.text == "/bet 20"
    assert typed.message.entities[0].type == "bot_command"
    replied = typed.message.reply_to_message
    assert replied is not None and replied.text == "Round 7 · grabbing"


def test_answers_that_are_not_messages_are_left_as_they_are() -> None:
    member = {"user": ANN_USER, "status": "member"}
    for result in (True, member, [], [{"update_id": 3, "message": {"text": "no id"}}]):
        payload = json.dumps({"ok": True, "result": result}).encode()
        assert BotApiRequest.parse_json_payload(payload) == {"ok": True, "result": result}


class Heard(Reachability):
    """What the transport told: ``answered`` and ``failed``, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.heard: list[str] = []

    def answered(self) -> None:
        self.heard.append("answered")

    def failed(self) -> None:
        self.heard.append("failed")


async def test_the_transport_tells_of_every_answer_and_every_failure_on_the_way(
    server: tuple[str, list[dict[str, str]]],
) -> None:
    base, _ = server
    heard = Heard()
    request = BotApiRequest(read_timeout=0.2, reachability=heard)
    await request.initialize()
    try:
        await request.do_request(f"{base}/echo", "POST")
        # A refusal, and Telegram's own 5xx in JSON: Telegram answered all the same.
        await request.do_request(f"{base}/bot1:x/editMessageReplyMarkup", "POST")
        await request.do_request(f"{base}/telegram-error", "POST")
        with pytest.raises(NetworkError):
            await request.do_request(f"{base}/proxy-page", "POST")
        with pytest.raises(TimedOut):
            await request.do_request(f"{base}/slow", "POST")
        with pytest.raises(NetworkError):
            await request.do_request("http://127.0.0.1:9/none", "POST")  # nothing listens
    finally:
        await request.shutdown()
    assert heard.heard == ["answered"] * 3 + ["failed"] * 3


def test_a_plain_calls_host_header_names_the_port_only_when_not_the_schemes_own() -> None:
    request = BotApiRequest()
    heads = {
        url: request._target("POST", url, None)
        for url in (
            "https://api.telegram.org/bot1:x/getMe",
            "http://127.0.0.1:8081/bot1:x/getMe",
            "http://[::1]:8081/bot1:x/getMe",
        )
    }
    assert [(origin, head.split("\r\n")[:2]) for origin, head, _ in heads.values()] == [
        (
            ("https", "api.telegram.org", 443),
            ["POST /bot1:x/getMe HTTP/1.1", "Host: api.telegram.org"],
        ),
        (("http", "127.0.0.1", 8081), ["POST /bot1:x/getMe HTTP/1.1", "Host: 127.0.0.1:8081"]),
        (("http", "::1", 8081), ["POST /bot1:x/getMe HTTP/1.1", "Host: [::1]:8081"]),
    ]

"""Transport bench: what one Bot API call costs the bot's event loop, by transport.

    python bench/bench_http.py [--calls 3000] [--in-flight 16] [--parses 1000]

A local aiohttp server answers ``answerCallbackQuery`` as Telegram would (``{"ok": true,
"result": true}``); python-telegram-bot's ``Bot.answer_callback_query`` calls it through
``HTTPXRequest`` (the library's own transport) and through ``BotApiRequest``
(``bot.telegram.http``), ``--in-flight`` calls at a time, and through ``BotApiRequest``
alone, without ``Bot``'s layers (what a lean path for the toasts would save). The floor:
the same HTTP request written and its answer read on plain asyncio streams (one
keep-alive connection per call in flight), no HTTP library at all. Client and server
share the loop, so each figure is CPU of both per call; the server's part is the same in
every row.

It prints the thread's CPU time per call and its ratio to the floor.

Then what parsing Telegram's answers costs: a board edited (``editMessageText``'s answer,
the board as sent back), a batch of Grab presses (``getUpdates``, each press with the
board it was pressed on) and one of ``/bet 20`` messages, parsed as python-telegram-bot
parses them (the JSON, then its objects: ``Message``, ``Update``), whole (``BaseRequest``'s
parser) and cut to what the bot reads of its own messages (``BotApiRequest``'s), and the
updates built by the bot's own ``update_of`` (``bot.telegram.update_objects``) from the
cut answer; the floor, the JSON alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from telegram import Bot, Message, Update
from telegram.request import BaseRequest, HTTPXRequest, RequestData
from telegram.request._requestparameter import RequestParameter

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.telegram.http import BotApiRequest
from bot.telegram.update_objects import update_of

TOKEN = "123456:BENCH-not-a-real-token"


async def serve() -> tuple[web.AppRunner, int]:
    async def answer(request: web.Request) -> web.Response:
        await request.read()
        return web.json_response({"ok": True, "result": True})

    app = web.Application()
    app.router.add_post(f"/bot{TOKEN}/answerCallbackQuery", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]


async def cpu_per_call(
    call: Callable[[int], Awaitable[object]], calls: int, in_flight: int
) -> float:
    await asyncio.gather(*(call(lane) for lane in range(in_flight)))  # connections warm
    lanes = [range(lane, calls, in_flight) for lane in range(in_flight)]

    async def run(lane: int) -> None:
        for _ in lanes[lane]:
            await call(lane)

    started = time.thread_time()
    await asyncio.gather(*(run(lane) for lane in range(in_flight)))
    return (time.thread_time() - started) / calls


async def through_bot(request: BaseRequest, port: int, calls: int, in_flight: int) -> float:
    bot = Bot(TOKEN, base_url=f"http://127.0.0.1:{port}/bot", request=request)
    await request.initialize()
    try:
        return await cpu_per_call(
            lambda lane: bot.answer_callback_query("123", text="Bet 20 placed"), calls, in_flight
        )
    finally:
        await request.shutdown()


async def transport_alone(port: int, calls: int, in_flight: int) -> float:
    """The same call through ``BotApiRequest.post`` (the request, the JSON answer and
    python-telegram-bot's mapping of errors), without ``Bot``'s own layers (its
    parameters' objects, its defaults): what a call would cost the bot without them."""
    request = BotApiRequest(connection_pool_size=in_flight)
    await request.initialize()
    url = f"http://127.0.0.1:{port}/bot{TOKEN}/answerCallbackQuery"
    parameters = {"callback_query_id": "123", "text": "Bet 20 placed"}

    async def call(lane: int) -> object:
        # RequestParameter is python-telegram-bot's own (private) piece of RequestData.
        data = RequestData([RequestParameter(k, v, None) for k, v in parameters.items()])
        return await request.post(url, data)

    try:
        return await cpu_per_call(call, calls, in_flight)
    finally:
        await request.shutdown()


async def floor(port: int, calls: int, in_flight: int) -> float:
    body = b"callback_query_id=123&text=Bet+20+placed"
    head = (
        f"POST /bot{TOKEN}/answerCallbackQuery HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    streams = [await asyncio.open_connection("127.0.0.1", port) for _ in range(in_flight)]

    async def call(lane: int) -> None:
        reader, writer = streams[lane]
        writer.write(head + body)
        await read_answer(reader)

    try:
        return await cpu_per_call(call, calls, in_flight)
    finally:
        for _, writer in streams:
            writer.close()


async def read_answer(reader: asyncio.StreamReader) -> bytes:
    """An HTTP/1.1 answer read off a bare stream: its head, then its body (by its
    ``Content-Length``); the body."""
    length = 0
    while (line := await reader.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return await reader.readexactly(length)


def board_message(message_id: int) -> dict[str, object]:
    """A grabbing board as Telegram sends it back: ten bettors' lines, their names in
    bold, the Grab and Mini App buttons."""
    lines = [f"<b>Player {i}</b> bets 20.00" for i in range(10)]
    text = "Round 123 · grabbing\nDealer <b>Dealer</b>, pool 1,000.00\n" + "\n".join(lines)
    return {
        "message_id": message_id,
        "from": {"id": 123456, "is_bot": True, "first_name": "NiuNiu", "username": "niu_bot"},
        "chat": {"id": -1001000000001, "type": "supergroup", "title": "Bench group"},
        "date": 1_790_000_000,
        "edit_date": 1_790_000_010,
        "text": text.replace("<b>", "").replace("</b>", ""),
        "entities": [{"type": "bold", "offset": 40 + 22 * i, "length": 8} for i in range(11)],
        "reply_markup": {
            "inline_keyboard": [
                [{"text": "🧧 Grab", "callback_data": "123:grab:0"}],
                [{"text": "📱 Open the table", "url": "https://t.me/niu_bot/table?startapp=g1"}],
            ]
        },
    }


def parse_cpu(parse: Callable[[], object], items: int, repeat: int) -> float:
    started = time.thread_time()
    for _ in range(repeat):
        parse()
    return (time.thread_time() - started) / (repeat * items)


def parsing_rows(repeat: int) -> None:
    bot = Bot(TOKEN)
    edit = json.dumps({"ok": True, "result": board_message(7)}).encode()
    presses = [
        {
            "update_id": 1000 + i,
            "callback_query": {
                "id": str(5000 + i),
                "from": {"id": 100 + i, "is_bot": False, "first_name": f"Player {i}"},
                "message": board_message(7),
                "chat_instance": "42",
                "data": "123:grab:0",
            },
        }
        for i in range(10)
    ]
    batch = json.dumps({"ok": True, "result": presses}).encode()
    bets = [
        {
            "update_id": 2000 + i,
            "message": {
                "message_id": 100 + i,
                "from": {"id": 100 + i, "is_bot": False, "first_name": f"Player {i}"},
                "chat": {"id": -1001000000001, "type": "supergroup", "title": "Bench group"},
                "date": 1_790_000_000,
                "text": "/bet 20",
                "entities": [{"type": "bot_command", "offset": 0, "length": 4}],
            },
        }
        for i in range(10)
    ]
    typed = json.dumps({"ok": True, "result": bets}).encode()
    print("parsing Telegram's answers (CPU per item)")

    def updates(data: dict[str, Any]) -> object:
        return Update.de_list(data["result"], bot)

    def built(data: dict[str, Any]) -> object:
        return [update_of(update, bot) for update in data["result"]]

    def edited(data: dict[str, Any]) -> object:
        return Message.de_json(data["result"], bot)

    parse_row("an edited board", edit, 1, edited, repeat=repeat)
    parse_row("a press (getUpdates)", batch, 10, updates, built, repeat=repeat)
    parse_row("a /bet (getUpdates)", typed, 10, updates, built, repeat=repeat)


def parse_row(
    what: str,
    payload: bytes,
    items: int,
    build: Callable[[dict[str, Any]], object],
    built: Callable[[dict[str, Any]], object] | None = None,
    repeat: int = 1000,
) -> None:
    """CPU per item of ``payload`` parsed: the JSON alone (the floor), then as
    python-telegram-bot's objects (``build``) from the answer whole and cut by
    ``BotApiRequest``, and (``built``) from the cut answer by ``update_of``."""
    floor_s = parse_cpu(lambda: json.loads(payload), items, repeat)
    rows = [
        ("whole", lambda: build(BaseRequest.parse_json_payload(payload))),
        ("cut (BotApiRequest)", lambda: build(BotApiRequest.parse_json_payload(payload))),
    ]
    if built is not None:
        rows.append(("cut, update_of", lambda: built(BotApiRequest.parse_json_payload(payload))))
    print(f"  {what:22} JSON alone (floor)   {floor_s * 1e6:6.1f} µs")
    for name, parse in rows:
        seconds = parse_cpu(parse, items, repeat)
        print(f"  {'':22} {name:20} {seconds * 1e6:6.1f} µs   {seconds / floor_s:5.1f}x floor")


async def main_async(args: argparse.Namespace) -> None:
    runner, port = await serve()
    try:
        rows = [("floor (asyncio streams)", await floor(port, args.calls, args.in_flight))]
        for name, transport in (("HTTPXRequest", HTTPXRequest), ("BotApiRequest", BotApiRequest)):
            request = transport(connection_pool_size=args.in_flight)
            seconds = await through_bot(request, port, args.calls, args.in_flight)
            rows.append((f"PTB + {name}", seconds))
        rows.append(
            ("BotApiRequest, no Bot", await transport_alone(port, args.calls, args.in_flight))
        )
    finally:
        await runner.cleanup()
    base = rows[0][1]
    print(f"{args.calls} answerCallbackQuery calls, {args.in_flight} in flight, local server")
    for name, seconds in rows:
        print(f"  {name:26} CPU per call {seconds * 1e3:6.3f} ms   {seconds / base:5.2f}x floor")
    parsing_rows(args.parses)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--in-flight", type=int, default=16)
    parser.add_argument("--parses", type=int, default=1000, help="answers parsed, each kind")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()

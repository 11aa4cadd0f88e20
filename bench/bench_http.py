"""Transport bench: what one Bot API call costs the bot's event loop, by transport.

    python bench/bench_http.py [--calls 3000] [--in-flight 16]

A local aiohttp server answers ``answerCallbackQuery`` as Telegram would (``{"ok": true,
"result": true}``); python-telegram-bot's ``Bot.answer_callback_query`` calls it through
``HTTPXRequest`` (the library's own transport) and through ``AiohttpRequest``
(``bot.telegram.http``), ``--in-flight`` calls at a time. The floor: the same HTTP request
written and its answer read on plain asyncio streams (one keep-alive connection per
call in flight), no HTTP library at all. Client and server share the loop, so each
figure is CPU of both per call; the server's part is the same in every row.

It prints the thread's CPU time per call and its ratio to the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web
from telegram import Bot
from telegram.request import BaseRequest, HTTPXRequest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.telegram.http import AiohttpRequest

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
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        await reader.readexactly(length)

    try:
        return await cpu_per_call(call, calls, in_flight)
    finally:
        for _, writer in streams:
            writer.close()


async def main_async(args: argparse.Namespace) -> None:
    runner, port = await serve()
    try:
        rows = [("floor (asyncio streams)", await floor(port, args.calls, args.in_flight))]
        for name, transport in (("HTTPXRequest", HTTPXRequest), ("AiohttpRequest", AiohttpRequest)):
            request = transport(connection_pool_size=args.in_flight)
            seconds = await through_bot(request, port, args.calls, args.in_flight)
            rows.append((f"PTB + {name}", seconds))
    finally:
        await runner.cleanup()
    base = rows[0][1]
    print(f"{args.calls} answerCallbackQuery calls, {args.in_flight} in flight, local server")
    for name, seconds in rows:
        print(f"  {name:26} CPU per call {seconds * 1e3:6.3f} ms   {seconds / base:5.2f}x floor")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--in-flight", type=int, default=16)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()

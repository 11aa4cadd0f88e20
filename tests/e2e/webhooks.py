"""Webhook delivery for several workers: Telegram's push, and a load balancer in front.

``FakeTelegram`` records ``setWebhook`` but does not push (``bot/fakegram/updates.py``), so
:class:`WebhookPush` plays Telegram's side here: it takes the updates the fake queued and
posts each to one URL until it is answered 200, again after any failure, as Telegram
redelivers an update a webhook did not take. The URL is :class:`RoundRobin`'s, the load
balancer that spreads the posts over the workers and skips one that is down; written by
hand because a test needs one in-process, on the fake's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Sequence
from typing import Any

import aiohttp
from aiohttp import web

from bot.fakegram.server import FakeTelegram
from bot.telegram.webhook import SECRET_HEADER

JsonDict = dict[str, Any]
#: Telegram waits this long for a webhook's answer before it tries the update again.
ANSWER_SECONDS = 30.0
#: Telegram's pause before it posts an update again after a failed post.
RETRY_SECONDS = 0.3


class WebhookPush:
    """Posts the fake's updates to ``url`` while a webhook is set: each chat's in order,
    chats side by side, each update until it is answered 200 (``redelivered`` counts the
    posts that were not)."""

    def __init__(self, fake: FakeTelegram, url: str, secret_token: str) -> None:
        self.fake = fake
        self.url = url
        self.secret_token = secret_token
        self.redelivered = 0
        self.taken = 0
        self.delivered = 0
        self._chats: dict[int, asyncio.Queue[JsonDict]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> WebhookPush:
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=ANSWER_SECONDS))
        self._tasks.append(asyncio.create_task(self._take()))
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._session is not None:
            await self._session.close()

    @property
    def waiting(self) -> int:
        """Updates taken from the fake and not yet answered 200."""
        return self.taken - self.delivered

    async def _take(self) -> None:
        """Move the fake's queued updates to their chat's queue once a webhook is set (the
        fake keeps them meanwhile, as Telegram does)."""
        while True:
            version = self.fake.version
            for update in self.fake.take_webhook_updates():
                self.taken += 1
                self._queue_of(update).put_nowait(update)
            if await self.fake.wait_for_change(version, 1.0) == version:
                # Unchanged: a second went by, or the fake stopped and no longer waits.
                await asyncio.sleep(0.1)

    def _queue_of(self, update: JsonDict) -> asyncio.Queue[JsonDict]:
        body = update.get("message") or update.get("callback_query", {}).get("message") or {}
        chat_id = int(body.get("chat", {}).get("id", 0))
        queue = self._chats.get(chat_id)
        if queue is None:
            queue = self._chats[chat_id] = asyncio.Queue()
            self._tasks.append(asyncio.create_task(self._deliver(queue)))
        return queue

    async def _deliver(self, queue: asyncio.Queue[JsonDict]) -> None:
        while True:
            update = await queue.get()
            while not await self._post(update):
                self.redelivered += 1
                await asyncio.sleep(RETRY_SECONDS)
            self.delivered += 1
            queue.task_done()

    async def _post(self, update: JsonDict) -> bool:
        assert self._session is not None
        try:
            async with self._session.post(
                self.url, json=update, headers={SECRET_HEADER: self.secret_token}
            ) as answer:
                return answer.status == 200
        except (aiohttp.ClientError, TimeoutError):
            return False


class RoundRobin:
    """A load balancer: each request goes to the next worker in turn; a worker that
    refuses the connection is skipped for the next one, and when every worker refuses, or
    one fails after it took the request, the answer is 502 (Telegram tries again)."""

    def __init__(self, workers: Sequence[str]) -> None:
        #: Each worker's base URL, ``http://127.0.0.1:PORT``.
        self.workers = list(workers)
        self.forwarded = [0] * len(self.workers)
        self.skipped = 0
        self._turn = itertools.cycle(range(len(self.workers)))
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> RoundRobin:
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=ANSWER_SECONDS))
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._session is not None
        body = await request.read()
        headers = {
            key: value
            for key, value in request.headers.items()
            if key.lower() in ("content-type", SECRET_HEADER.lower())
        }
        first = next(self._turn)
        for step in range(len(self.workers)):
            index = (first + step) % len(self.workers)
            target = self.workers[index] + request.path_qs
            try:
                async with self._session.request(
                    request.method, target, data=body, headers=headers
                ) as answer:
                    self.forwarded[index] += 1
                    return web.Response(status=answer.status, body=await answer.read())
            except aiohttp.ClientConnectorError:
                self.skipped += 1  # down: nothing reached it, the next one may take it
            except (aiohttp.ClientError, TimeoutError):
                return web.Response(status=502, text="the worker failed")
        return web.Response(status=502, text="no worker is up")

"""Serving updates: long polling that confirms an update only after it was handled.

python-telegram-bot's own poller confirms a batch on its next request, before the
handlers have run, so a crash in between loses those updates. This loop handles updates
(chats concurrently, each chat in order) and confirms an update only once it and every
update before it were handled (``bot.telegram.poll_window``). A crash before that makes
Telegram deliver it again, and the database's record of processed update ids turns
repeats into no-ops.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator
from typing import Any

from telegram import Update
from telegram.error import Conflict, NetworkError, RetryAfter, TelegramError, TimedOut
from telegram.ext import Application

from bot.telegram.observers import ShellObserver, Unobserved
from bot.telegram.poll_window import UPDATES_IN_HAND, PollWindow
from bot.telegram.retries import failure_kind, retry_after_seconds
from bot.telegram.shell import GameBot

log = logging.getLogger(__name__)

ALLOWED_UPDATES = [Update.MESSAGE, Update.CALLBACK_QUERY]
AnyApplication = Application[Any, Any, Any, Any, Any, Any]


#: The longest the poller waits for what it fetched to be handled before it asks for more:
#: a handler stuck on a slow call holds up no other chat's updates for longer. Handling a
#: turn takes far less under load (``bench/bench_real_groups.py``), so this adds no polls.
HELD_UP_SECONDS = 1.0

#: The most one ``getUpdates`` answers with (the Bot API's limit): fetched whole, so that
#: a backlog drains at up to 100 updates per round trip to Telegram.
TELEGRAM_MOST_PER_POLL = 100


async def _pause(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)


async def _delete_webhook(application: AnyApplication) -> None:
    try:
        await application.bot.delete_webhook(drop_pending_updates=False)
    except TelegramError as error:
        log.warning("deleteWebhook failed: %s", error)


async def handle_update(application: AnyApplication, update: Update) -> None:
    """Handle ``update`` through the application's per-chat processor."""
    await application.update_processor.process_update(update, application.process_update(update))


async def handle_batch(application: AnyApplication, updates: list[Update]) -> None:
    """Handle updates through the application's per-chat processor, all of them."""
    await asyncio.gather(*(handle_update(application, update) for update in updates))


async def poll(
    application: AnyApplication,
    stop: asyncio.Event,
    *,
    timeout: float = 10,
    observer: ShellObserver | None = None,
    window: PollWindow | None = None,
) -> None:
    """Long-poll ``getUpdates`` until ``stop`` is set, each update confirmed only once it
    and every update before it were handled; ``observer`` hears of each request and each
    failure. ``window`` holds what is fetched (``UpdatesRequest`` reads it too).

    While a backlog lasts (an answer was full), the next request goes out once fewer than
    ``UPDATES_IN_HAND`` fetched updates wait for their turn: fetching overlaps handling,
    so neither the round trip to Telegram nor a slow update idles the loop. Past the
    backlog, it waits until everything fetched was handled (``HELD_UP_SECONDS`` at most),
    then long-polls."""
    bot = application.bot
    observer = observer or Unobserved()
    window = window if window is not None else PollWindow(UPDATES_IN_HAND)

    backlog = False
    # A webhook left from webhook mode would make every getUpdates fail.
    await _delete_webhook(application)
    while not stop.is_set():
        ready = PollWindow.running_short if backlog else PollWindow.settled
        await window.until(ready, stop, within=HELD_UP_SECONDS)
        if stop.is_set():
            break
        offset = window.confirm()
        room = TELEGRAM_MOST_PER_POLL - len(window)  # the rest of an answer comes again
        if room <= 0:
            backlog = False
            continue
        observer.bot_api_called("getUpdates")
        fetch = asyncio.ensure_future(
            bot.get_updates(
                offset=offset,
                # What is fetched and unconfirmed comes back at once: no long poll then.
                timeout=timeout if not len(window) else 0,
                allowed_updates=ALLOWED_UPDATES,
                limit=TELEGRAM_MOST_PER_POLL,
            )
        )
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait({fetch, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if not fetch.done():
            fetch.cancel()  # stopping: what it would fetch stays unconfirmed, so is not lost
            break
        backlog = False
        if (failure := fetch.exception()) is not None and isinstance(failure, Exception):
            observer.bot_api_failed("getUpdates", failure_kind(failure))
        try:
            updates = fetch.result()
        except RetryAfter as error:
            await _pause(stop, retry_after_seconds(error))
            continue
        except TimedOut:
            continue
        except Conflict as error:
            log.error("getUpdates conflicts (%s); removing any webhook, retrying in 5 s", error)
            await _pause(stop, 5.0)
            await _delete_webhook(application)
            continue
        except NetworkError as error:
            log.warning("getUpdates failed: %s; retrying", error)
            await _pause(stop, 1.0)
            continue
        except TelegramError as error:
            log.error("getUpdates refused: %s; retrying in 5 s", error)
            await _pause(stop, 5.0)
            continue
        backlog = window.take(updates, functools.partial(handle_update, application)) >= room
    # What was fetched is handled whole, then confirmed.
    await window.handled()
    if (offset := window.confirm()) is not None:
        with contextlib.suppress(TelegramError):
            await bot.get_updates(offset=offset, timeout=0, allowed_updates=ALLOWED_UPDATES)


class UpdateIntake:
    """Whether updates are coming in (``/readyz``): the application is running and its
    polling loop is alive, or Telegram was told of the webhook (``webhook_set``)."""

    def __init__(self, application: AnyApplication) -> None:
        self.application = application
        self.poller: asyncio.Task[None] | None = None
        self.webhook_set = False

    def not_receiving(self) -> str | None:
        """Why no updates come in (a short line), or None when they do."""
        if not self.application.running:
            return "the bot is not running"
        if self.poller is not None:
            return "polling has stopped" if self.poller.done() else None
        if not self.webhook_set:
            return "no updates come in: not polling, and no webhook set"
        return None


@contextlib.asynccontextmanager
async def running(
    application: AnyApplication,
    game: GameBot,
    *,
    poll_timeout: float = 10,
    polling: bool = True,
    intake: UpdateIntake | None = None,
) -> AsyncIterator[asyncio.Event]:
    """Run the bot while the block runs: start, recover, poll; then stop cleanly.

    Yields the event that stops polling (set it, or leave the block). ``intake`` is told
    of the polling loop.
    """
    stop = asyncio.Event()
    async with application:
        await application.start()
        await game.start(application)
        poller = (
            asyncio.create_task(
                poll(
                    application,
                    stop,
                    timeout=poll_timeout,
                    observer=game.observer,
                    window=game.poll_window,
                )
            )
            if polling
            else None
        )
        if intake is not None:
            intake.poller = poller
        try:
            yield stop
        finally:
            stop.set()
            if poller is not None:
                await poller
            await game.drain()
            await application.stop()

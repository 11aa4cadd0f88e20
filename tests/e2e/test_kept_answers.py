"""Answers waiting for the group's share of Telegram's limit survive a SIGKILL: they are
kept in the database while they wait, and the restarted bot sends every one of them
once the dead process's claim on them ran out."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from sqlalchemy import func, select

from bot.store.models import KeptAnswer
from tests.e2e.harness import E2E, FAST_GAME, eventually, running_bot, user

pytestmark = pytest.mark.asyncio(loop_scope="module")

GROUP = -1_001_000_000_801
PLAYERS = [user(802 + n, f"Player{n}") for n in range(6)]
#: Replies the group gets a minute: the first players' answers spend them, and the
#: others' wait.
REPLIES_PER_MINUTE = 2
#: The kept answers' claim (bot.service.answers.ANSWER_CLAIM_MS) and a slot of the
#: group's minute, with room for a loaded machine.
PATIENCE = 90.0


@pytest_asyncio.fixture(loop_scope="module")
async def e2e(tmp_path) -> AsyncIterator[E2E]:  # a fresh bot process: it gets killed
    async with running_bot(
        tmp_path, game=FAST_GAME, replies_per_minute=REPLIES_PER_MINUTE
    ) as session:
        yield session


async def kept(e2e: E2E) -> int:
    async with e2e.database.transaction() as session:
        return int((await session.execute(select(func.count()).select_from(KeptAnswer))).scalar())


def answered(e2e: E2E, update: dict[str, Any]) -> bool:
    """Whether a message in the group answers the /balance of ``update``: a reply to it,
    or a line of a combined answer led by its sender's name."""
    if e2e.reply_of(GROUP, update["message"]["message_id"]) is not None:
        return True
    name = update["message"]["from"]["first_name"]
    line = re.compile(rf"(^|\n){re.escape(name)}: ")
    return any(line.search(entry["plain_text"]) for entry in e2e.sends(GROUP))


async def test_answers_waiting_when_the_bot_was_killed_are_all_delivered_after_its_restart(
    e2e: E2E,
) -> None:
    updates = [e2e.say(GROUP, player, "/balance") for player in PLAYERS]
    waiting = len(PLAYERS) - REPLIES_PER_MINUTE
    # The first answers spend the group's minute; the others wait for its next slot,
    # kept in the database meanwhile.
    await eventually(lambda: _at_least(kept(e2e), waiting), what=f"{waiting} answers kept")
    went_out = [answered(e2e, update) for update in updates]
    assert went_out == [True] * REPLIES_PER_MINUTE + [False] * waiting

    await e2e.bot.kill()
    await e2e.bot.start()

    for update in updates:
        await eventually(
            lambda update=update: answered(e2e, update),
            timeout=PATIENCE,
            what=f"the answer to {update['message']['from']['first_name']}",
            on_timeout=e2e.bot.log,
        )
    await eventually(lambda: _none(kept(e2e)), what="kept answers forgotten once sent")
    print(f"kept answers: {waiting} waiting at the SIGKILL, all delivered after the restart")


async def _at_least(count: object, least: int) -> bool:
    return bool(await count >= least)  # type: ignore[operator]


async def _none(count: object) -> bool:
    return bool(await count == 0)  # type: ignore[operator]

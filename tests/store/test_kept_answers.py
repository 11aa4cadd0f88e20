"""Kept answers on both databases: written claimed by their worker, forgotten once sent,
renewed while they wait, and taken over by another worker only once the claim ran out
(and by one worker only)."""

from __future__ import annotations

import asyncio

from bot.service.answers import KeptAnswers, NewAnswer
from bot.store.db import Database
from bot.store.unit_of_work import Store
from tests.helpers.controls import Clock

GROUP = -1001
CLAIM_MS = 10_000


def workers(db: Database, clock: Clock, *, bot_id: int = 0) -> tuple[KeptAnswers, KeptAnswers]:
    """Two workers' kept answers over one database."""
    return (
        KeptAnswers(Store(db, bot_id=bot_id), clock, claim_ms=CLAIM_MS),
        KeptAnswers(Store(db, bot_id=bot_id), clock, claim_ms=CLAIM_MS),
    )


ANSWERS = [
    NewAnswer(GROUP, "Ann", "You have RM5.00", 31),
    NewAnswer(GROUP, "<b>Bob</b>", "Bet placed.", 0),
]


async def test_answers_are_taken_over_only_once_their_claim_ran_out(
    db: Database, clock: Clock
) -> None:
    first, second = workers(db, clock)
    ids = await first.keep(ANSWERS)
    assert len(ids) == 2 and ids == sorted(ids)

    assert await second.take_over() == []  # the first worker holds them
    clock.now_ms += CLAIM_MS - 1
    await first.renew(ids)
    clock.now_ms += CLAIM_MS - 1
    assert await second.take_over() == []  # renewed meanwhile

    clock.now_ms += 2  # the first worker died: its claim ran out
    taken = await second.take_over()

    assert [record.id for record, _ in taken] == ids
    assert [(r.chat_id, r.name, r.text, r.reply_to) for r, _ in taken] == [
        (a.chat_id, a.name, a.text, a.reply_to) for a in ANSWERS
    ]
    assert [waited for _, waited in taken] == [(2 * CLAIM_MS) / 1000] * 2
    assert await first.take_over() == []  # now the second worker's


async def test_answers_sent_are_forgotten(db: Database, clock: Clock) -> None:
    first, second = workers(db, clock)
    ids = await first.keep(ANSWERS)
    await first.sent(ids[:1])

    clock.now_ms += CLAIM_MS
    assert [record.id for record, _ in await second.take_over()] == ids[1:]


async def test_two_workers_taking_over_at_once_share_none(db: Database, clock: Clock) -> None:
    writer, _ = workers(db, clock)
    ids = await writer.keep([NewAnswer(GROUP, "", f"notice {n}", 0) for n in range(20)])
    clock.now_ms += CLAIM_MS
    first, second = workers(db, clock)

    taken = await asyncio.gather(first.take_over(), second.take_over())

    got = [record.id for found in taken for record, _ in found]
    assert sorted(got) == ids  # each answer taken by exactly one of them


async def test_another_bots_answers_are_not_taken_over(db: Database, clock: Clock) -> None:
    mine, _ = workers(db, clock, bot_id=1)
    others, _ = workers(db, clock, bot_id=2)
    await others.keep(ANSWERS)
    clock.now_ms += CLAIM_MS

    assert await mine.take_over() == []
    assert len(await others.take_over()) == 2

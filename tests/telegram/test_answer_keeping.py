"""Answers kept while they wait: written only when they cannot go out at once, forgotten
once Telegram has them, renewed while they wait, and those a dead worker held are sent
by whoever takes them over."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from telegram.error import NetworkError

from bot.service.game import KeptRecord, NewAnswer
from bot.telegram.answers import Answer, AnswerKeeping
from bot.telegram.delivery import ChatOutbox
from bot.telegram.lookups import ChatSettings
from bot.telegram.messenger import Messenger
from bot.telegram.replies import Replies
from tests.helpers.telegram import (
    FAST_RETRIES,
    GROUP,
    FakeBot,
    FakeService,
    SecondsClock,
    eventually,
    message_update,
    person,
)

ANN, BOB = person(11, "Ann"), person(12, "Bob")


class MemoryStore:
    """Kept answers in a dict, as the database keeps them."""

    def __init__(self) -> None:
        self.rows: dict[int, NewAnswer] = {}
        self.renewed: list[list[int]] = []
        #: Each write forgetting rows: the rows it forgot.
        self.forgotten: list[list[int]] = []
        self.unheld: list[KeptRecord] = []
        self.down = False
        #: Cleared to hold writes (a slow database).
        self.writable = asyncio.Event()
        self.writable.set()
        self._next = 1

    async def keep(self, answers: Sequence[NewAnswer]) -> list[int]:
        await self.writable.wait()
        if self.down:
            raise ConnectionRefusedError(111, "the database is down")
        ids = list(range(self._next, self._next + len(answers)))
        self._next += len(answers)
        self.rows.update(zip(ids, answers, strict=True))
        return ids

    async def sent(self, ids: Sequence[int]) -> None:
        self.forgotten.append(list(ids))
        for row_id in ids:
            self.rows.pop(row_id, None)

    async def renew(self, ids: Sequence[int]) -> None:
        self.renewed.append(list(ids))

    async def take_over(self) -> list[tuple[KeptRecord, float]]:
        found, self.unheld = self.unheld, []
        return [(record, 30.0) for record in found]


class KeepingShell:
    """Replies over a fake Bot with a group budget of one reply a minute, keeping
    answers in a ``MemoryStore``."""

    def __init__(self) -> None:
        self.bot = FakeBot()
        self.clock = SecondsClock()
        self.store = MemoryStore()
        messenger = Messenger(retrying=FAST_RETRIES)
        messenger.attach(self.bot)
        self.outbox = ChatOutbox()
        self.keeping = AnswerKeeping(self.store, renew_seconds=3.0, clock=self.clock)
        self.replies = Replies(
            messenger,
            self.outbox,
            ChatSettings(FakeService()),
            per_minute=1,
            clock=self.clock,
            retry_seconds=0.01,
            keeping=self.keeping,
            keep_sending_after=0.05,
        )

    async def settle(self) -> None:
        await self.outbox.drain(5.0)
        await self.keeping.drain(5.0)

    def until_slot_almost_free(self) -> None:
        """Move the clock to a hundredth of a second before the group's next slot (a
        budget's timer set from now on fires soon, in real time, and again)."""
        self.clock.advance(self.replies.budget.wait(GROUP) - 0.01)

    def past_the_slot(self) -> None:
        self.clock.advance(0.02)

    async def spend_the_minute(self) -> None:
        """The group's one reply of the minute goes out, and the clock stands just before
        the next slot."""
        self.replies.reply(message_update(GROUP, ANN, "/balance"), "You have RM5.00")
        await self.settle()
        self.until_slot_almost_free()


@pytest.fixture
def shell() -> KeepingShell:
    return KeepingShell()


async def test_an_answer_that_goes_out_at_once_is_not_kept(shell: KeepingShell) -> None:
    shell.replies.reply(message_update(GROUP, ANN, "/balance"), "You have RM5.00")
    await shell.settle()

    assert shell.bot.texts == ["You have RM5.00"]
    assert shell.store.rows == {} and shell.keeping.held == 0


async def test_an_answer_that_waits_is_kept_and_forgotten_once_sent(shell: KeepingShell) -> None:
    await shell.spend_the_minute()
    shell.replies.reply(message_update(GROUP, BOB, "/balance", message_id=7), "You have RM0.00")
    await asyncio.sleep(0.05)
    await shell.settle()

    (kept,) = shell.store.rows.values()
    assert (kept.chat_id, kept.name, kept.text, kept.reply_to) == (
        GROUP,
        "Bob",
        "You have RM0.00",
        7,
    )
    assert shell.keeping.held == 1
    shell.past_the_slot()
    await eventually(lambda: len(shell.bot.texts) == 2)
    await shell.settle()

    assert shell.bot.texts[1] == "You have RM0.00"
    assert shell.store.rows == {} and shell.keeping.held == 0


async def test_the_claim_on_waiting_answers_is_renewed_every_few_seconds(
    shell: KeepingShell,
) -> None:
    await shell.spend_the_minute()
    shell.replies.reply(message_update(GROUP, BOB, "/balance"), "You have RM0.00")
    await shell.settle()
    assert shell.keeping.held == 1
    shell.keeping._renewed_at = shell.clock()

    await shell.replies.keep_claims()
    assert shell.store.renewed == []  # not yet due
    shell.clock.advance(3.0)
    await shell.replies.keep_claims()
    assert shell.store.renewed == [list(shell.store.rows)]


async def test_an_answer_whose_send_failed_is_kept_until_it_goes_out(shell: KeepingShell) -> None:
    shell.bot.fail_always(NetworkError("connection reset"))
    shell.replies.reply(message_update(GROUP, ANN, "/balance"), "You have RM5.00")
    await eventually(lambda: shell.replies.budget.wait(GROUP) > 0)  # its try took the slot
    shell.until_slot_almost_free()
    await eventually(lambda: bool(shell.store.rows))  # failed on the way: kept

    shell.bot.recover()
    shell.past_the_slot()
    await eventually(lambda: shell.bot.texts == ["You have RM5.00"])
    await shell.settle()
    assert shell.store.rows == {}


async def test_answers_a_dead_worker_kept_are_sent_at_the_groups_next_slot(
    shell: KeepingShell,
) -> None:
    shell.store.unheld = [
        KeptRecord(41, GROUP, "Ann", "You have RM5.00", 31, 0),
        KeptRecord(42, GROUP, "Bob", "Bet placed.", 0, 0),
    ]
    shell.store.rows = {41: NewAnswer(GROUP, "Ann", "x", 31), 42: NewAnswer(GROUP, "Bob", "y", 0)}

    assert await shell.replies.resume_kept() == 2
    await eventually(lambda: shell.bot.texts != [])
    await shell.settle()

    assert shell.bot.texts == ["<b>Ann</b>: You have RM5.00\n<b>Bob</b>: Bet placed."]
    assert shell.store.rows == {}  # forgotten once sent


async def test_with_the_database_down_a_waiting_answer_still_goes_out(shell: KeepingShell) -> None:
    shell.store.down = True
    await shell.spend_the_minute()
    shell.replies.reply(message_update(GROUP, BOB, "/balance", message_id=7), "You have RM0.00")
    await asyncio.sleep(0.05)
    await shell.settle()
    assert shell.store.rows == {}

    shell.past_the_slot()
    await eventually(lambda: len(shell.bot.texts) == 2)
    assert shell.bot.texts[1] == "You have RM0.00"


async def test_an_update_is_confirmed_only_once_its_waiting_answer_is_written(
    shell: KeepingShell,
) -> None:
    await shell.spend_the_minute()
    shell.store.writable.clear()
    shell.replies.reply(message_update(GROUP, BOB, "/balance"), "You have RM0.00")

    written = asyncio.create_task(shell.keeping.written())
    await asyncio.sleep(0.05)
    assert not written.done()  # what the shell awaits before the update counts as handled

    shell.store.writable.set()
    await asyncio.wait_for(written, 1.0)
    assert [row.text for row in shell.store.rows.values()] == ["You have RM0.00"]


async def test_nothing_to_write_confirms_an_update_at_once(shell: KeepingShell) -> None:
    shell.store.writable.clear()  # a write would hang
    await asyncio.wait_for(shell.keeping.written(), 1.0)


async def test_an_update_that_kept_no_answer_waits_for_no_other_updates_write(
    shell: KeepingShell,
) -> None:
    await shell.spend_the_minute()
    shell.store.writable.clear()  # writes hang

    async def bobs_update() -> None:
        shell.replies.reply(message_update(GROUP, BOB, "/balance"), "You have RM0.00")
        await shell.keeping.written()

    bobs = asyncio.create_task(bobs_update())
    await asyncio.sleep(0.05)
    assert not bobs.done()  # his answer's write hangs

    async def a_press_answered_by_a_toast() -> None:
        await shell.keeping.written()

    await asyncio.wait_for(asyncio.create_task(a_press_answered_by_a_toast()), 1.0)
    shell.store.writable.set()
    await asyncio.wait_for(bobs, 1.0)


async def test_answers_done_with_together_are_forgotten_in_one_write(
    shell: KeepingShell,
) -> None:
    kept = [Answer("Ann", f"answer {n}", 0) for n in range(3)]
    for answer in kept:
        shell.keeping.keep(GROUP, answer)
    await shell.settle()
    assert len(shell.store.rows) == 3 and all(a.kept_id is not None for a in kept)

    shell.keeping.done(kept[:1])  # sent in one message ...
    shell.keeping.done(kept[1:])  # ... and the others in another, at once
    await shell.settle()

    assert shell.store.rows == {}
    assert len(shell.store.forgotten) == 1 and sorted(shell.store.forgotten[0]) == [1, 2, 3]


async def test_an_answer_whose_send_is_slow_is_kept_until_telegram_has_it(
    shell: KeepingShell,
) -> None:
    shell.bot.hold()  # Telegram takes its time
    shell.replies.reply(message_update(GROUP, ANN, "/balance"), "You have RM5.00")
    await eventually(lambda: bool(shell.store.rows))
    assert [row.text for row in shell.store.rows.values()] == ["You have RM5.00"]

    shell.bot.release()
    await eventually(lambda: shell.bot.texts == ["You have RM5.00"])
    await shell.settle()
    assert shell.store.rows == {} and shell.keeping.held == 0


async def test_an_update_waits_for_its_own_answers_write_not_for_those_that_come_later(
    shell: KeepingShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    await shell.spend_the_minute()
    keep = shell.store.keep
    first_in, later_go = asyncio.Event(), asyncio.Event()

    async def slow_after_the_first(answers: Sequence[NewAnswer]) -> list[int]:
        if first_in.is_set():
            await later_go.wait()  # later answers' writes hang
        first_in.set()
        await asyncio.sleep(0.02)  # Bob's write takes a moment: Ann's answer comes meanwhile
        return await keep(answers)

    monkeypatch.setattr(shell.store, "keep", slow_after_the_first)
    shell.replies.reply(message_update(GROUP, BOB, "/balance"), "You have RM0.00")
    bobs = asyncio.create_task(shell.keeping.written())
    await first_in.wait()
    shell.replies.reply(message_update(GROUP, ANN, "/balance"), "You have RM5.00")
    annes = asyncio.create_task(shell.keeping.written())

    await asyncio.wait_for(bobs, 1.0)  # written: Ann's write, still hanging, holds it not
    assert not annes.done()
    later_go.set()
    await asyncio.wait_for(annes, 1.0)
    assert sorted(row.text for row in shell.store.rows.values()) == [
        "You have RM0.00",
        "You have RM5.00",
    ]

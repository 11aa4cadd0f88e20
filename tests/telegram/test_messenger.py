"""Messenger: the shell's Bot API calls, what it does when Telegram refuses one, and the
count of messages sent to each group (a send past the group's minute waits for a slot).

The group's window runs on a ``SecondsClock`` the tests move. A send that must wait sleeps
(in real time) for as long as the clock says; the tests put the clock a hundredth of a
second before the slot frees, so that it wakes at once (and sleeps again while the clock
stands still), and move it on to free the slot: what goes out depends on the clock only.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError, TimedOut

from bot.telegram.budget import GROUP_SENDS_PER_MINUTE, Priority, SendBudget
from bot.telegram.messenger import MAX_MESSAGE_LENGTH, MAX_TOAST_LENGTH, Messenger, split_message
from bot.telegram.strays import IDS_LOOKED_AT, StrayCopies
from tests.helpers.telegram import (
    FAST_RETRIES,
    GROUP,
    OTHER_GROUP,
    Deliveries,
    FakeBot,
    SecondsClock,
    eventually,
    spin,
)

BUTTONS = InlineKeyboardMarkup([[InlineKeyboardButton("Bet 1", callback_data="7:bet:100")]])


@pytest.fixture
def bot() -> FakeBot:
    return FakeBot()


@pytest.fixture
def deliveries() -> Deliveries:
    return Deliveries()


@pytest.fixture
def messenger(bot: FakeBot, deliveries: Deliveries) -> Messenger:
    messenger = Messenger(observer=deliveries, retrying=FAST_RETRIES, toast_retrying=FAST_RETRIES)
    messenger.attach(bot)
    return messenger


def long_text(lines: int = 300, width: int = 40) -> str:
    """More than one message's worth: numbered lines of ``width`` characters."""
    return "\n".join(f"{number:04d} " + "x" * (width - 5) for number in range(lines))


# -- send ---------------------------------------------------------------------------------


async def test_a_message_is_sent_as_html_replying_with_its_buttons(
    messenger: Messenger, bot: FakeBot
) -> None:
    message_id = await messenger.send(GROUP, "<b>hi</b>", BUTTONS, reply_to=42)

    (call,) = bot.of("send_message")
    assert call.args["chat_id"] == GROUP
    assert call.args["text"] == "<b>hi</b>"
    assert call.args["parse_mode"] == ParseMode.HTML
    assert call.args["reply_markup"] is BUTTONS
    assert call.args["reply_to_message_id"] == 42
    # A reply to a message deleted meanwhile is still sent.
    assert call.args["allow_sending_without_reply"] is True
    assert message_id == 1


async def test_a_long_message_is_split_with_the_reply_on_the_first_and_buttons_on_the_last(
    messenger: Messenger, bot: FakeBot
) -> None:
    text = long_text()
    assert len(text) > MAX_MESSAGE_LENGTH

    message_id = await messenger.send(GROUP, text, BUTTONS, reply_to=42)

    calls = bot.of("send_message")
    assert len(calls) >= 3
    assert all(len(call.args["text"]) <= MAX_MESSAGE_LENGTH for call in calls)
    # Cut between lines, nothing lost or repeated.
    assert "\n".join(call.args["text"] for call in calls) == text
    assert [call.args["reply_to_message_id"] for call in calls] == [42] + [None] * (len(calls) - 1)
    assert [call.args["reply_markup"] for call in calls] == [None] * (len(calls) - 1) + [BUTTONS]
    assert message_id == 1  # the first message's id


def test_a_line_longer_than_a_message_is_cut_where_it_must_be() -> None:
    text = "short\n" + "y" * 25 + "\nend"

    chunks = split_message(text, limit=10)

    assert chunks == ["short", "y" * 10, "y" * 10, "y" * 5 + "\nend"]
    assert "".join(chunks).replace("\n", "") == text.replace("\n", "")


def test_a_short_message_is_one_message_even_when_empty() -> None:
    assert split_message("a\nb") == ["a\nb"]
    assert split_message("") == [""]


@pytest.mark.parametrize(
    "error", [BadRequest("Chat not found"), Forbidden("bot was kicked from the group chat")]
)
async def test_a_refused_message_is_logged_and_reported_as_none(
    messenger: Messenger, bot: FakeBot, error: TelegramError, caplog: pytest.LogCaptureFixture
) -> None:
    bot.fail_next(error)

    with caplog.at_level(logging.WARNING, logger="bot.telegram.messenger"):
        message_id = await messenger.send(GROUP, "hi")

    assert message_id is None
    assert str(GROUP) in caplog.text and str(error) in caplog.text


async def test_a_long_message_refused_halfway_stops_and_reports_the_first_id(
    messenger: Messenger, bot: FakeBot, caplog: pytest.LogCaptureFixture
) -> None:
    bot.fail_next(BadRequest("Too Many Requests"), "send_message", skip=1)

    with caplog.at_level(logging.WARNING, logger="bot.telegram.messenger"):
        message_id = await messenger.send(GROUP, long_text())

    attempts = [call for call in bot.calls if call.method == "send_message"]
    # The first part went out, the second was refused, and no more was tried.
    assert [call.error is None for call in attempts] == [True, False]
    assert message_id == 1
    assert "Too Many Requests" in caplog.text


FAILURES_ON_THE_WAY = [
    (NetworkError("Bad Gateway"), "network"),
    (NetworkError("connection reset"), "network"),
    (TimedOut(), "timed_out"),
    (RetryAfter(0), "retry_after"),
]


@pytest.mark.parametrize(("error", "failure"), FAILURES_ON_THE_WAY)
async def test_a_message_that_fails_on_the_way_is_tried_again_and_goes_out(
    messenger: Messenger, bot: FakeBot, deliveries: Deliveries, error: TelegramError, failure: str
) -> None:
    bot.fail_next(error)
    bot.fail_next(error)

    message_id = await messenger.send(GROUP, "hi")

    attempts = [call for call in bot.calls if call.method == "send_message"]
    assert [call.error is None for call in attempts] == [False, False, True]
    assert message_id == 1
    assert deliveries.retried == [("answer", failure)] * 2 and deliveries.failed == []
    # It took one slot of the group's minute, however many tries.
    assert messenger.group_sends.room(GROUP) == GROUP_SENDS_PER_MINUTE - 1


@pytest.mark.parametrize(("error", "failure"), FAILURES_ON_THE_WAY[:3])
async def test_a_message_still_failing_when_its_tries_run_out_reaches_the_caller(
    messenger: Messenger,
    bot: FakeBot,
    deliveries: Deliveries,
    error: TelegramError,
    failure: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A board that never reached Telegram must not be recorded as refused: the caller
    # sees the failure and the delivery is tried again later.
    bot.fail_always(error)

    with caplog.at_level(logging.WARNING), pytest.raises(type(error)):
        await messenger.send(GROUP, "hi", priority=Priority.RESULTS, round_id=12)

    assert len(bot.calls) >= 3
    assert deliveries.failed == [("results", failure)]
    assert deliveries.retried == [("results", failure)] * (len(bot.calls) - 1)
    # A line a try, naming the chat and the round, and no traceback.
    assert len(caplog.records) == len(bot.calls)
    assert all(f"chat {GROUP} round 12" in record.getMessage() for record in caplog.records)
    assert all(record.exc_info is None for record in caplog.records)


async def test_a_refusal_is_not_tried_again_and_is_counted(
    messenger: Messenger, bot: FakeBot, deliveries: Deliveries
) -> None:
    bot.fail_next(Forbidden("bot was kicked from the group chat"))

    assert await messenger.send(GROUP, "hi", priority=Priority.PHASE) is None

    assert len(bot.calls) == 1
    assert deliveries.failed == [("phase", "forbidden")] and deliveries.retried == []


async def test_a_board_composed_for_its_send_is_composed_again_for_each_try(
    messenger: Messenger, bot: FakeBot
) -> None:
    bot.fail_next(NetworkError("Bad Gateway"))
    versions = iter(["first", "second"])

    async def compose() -> tuple[str, InlineKeyboardMarkup | None]:
        return next(versions), BUTTONS

    message_id = await messenger.send_composed(GROUP, compose, priority=Priority.PHASE)

    assert bot.texts == ["second"] and message_id == 1


async def test_a_board_whose_composer_says_nothing_is_not_sent(
    messenger: Messenger, bot: FakeBot
) -> None:
    async def compose() -> None:
        return None

    assert await messenger.send_composed(GROUP, compose, priority=Priority.PHASE) is None
    assert bot.calls == []


def test_a_messenger_without_a_bot_says_so() -> None:
    with pytest.raises(RuntimeError, match="no bot"):
        _ = Messenger().bot


# -- edit and delete ----------------------------------------------------------------------


async def test_an_edit_replaces_text_and_buttons_as_html(
    messenger: Messenger, bot: FakeBot
) -> None:
    assert await messenger.edit(GROUP, 5, "<i>new</i>", BUTTONS) is True

    (call,) = bot.of("edit_message_text")
    assert call.args == {
        "text": "<i>new</i>",
        "chat_id": GROUP,
        "message_id": 5,
        "parse_mode": ParseMode.HTML,
        "reply_markup": BUTTONS,
    }


async def test_an_edit_to_the_same_text_counts_as_done(messenger: Messenger, bot: FakeBot) -> None:
    bot.fail_next(
        BadRequest(
            "Message is not modified: specified new message content and reply markup are "
            "exactly the same as a current content and reply markup of the message"
        )
    )

    assert await messenger.edit(GROUP, 5, "same", None) is True


@pytest.mark.parametrize(
    "error",
    [BadRequest("Message to edit not found"), Forbidden("bot was kicked from the group chat")],
)
async def test_a_refused_edit_is_logged_and_reported_as_false(
    messenger: Messenger, bot: FakeBot, error: TelegramError, caplog: pytest.LogCaptureFixture
) -> None:
    bot.fail_next(error)

    with caplog.at_level(logging.WARNING, logger="bot.telegram.messenger"):
        assert await messenger.edit(GROUP, 5, "new", None) is False

    assert str(error) in caplog.text


async def test_a_message_taken_down_is_deleted(messenger: Messenger, bot: FakeBot) -> None:
    assert await messenger.take_down(GROUP, 5) is True

    assert bot.of("delete_message")[0].args == {"chat_id": GROUP, "message_id": 5}
    assert bot.of("edit_message_reply_markup") == []


async def test_a_message_telegram_will_not_delete_loses_its_buttons(
    messenger: Messenger, bot: FakeBot
) -> None:
    bot.fail_next(BadRequest("Message can't be deleted"), "delete_message")

    assert await messenger.take_down(GROUP, 6) is True

    (disarmed,) = bot.of("edit_message_reply_markup")
    assert disarmed.args == {"chat_id": GROUP, "message_id": 6, "reply_markup": None}


async def test_a_message_gone_already_is_taken_down(messenger: Messenger, bot: FakeBot) -> None:
    bot.fail_next(BadRequest("Message to delete not found"), "delete_message")
    bot.fail_next(BadRequest("Message to edit not found"), "edit_message_reply_markup")

    assert await messenger.take_down(GROUP, 6) is True


async def test_a_message_not_taken_down_while_telegram_is_unreachable_says_so(
    messenger: Messenger, bot: FakeBot
) -> None:
    bot.fail_always(NetworkError("Bad Gateway"))

    assert await messenger.take_down(GROUP, 6) is False

    bot.recover()
    assert await messenger.take_down(GROUP, 6) is True


# -- toasts -------------------------------------------------------------------------------


async def test_a_toast_is_plain_text(messenger: Messenger, bot: FakeBot) -> None:
    await messenger.toast("q1", "<b>Bet</b> placed: <code>RM1.00</code> &amp; held &lt;18×&gt;")

    (call,) = bot.of("answer_callback_query")
    assert call.args == {"callback_query_id": "q1", "text": "Bet placed: RM1.00 & held <18×>"}


async def test_a_toast_is_cut_to_what_telegram_shows(messenger: Messenger, bot: FakeBot) -> None:
    # Cut after the markup is gone: an entity or a tag never counts towards the limit.
    await messenger.toast("q1", "<b>" + "&amp;" * (MAX_TOAST_LENGTH + 50) + "</b>")

    (call,) = bot.of("answer_callback_query")
    assert call.args["text"] == "&" * MAX_TOAST_LENGTH


async def test_a_refused_toast_is_logged_not_raised(
    messenger: Messenger, bot: FakeBot, caplog: pytest.LogCaptureFixture
) -> None:
    bot.fail_next(BadRequest("Query is too old and response timeout expired"))

    with caplog.at_level(logging.INFO, logger="bot.telegram.messenger"):
        assert await messenger.toast("q1", "late") is True  # Telegram answered

    assert "Query is too old" in caplog.text
    assert len(bot.calls) == 1  # not tried again


async def test_a_toast_that_fails_on_the_way_is_tried_again(
    messenger: Messenger, bot: FakeBot, deliveries: Deliveries
) -> None:
    bot.fail_next(NetworkError("connection reset"))

    assert await messenger.toast("q1", "Bet placed") is True

    assert len(bot.of("answer_callback_query")) == 1
    assert deliveries.retried == [("toast", "network")]


async def test_a_toast_still_failing_when_its_tries_run_out_says_so(
    messenger: Messenger, bot: FakeBot, deliveries: Deliveries
) -> None:
    bot.fail_always(TimedOut())

    assert await messenger.toast("q1", "Bet placed") is False

    assert len(bot.calls) >= 2 and deliveries.failed == [("toast", "timed_out")]


async def test_an_edit_that_fails_on_the_way_is_tried_again(
    messenger: Messenger, bot: FakeBot
) -> None:
    bot.fail_next(NetworkError("Bad Gateway"))

    assert await messenger.edit(GROUP, 5, "new", None) is True

    assert [call.args["text"] for call in bot.of("edit_message_text")] == ["new"]


async def test_a_delete_that_fails_on_the_way_is_tried_again(
    messenger: Messenger, bot: FakeBot
) -> None:
    bot.fail_next(TimedOut())

    assert await messenger.take_down(GROUP, 5) is True
    assert len(bot.of("delete_message")) == 1
    assert bot.of("edit_message_reply_markup") == []


# -- the group's minute -------------------------------------------------------------------

PRIVATE = 11  # a user's private chat with the bot


class Counted:
    """A messenger over a fake Bot whose groups may be sent ``limit`` messages a minute,
    counted on a clock the test moves."""

    def __init__(self, limit: int) -> None:
        self.bot = FakeBot()
        self.clock = SecondsClock()
        self.messenger = Messenger(SendBudget(limit, 60.0, clock=self.clock))
        self.messenger.attach(self.bot)

    @property
    def sends(self) -> SendBudget:
        return self.messenger.group_sends

    async def fill(self, chat_id: int = GROUP) -> None:
        """Use up the chat's minute: one send per slot, ten seconds apart."""
        for number in range(self.sends.limit):
            if number:
                self.clock.advance(10)
            await self.messenger.send(chat_id, f"filler {number}")

    def until_slot_almost_free(self) -> None:
        """Move the clock to a hundredth of a second before the oldest send to ``GROUP``
        leaves the window (a send waiting for it wakes soon, in real time)."""
        self.clock.advance(self.sends.wait(GROUP) - 0.01)

    def past_the_slot(self) -> None:
        """Move the clock just past the moment the oldest send leaves the window."""
        self.clock.advance(0.02)


@pytest.fixture
def counted() -> Counted:
    return Counted(limit=2)


def test_the_messenger_counts_with_the_budget_it_is_given() -> None:
    # A budget that counts no chat yet is empty (falsy): it must still be the one used.
    budget = SendBudget(2, 60.0, clock=SecondsClock())

    assert Messenger(budget).group_sends is budget


def test_a_group_may_be_sent_telegrams_20_messages_a_minute_by_default() -> None:
    sends = Messenger().group_sends

    assert (sends.limit, sends.seconds) == (GROUP_SENDS_PER_MINUTE, 60.0)
    assert GROUP_SENDS_PER_MINUTE == 20


async def test_every_message_sent_to_a_group_counts_against_its_minute(counted: Counted) -> None:
    assert counted.sends.room(GROUP) == 2

    await counted.messenger.send(GROUP, "one")
    assert counted.sends.room(GROUP) == 1
    counted.clock.advance(10)
    await counted.messenger.send(GROUP, "two")

    assert counted.sends.room(GROUP) == 0
    assert counted.sends.wait(GROUP) == 50.0  # "one" leaves the window at 60 s


async def test_each_part_of_a_long_message_counts_as_a_message() -> None:
    counted = Counted(limit=10)

    await counted.messenger.send(GROUP, long_text())

    parts = len(counted.bot.texts)
    assert parts >= 3
    assert counted.sends.room(GROUP) == 10 - parts


async def test_a_send_past_the_groups_minute_waits_for_a_slot_then_goes_out(
    counted: Counted,
) -> None:
    await counted.fill()
    counted.until_slot_almost_free()

    sending = asyncio.create_task(counted.messenger.send(GROUP, "third", reply_to=5))
    # It wakes (and waits again) while the clock stands still: no slot, nothing sent.
    await asyncio.sleep(0.05)
    assert counted.bot.texts == ["filler 0", "filler 1"]
    assert not sending.done()

    counted.past_the_slot()  # "filler 0" leaves the window
    await eventually(sending.done)

    assert sending.result() == 3
    assert counted.bot.texts == ["filler 0", "filler 1", "third"]
    assert counted.bot.of("send_message")[2].args["reply_to_message_id"] == 5
    assert counted.sends.room(GROUP) == 0  # "filler 1" and "third" in the window


async def test_a_freed_slot_lets_one_waiting_send_through_not_every_one(counted: Counted) -> None:
    await counted.fill()
    counted.until_slot_almost_free()
    first = asyncio.create_task(counted.messenger.send(GROUP, "waiting A"))
    second = asyncio.create_task(counted.messenger.send(GROUP, "waiting B"))
    await asyncio.sleep(0.05)

    counted.past_the_slot()  # one slot frees; the next frees ten seconds later
    await eventually(lambda: first.done() or second.done())
    await asyncio.sleep(0.05)

    assert len(counted.bot.texts) == 3
    assert [first.done(), second.done()].count(True) == 1
    assert counted.sends.room(GROUP) == 0
    for task in (first, second):
        task.cancel()
    await asyncio.gather(first, second, return_exceptions=True)


async def test_a_full_group_holds_up_neither_private_chats_nor_other_groups(
    counted: Counted,
) -> None:
    await counted.fill()

    # More than the limit to a private chat, and one to another group: none waits.
    sending = [counted.messenger.send(PRIVATE, f"private {n}") for n in range(3)]
    sending.append(counted.messenger.send(OTHER_GROUP, "other group"))
    tasks = [asyncio.create_task(send) for send in sending]
    await eventually(lambda: all(task.done() for task in tasks))

    assert counted.bot.texts[2:] == ["private 0", "private 1", "private 2", "other group"]
    assert counted.sends.room(PRIVATE) == 2  # a private chat is not counted at all
    assert counted.sends.room(OTHER_GROUP) == 1
    assert counted.sends.room(GROUP) == 0


async def test_edits_deletes_and_toasts_do_not_count_against_the_groups_minute() -> None:
    counted = Counted(limit=10)  # room for all of them: a miscount shows, nothing waits
    await counted.messenger.send(GROUP, "board")

    await counted.messenger.edit(GROUP, 1, "board, edited", None)
    await counted.messenger.edit(GROUP, 1, "board, edited again", None)
    await counted.messenger.take_down(GROUP, 1)
    await counted.messenger.toast("q1", "Bet placed.")
    await spin()

    assert counted.sends.room(GROUP) == 9
    assert [call.method for call in counted.bot.calls] == [
        "send_message",
        "edit_message_text",
        "edit_message_text",
        "delete_message",
        "answer_callback_query",
    ]


# -- the count every worker shares --------------------------------------------------------


class Shared:
    """A shared count whose answers the test sets: waits to give, in order, then 0."""

    def __init__(self, waits: list[float] | None = None, *, down: bool = False) -> None:
        self.waits = list(waits or [])
        self.down = down
        self.asked: list[int] = []
        self.delivered_at: list[int] = []

    async def take(self, chat_id: int) -> tuple[float, int]:
        self.asked.append(chat_id)
        if self.down:
            raise ConnectionRefusedError(111, "the database is down")
        wait = self.waits.pop(0) if self.waits else 0.0
        return (wait, 0) if wait else (0.0, 1_000)

    async def delivered(self, chat_id: int, taken_ms: int) -> None:
        self.delivered_at.append(taken_ms)


async def test_a_group_message_waits_for_the_count_every_worker_shares(bot: FakeBot) -> None:
    shared = Shared([0.05, 0.05])  # another worker spent the group's minute
    messenger = Messenger(shared_sends=shared, retrying=FAST_RETRIES)
    messenger.attach(bot)

    assert await messenger.send(GROUP, "hi") == 1

    assert shared.asked == [GROUP] * 3  # asked again after each wait, then took one
    assert shared.delivered_at == [1_000]  # and told when it reached the group
    assert messenger.group_sends.room(GROUP) == GROUP_SENDS_PER_MINUTE - 1


async def test_a_private_message_asks_no_shared_count(bot: FakeBot) -> None:
    shared = Shared()
    messenger = Messenger(shared_sends=shared)
    messenger.attach(bot)

    await messenger.send(11, "hi")

    assert shared.asked == [] and bot.texts == ["hi"]


async def test_with_the_shared_count_down_the_processes_own_count_holds(
    bot: FakeBot, caplog: pytest.LogCaptureFixture
) -> None:
    messenger = Messenger(shared_sends=Shared(down=True))
    messenger.attach(bot)

    with caplog.at_level(logging.WARNING, logger="bot.telegram.messenger"):
        await messenger.send(GROUP, "one")
        await messenger.send(GROUP, "two")

    assert bot.texts == ["one", "two"]
    # Said once, not at every message.
    assert caplog.text.count("shared send count is unavailable") == 1


# -- copies a lost answer left -------------------------------------------------------------


class LosesAnswers(FakeBot):
    """A Bot whose next ``lose`` sends are taken by Telegram, their answers lost."""

    def __init__(self) -> None:
        super().__init__()
        self.lose = 0

    async def send_message(self, *args: Any, **kwargs: Any) -> Any:
        sent = await super().send_message(*args, **kwargs)
        if self.lose:
            self.lose -= 1
            raise TimedOut()
        return sent


async def test_a_board_whose_answer_was_lost_has_its_copy_disarmed(deliveries: Deliveries) -> None:
    bot = LosesAnswers()
    messenger = Messenger(observer=deliveries, retrying=FAST_RETRIES)
    messenger.attach(bot)
    await messenger.send(GROUP, "an answer")  # message 1: the newest the bot knows of

    bot.lose = 1  # Telegram takes the board (message 2) but its answer is lost

    async def board() -> tuple[str, InlineKeyboardMarkup | None]:
        return "board", BUTTONS

    message_id = await messenger.send_composed(GROUP, board, priority=Priority.PHASE)
    await eventually(lambda: bool(bot.of("edit_message_reply_markup")))

    assert message_id == 3  # the try again went through
    (disarm,) = bot.of("edit_message_reply_markup")
    assert disarm.args == {"chat_id": GROUP, "message_id": 2, "reply_markup": None}


async def test_a_board_sent_at_once_disarms_nothing(bot: FakeBot, messenger: Messenger) -> None:
    await messenger.send(GROUP, "an answer")

    async def board() -> tuple[str, InlineKeyboardMarkup | None]:
        return "board", BUTTONS

    await messenger.send_composed(GROUP, board, priority=Priority.PHASE)
    await spin()

    assert bot.of("edit_message_reply_markup") == []


async def test_a_copy_left_by_tries_that_gave_up_is_disarmed_by_the_next_message(
    deliveries: Deliveries,
) -> None:
    bot = LosesAnswers()
    messenger = Messenger(observer=deliveries, retrying=FAST_RETRIES)
    messenger.attach(bot)
    await messenger.send(GROUP, "an answer")  # message 1
    bot.lose = 100  # every try's answer is lost (Telegram took messages 2, 3, …)

    async def board() -> tuple[str, InlineKeyboardMarkup | None]:
        return "board", BUTTONS

    with pytest.raises(TimedOut):
        await messenger.send_composed(GROUP, board, priority=Priority.PHASE)
    copies = len(bot.of("send_message")) - 1
    bot.lose = 0
    sent = await messenger.send(GROUP, "the next message")
    await eventually(lambda: len(bot.of("edit_message_reply_markup")) == copies)

    assert sent == copies + 2
    disarmed = sorted(call.args["message_id"] for call in bot.of("edit_message_reply_markup"))
    assert disarmed == list(range(2, copies + 2))


async def test_a_copy_is_looked_for_right_after_the_newest_message_the_bot_knew_of() -> None:
    """After an outage the next message that goes through comes after many of the
    players': the copy is among the first ids after the newest one the bot had seen."""
    bot = FakeBot()

    async def no_wait() -> None:
        pass

    strays = StrayCopies(lambda: bot, no_wait)
    strays.sent(GROUP, 7)  # the bot's last message before
    strays.saw(GROUP, 12)  # a player's, which the bot received
    strays.lost(GROUP, strays.newest(GROUP))  # a board's answer lost: its copy is 13 or so
    strays.sent(GROUP, 60)  # the next that went through, after 40-odd players' messages
    await eventually(lambda: len(bot.of("edit_message_reply_markup")) == IDS_LOOKED_AT)

    disarmed = [call.args["message_id"] for call in bot.of("edit_message_reply_markup")]
    assert disarmed == list(range(13, 13 + IDS_LOOKED_AT))


async def test_taking_the_buttons_off_a_copy_is_tried_again_when_it_fails_on_the_way() -> None:
    bot = FakeBot()

    async def no_wait() -> None:
        pass

    strays = StrayCopies(lambda: bot, no_wait, retrying=FAST_RETRIES)
    bot.fail_next(NetworkError("Bad Gateway"), "edit_message_reply_markup")
    strays.sent(GROUP, 4)
    strays.lost(GROUP, 4)
    strays.sent(GROUP, 6)  # the copy is 5
    await eventually(lambda: bool(bot.of("edit_message_reply_markup")))

    (disarmed,) = bot.of("edit_message_reply_markup")  # the try that went through
    assert disarmed.args["message_id"] == 5
    assert len([c for c in bot.calls if c.method == "edit_message_reply_markup"]) == 2

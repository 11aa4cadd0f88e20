"""Replies when Telegram misbehaves: an answer leaves its queue only once Telegram has it.

A send that fails on the way (after the messenger's tries, which are quick here) puts its
answers back at the front of the group's queue, whole; a toast Telegram does not take in
time goes to the chat instead; an answer that could not go out for too long is given up
and counted.
"""

from __future__ import annotations

import pytest
from telegram.error import BadRequest, NetworkError, TimedOut

from bot.telegram.answers import Answer, batches
from bot.telegram.messenger import MAX_MESSAGE_LENGTH
from bot.telegram.replies import ANSWER_GIVE_UP_SECONDS
from tests.helpers.telegram import GROUP, button_update, eventually, message_update, person
from tests.helpers.telegram_shells import RepliesShell

ANN, BOB, CAT = person(11, "Ann"), person(12, "Bob"), person(13, "Cat")
PRIVATE = ANN.id  # Ann's private chat with the bot


@pytest.fixture
def shell() -> RepliesShell:
    return RepliesShell(per_minute=5)


async def test_an_answer_whose_send_fails_on_the_way_goes_out_once_telegram_is_back(
    shell: RepliesShell,
) -> None:
    shell.bot.fail_always(NetworkError("Bad Gateway"))
    shell.replies.reply(message_update(GROUP, ANN, "/balance", message_id=31), "You have RM5.00")
    await eventually(lambda: ("answer", "network") in shell.deliveries.failed)
    assert shell.replies.waiting == 1  # kept, not lost

    shell.bot.recover()
    await eventually(lambda: shell.replies.waiting == 0)
    await shell.settle()

    (call,) = shell.bot.of("send_message")
    assert call.args["text"] == "You have RM5.00"
    assert call.args["reply_to_message_id"] == 31


async def test_a_combined_answer_that_failed_goes_out_whole_before_later_answers(
    shell: RepliesShell,
) -> None:
    shell.bot.fail_always(TimedOut())
    shell.replies.reply(message_update(GROUP, ANN, "/bet 5"), "Bet placed.")
    shell.replies.reply(message_update(GROUP, BOB, "/bet 9"), "Not enough chips.")
    await eventually(lambda: shell.deliveries.failed != [])

    shell.bot.recover()
    shell.replies.reply(message_update(GROUP, CAT, "/grab"), "Nothing to grab.")
    await eventually(lambda: shell.replies.waiting == 0)
    await shell.settle()

    lines = [line for text in shell.bot.texts for line in text.splitlines()]
    assert lines == [
        "<b>Ann</b>: Bet placed.",
        "<b>Bob</b>: Not enough chips.",
        "<b>Cat</b>: Nothing to grab.",
    ]


async def test_answers_longer_than_a_message_go_out_in_messages_of_whole_answers(
    shell: RepliesShell,
) -> None:
    text = "x" * 900
    for number in range(10):  # 10 × 900 characters: three messages' worth
        shell.replies.reply(message_update(GROUP, person(100 + number, f"P{number}"), "/b"), text)
    await eventually(lambda: shell.replies.waiting == 0)
    await shell.settle()

    sent = shell.bot.texts
    assert len(sent) == 3
    assert all(len(message) <= MAX_MESSAGE_LENGTH for message in sent)
    lines = [line for message in sent for line in message.splitlines()]
    assert lines == [f"<b>P{number}</b>: {text}" for number in range(10)]


def test_batches_keep_each_answer_whole_and_in_order() -> None:
    answers = [Answer(f"n{number}", "y" * 1500, 0) for number in range(5)]

    found = batches(answers)

    assert [len(batch) for batch in found] == [2, 2, 1]
    assert [answer for batch in found for answer in batch] == answers
    assert all(len("\n".join(a.line for a in batch)) <= MAX_MESSAGE_LENGTH for batch in found)


async def test_a_toast_telegram_does_not_take_in_time_is_answered_in_the_group(
    shell: RepliesShell,
) -> None:
    shell.bot.fail_always(NetworkError("connection reset"), "answer_callback_query")

    shell.replies.reply(button_update(GROUP, BOB, "7:bet:100"), "<b>Bet</b> placed.")
    await eventually(lambda: shell.bot.texts != [])
    await shell.settle()

    # Not a reply to anything: led by whom it answers.
    assert shell.bot.texts == ["<b>Bob</b>: <b>Bet</b> placed."]
    assert shell.bot.of("answer_callback_query") == []


async def test_a_toast_that_cannot_reach_telegram_is_answered_in_a_private_chat(
    shell: RepliesShell,
) -> None:
    shell.bot.fail_always(TimedOut(), "answer_callback_query")

    shell.replies.reply(button_update(PRIVATE, ANN, "7:seed"), "Your seed is kept.")
    await eventually(lambda: shell.bot.texts != [])
    await shell.settle()

    (call,) = shell.bot.of("send_message")
    assert call.args["chat_id"] == PRIVATE and call.args["text"] == "Your seed is kept."


async def test_a_toast_telegram_refused_is_not_repeated_in_the_group(
    shell: RepliesShell,
) -> None:
    # Too old, or answered before (a restarted bot gets the press again): Telegram said no.
    shell.bot.fail_next(BadRequest("Query is too old and response timeout expired"))

    shell.replies.reply(button_update(GROUP, BOB, "7:bet:100"), "That round is over.")
    await shell.settle()

    assert shell.bot.texts == [] and shell.replies.waiting == 0


async def test_an_answer_failing_for_too_long_is_given_up_and_counted(
    shell: RepliesShell,
) -> None:
    shell.bot.fail_always(NetworkError("Bad Gateway"))
    shell.replies.reply(message_update(GROUP, ANN, "/balance"), "You have RM5.00")
    await eventually(lambda: shell.deliveries.failed != [])

    shell.clock.advance(ANSWER_GIVE_UP_SECONDS + 1)
    await eventually(lambda: ("answer", "too_old") in shell.deliveries.failed)
    await shell.settle()

    assert shell.replies.waiting == 0
    shell.bot.recover()
    assert shell.bot.texts == []

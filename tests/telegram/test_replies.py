"""SendBudget and Replies: answers within a group's per-minute budget, combined when
several wait, never dropped; private chats at once; a button's answer as a toast.

Time is a ``SecondsClock`` the tests move. A reply that must wait for a slot is timed
with the event loop for as long as the clock says; the tests put the clock a hundredth
of a second before the slot frees, so that the timer fires at once (and again, while the
clock stands still), and move it on to free the slot: what goes out depends on the clock
only.
"""

from __future__ import annotations

import asyncio

import pytest

from bot.engine.errors import GameError
from bot.engine.settings import Settings
from bot.telegram.budget import Priority, SendBudget, SendRate
from bot.telegram.i18n import translate
from bot.telegram.replies import CONFIRM_WITHIN_SECONDS
from tests.helpers.telegram import (
    GROUP,
    OTHER_GROUP,
    SecondsClock,
    button_update,
    eventually,
    message_update,
    person,
)
from tests.helpers.telegram_shells import RepliesShell

ANN, BOB, CAT, DAN = person(11, "Ann"), person(12, "Bob"), person(13, "Cat"), person(14, "Dan")
PRIVATE = 11  # Ann's private chat with the bot


@pytest.fixture
def shell() -> RepliesShell:
    return RepliesShell(per_minute=2)


# -- SendBudget ---------------------------------------------------------------------------


def test_a_chat_sends_its_limit_in_a_window_then_waits_for_the_oldest_send_to_leave_it() -> None:
    clock = SecondsClock(start=0.0)
    budget = SendBudget(2, 60.0, clock=clock)

    assert budget.wait(GROUP) == 0.0
    budget.take(GROUP)
    clock.advance(10)
    assert budget.wait(GROUP) == 0.0
    budget.take(GROUP)
    assert budget.wait(GROUP) == 50.0  # the send at 0 leaves the window at 60

    clock.advance(50)
    assert budget.wait(GROUP) == 0.0
    budget.take(GROUP)
    assert budget.wait(GROUP) == 10.0  # now the send at 10 is the oldest


def test_each_chat_has_its_own_budget() -> None:
    clock = SecondsClock(start=0.0)
    budget = SendBudget(1, 60.0, clock=clock)

    budget.take(GROUP)

    assert budget.wait(GROUP) == 60.0
    assert budget.wait(OTHER_GROUP) == 0.0


def test_a_chat_quiet_for_a_whole_window_is_forgotten() -> None:
    clock = SecondsClock(start=0.0)
    budget = SendBudget(5, 60.0, clock=clock)
    budget.take(GROUP)
    assert len(budget) == 1

    clock.advance(61)
    budget.take(OTHER_GROUP)

    assert len(budget) == 1  # OTHER_GROUP's only
    assert budget.wait(GROUP) == 0.0


def test_room_is_how_many_more_a_chat_may_be_sent_now() -> None:
    clock = SecondsClock(start=0.0)
    budget = SendBudget(3, 60.0, clock=clock)
    assert budget.room(GROUP) == 3

    budget.take(GROUP)
    clock.advance(10)
    budget.take(GROUP)
    assert budget.room(GROUP) == 1
    budget.take(GROUP)
    assert budget.room(GROUP) == 0
    assert budget.room(OTHER_GROUP) == 3

    clock.advance(50)  # the send at 0 leaves the window
    assert budget.room(GROUP) == 1
    clock.advance(60)  # and every other one
    assert budget.room(GROUP) == 3


# -- replies in a group -------------------------------------------------------------------


async def test_a_reply_in_a_group_answers_the_command(shell: RepliesShell) -> None:
    shell.replies.reply(message_update(GROUP, ANN, "/balance", message_id=31), "You have RM5.00")
    await shell.settle()

    (call,) = shell.bot.of("send_message")
    assert call.args["chat_id"] == GROUP
    assert call.args["text"] == "You have RM5.00"
    assert call.args["reply_to_message_id"] == 31
    assert len(shell.replies.budget) == 1  # it took a slot


async def test_answers_waiting_together_go_out_as_one_message_a_line_per_person(
    shell: RepliesShell,
) -> None:
    shell.replies.reply(message_update(GROUP, ANN, "/bet 5"), "Bet placed.")
    shell.replies.reply(message_update(GROUP, BOB, "/bet 9"), "Not enough chips.")
    await shell.settle()

    assert shell.bot.texts == ["<b>Ann</b>: Bet placed.\n<b>Bob</b>: Not enough chips."]
    assert shell.replies.budget.wait(GROUP) == 0.0  # one slot of two used


async def test_names_in_a_combined_answer_are_html_escaped(shell: RepliesShell) -> None:
    mallory = person(66, '<a href="x">Mal</a> & co')
    shell.replies.reply(message_update(GROUP, mallory, "/bet 5"), "Bet placed.")
    shell.replies.reply(message_update(GROUP, ANN, "/bet 5"), "Bet placed.")
    await shell.settle()

    (text,) = shell.bot.texts
    assert text.splitlines()[0] == (
        "<b>&lt;a href=&quot;x&quot;&gt;Mal&lt;/a&gt; &amp; co</b>: Bet placed."
    )


async def test_replies_past_the_budget_are_never_dropped_they_go_out_combined_when_a_slot_frees(
    shell: RepliesShell,
) -> None:
    await shell.spend_budget()
    assert len(shell.bot.texts) == 2
    shell.until_slot_almost_free()

    shell.replies.reply(message_update(GROUP, BOB, "/bet 5"), "Bet placed.")
    shell.replies.reply(message_update(GROUP, CAT, "/bet 6"), "Bet changed.")
    shell.replies.reply(message_update(GROUP, DAN, "/grab"), "Nothing to grab.")
    # The budget's timer fires (and fires again) while the clock stands still: no slot.
    await asyncio.sleep(0.05)
    await shell.settle()
    assert len(shell.bot.texts) == 2
    assert shell.replies.waiting == 3

    shell.past_the_slot()  # the oldest send leaves the window
    await eventually(lambda: len(shell.bot.texts) == 3)
    await shell.settle()

    assert shell.bot.texts[2] == (
        "<b>Bob</b>: Bet placed.\n<b>Cat</b>: Bet changed.\n<b>Dan</b>: Nothing to grab."
    )
    assert shell.replies.waiting == 0
    assert len(shell.bot.texts) == 3  # one slot, one message


async def test_a_fired_budget_timer_is_not_kept(shell: RepliesShell) -> None:
    # Timers are kept only to be cancelled when stopping: one that fired must go, or a
    # long-running bot keeps one more for every wait of every group.
    await shell.spend_budget()
    shell.until_slot_almost_free()
    shell.replies.reply(message_update(GROUP, BOB, "/bet 5"), "Bet placed.")
    await asyncio.sleep(0.05)  # it fires and waits again: one timer at a time
    shell.past_the_slot()
    await eventually(lambda: shell.replies.waiting == 0)
    await shell.settle()

    assert len(shell.replies._timers) == 0


async def test_a_private_reply_bypasses_the_group_budget(shell: RepliesShell) -> None:
    for number in range(3):  # more than the budget of 2, at once
        update = message_update(PRIVATE, ANN, "/balance", message_id=number + 1)
        shell.replies.reply(update, f"answer {number}")
    await shell.settle()

    calls = shell.bot.of("send_message")
    assert [call.args["text"] for call in calls] == ["answer 0", "answer 1", "answer 2"]
    assert [call.args["reply_to_message_id"] for call in calls] == [1, 2, 3]
    assert len(shell.replies.budget) == 0


async def test_a_button_answer_is_a_plain_text_toast_that_costs_the_group_nothing(
    shell: RepliesShell,
) -> None:
    await shell.spend_budget()

    shell.replies.reply(button_update(GROUP, BOB, "7:bet:100"), "<b>Bet</b> placed &amp; held")
    await shell.settle()

    (toast,) = shell.bot.of("answer_callback_query")
    assert toast.args["text"] == "Bet placed & held"
    assert len(shell.bot.texts) == 2  # no message
    assert shell.replies.waiting == 0


async def test_a_toast_does_not_wait_behind_the_chats_messages(shell: RepliesShell) -> None:
    shell.bot.hold()  # Telegram is slow to take the group's message
    shell.replies.reply(message_update(GROUP, ANN, "/balance"), "You have RM5.00")
    await asyncio.sleep(0)

    shell.replies.reply(button_update(GROUP, BOB, "7:bet:100"), "Bet placed.")
    await eventually(lambda: len(shell.bot.of("answer_callback_query")) == 1)

    assert shell.bot.texts == []
    shell.bot.release()
    await shell.settle()
    assert shell.bot.texts == ["You have RM5.00"]


async def test_an_error_is_explained_in_the_groups_language_with_its_text_escaped(
    shell: RepliesShell,
) -> None:
    shell.service.chat_settings[GROUP] = Settings(language="zh")

    await shell.replies.reply_error(
        message_update(GROUP, ANN, "/credit @<b>x</b> 5"),
        GameError("unknown_user", who="@<b>x</b>"),
    )
    await shell.settle()

    assert shell.bot.texts == [translate("zh", "error.unknown_user", who="@&lt;b&gt;x&lt;/b&gt;")]


# -- stake confirmations ------------------------------------------------------------------


async def test_a_stake_is_confirmed_by_a_reply_while_the_group_has_a_slot_now(
    shell: RepliesShell,
) -> None:
    shell.replies.confirm(message_update(GROUP, ANN, "/bet 5", message_id=31), "Bet placed.")
    await shell.settle()
    shell.replies.confirm(message_update(GROUP, BOB, "/bet 6", message_id=32), "Bet placed.")
    await shell.settle()
    # The two confirmations took the group's two slots: the third has none.
    shell.replies.confirm(message_update(GROUP, CAT, "/bet 7", message_id=33), "Bet placed.")
    await shell.settle()

    calls = shell.bot.of("send_message")
    assert [call.args["reply_to_message_id"] for call in calls] == [31, 32]
    assert shell.bot.texts == ["Bet placed.", "Bet placed."]
    assert shell.replies.budget.room(GROUP) == 0


async def test_a_stake_confirmation_without_a_slot_now_is_left_to_the_board(
    shell: RepliesShell,
) -> None:
    await shell.spend_budget()

    shell.replies.confirm(message_update(GROUP, BOB, "/bet 5"), "Bet placed.")

    # It does not wait for a slot either: by then the phase it confirms has moved on.
    assert shell.replies.waiting == 0
    shell.clock.advance(61)  # every slot free again
    await asyncio.sleep(0.02)
    await shell.settle()
    assert len(shell.bot.texts) == 2  # the budget's own
    assert shell.replies.budget.room(GROUP) == 2


async def test_a_stake_confirmation_is_left_out_while_other_answers_wait_for_their_turn(
    shell: RepliesShell,
) -> None:
    # Ann's answer waits (for the chat's outbox); the group's budget has slots.
    shell.replies.reply(message_update(GROUP, ANN, "/balance", message_id=31), "You have RM5.00")
    shell.replies.confirm(message_update(GROUP, BOB, "/bet 5", message_id=32), "Bet placed.")
    await shell.settle()

    (call,) = shell.bot.of("send_message")
    assert call.args["text"] == "You have RM5.00"  # alone, not folded with Bob's
    assert call.args["reply_to_message_id"] == 31


async def test_a_stake_is_confirmed_by_a_reply_while_the_bots_rate_is_busy_but_has_room(
    shell: RepliesShell,
) -> None:
    rate = SendRate(per_second=10)  # room for a second's worth: an answer would go at once
    shell.replies.messenger.rate = rate
    for _ in range(10):  # half the rate over the last two seconds: other groups' sends
        await rate.acquire(Priority.RESULTS)
    assert rate.tight and rate.wait_ahead(Priority.ANSWER) <= CONFIRM_WITHIN_SECONDS

    shell.replies.confirm(message_update(GROUP, BOB, "/bet 5", message_id=33), "Bet placed.")
    await shell.settle()

    (call,) = shell.bot.of("send_message")
    assert call.args["text"] == "Bet placed."
    assert call.args["reply_to_message_id"] == 33


async def test_a_stake_confirmation_is_left_to_the_board_while_the_bots_rate_is_behind(
    shell: RepliesShell,
) -> None:
    rate = SendRate(per_second=0.9, burst=1)  # the next message's turn is more than a second away
    shell.replies.messenger.rate = rate
    await rate.acquire(Priority.RESULTS)
    assert rate.wait_ahead(Priority.ANSWER) > CONFIRM_WITHIN_SECONDS

    shell.replies.confirm(message_update(GROUP, BOB, "/bet 5"), "Bet placed.")
    await shell.settle()

    assert shell.replies.waiting == 0
    assert shell.bot.texts == []
    assert shell.replies.budget.room(GROUP) == 2  # the group's slot is kept too


async def test_a_stake_placed_by_a_button_is_confirmed_by_a_toast_even_without_a_slot(
    shell: RepliesShell,
) -> None:
    await shell.spend_budget()

    shell.replies.confirm(button_update(GROUP, BOB, "7:bet:500"), "<b>Bet</b> placed.")
    await shell.settle()

    (toast,) = shell.bot.of("answer_callback_query")
    assert toast.args["text"] == "Bet placed."
    assert len(shell.bot.texts) == 2  # no message
    assert shell.replies.waiting == 0


async def test_a_stake_in_a_private_chat_is_confirmed_at_once_whatever_the_budget(
    shell: RepliesShell,
) -> None:
    for number in range(3):  # more than the budget of 2, at once
        update = message_update(PRIVATE, ANN, "/bet 5", message_id=number + 1)
        shell.replies.confirm(update, f"confirmed {number}")
    await shell.settle()

    calls = shell.bot.of("send_message")
    assert [call.args["text"] for call in calls] == ["confirmed 0", "confirmed 1", "confirmed 2"]
    assert [call.args["reply_to_message_id"] for call in calls] == [1, 2, 3]


# -- telling the group --------------------------------------------------------------------


async def test_telling_the_group_takes_a_slot_and_waits_like_a_reply(shell: RepliesShell) -> None:
    shell.replies.tell(GROUP, "Round 7 starts.")
    await shell.settle()
    call = shell.bot.of("send_message")[0]
    assert call.args["text"] == "Round 7 starts."
    assert call.args["reply_to_message_id"] is None

    shell.replies.tell(GROUP, "Round 8 starts.")
    await shell.settle()
    shell.until_slot_almost_free()
    shell.replies.tell(GROUP, "The table is closed.")
    shell.replies.reply(message_update(GROUP, ANN, "/bet 5"), "Betting is not open.")
    await shell.settle()
    assert len(shell.bot.texts) == 2

    shell.past_the_slot()
    await eventually(lambda: len(shell.bot.texts) == 3)
    # A line no one asked for has no name.
    assert shell.bot.texts[2] == "The table is closed.\n<b>Ann</b>: Betting is not open."


async def test_a_round_that_could_not_start_is_explained_in_the_groups_language(
    shell: RepliesShell,
) -> None:
    shell.service.chat_settings[GROUP] = Settings(language="zh")

    shell.replies.tell_error(GROUP, GameError("table_closed"))
    await eventually(lambda: len(shell.bot.texts) == 1)

    assert shell.bot.texts == [translate("zh", "error.table_closed")]
    assert shell.bot.of("send_message")[0].args["reply_to_message_id"] is None


# -- stopping -----------------------------------------------------------------------------


async def test_drain_sends_what_waits_whatever_the_budget(shell: RepliesShell) -> None:
    await shell.spend_budget()
    shell.replies.reply(message_update(GROUP, BOB, "/bet 5"), "Bet placed.")
    shell.replies.reply(message_update(OTHER_GROUP, CAT, "/bet 6"), "Bet changed.")
    shell.replies.reply(message_update(OTHER_GROUP, DAN, "/bet 7"), "Bet changed.")
    assert shell.replies.waiting == 3  # GROUP's waits a minute for its slot

    await shell.replies.drain(5.0)

    assert shell.replies.waiting == 0
    by_chat = {call.args["chat_id"]: call.args["text"] for call in shell.bot.of("send_message")}
    assert by_chat[GROUP] == "<b>Bob</b>: Bet placed."
    assert by_chat[OTHER_GROUP] == "<b>Cat</b>: Bet changed.\n<b>Dan</b>: Bet changed."

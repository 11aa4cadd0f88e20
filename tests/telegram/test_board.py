"""Board: each round's board posted once under the service's claim, refreshed at most
once per ``edit_seconds`` per chat with the latest state, a new phase reposted as a new
board message while the group's minute has room, the results and shoe notices,
redelivery by the sweep, and the board's caches."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any

import pytest
from telegram.error import BadRequest, NetworkError

from bot.engine import round as engine
from bot.engine.round import Phase, RetiredShoe, Round, RoundStarted, ShoeRef
from bot.service.game import BOARD_REFUSED, CommandResult
from bot.telegram.board import REPOST_BACKLOG_SECONDS
from bot.telegram.budget import ROOM_KEPT_FOR_ROUNDS, Priority, SendRate
from bot.telegram.i18n import translate
from bot.telegram.views import Views
from tests.helpers.telegram import (
    GROUP,
    SETTINGS,
    SecondsClock,
    eventually,
    new_round,
    voided,
    with_bid,
)
from tests.helpers.telegram_shells import ANN, BOB, BoardShell


@pytest.fixture
def shell() -> BoardShell:
    return BoardShell(edit_seconds=0.0)


# -- posting ------------------------------------------------------------------------------


async def test_a_board_is_posted_under_the_services_claim_and_its_message_recorded(
    shell: BoardShell,
) -> None:
    shell.board.post(GROUP, 7)
    await shell.settle()

    (call,) = shell.bot.of("send_message")
    text, markup = Views(SETTINGS).board(shell.round, {}, shell.clock())
    assert call.args["text"] == text
    assert call.args["reply_markup"] == markup
    assert [c.args for c in shell.service.called("claim_board")] == [(7, 10_000)]
    assert shell.service.board_messages == {7: 1}


async def test_a_second_post_of_the_same_round_while_the_first_is_queued_is_not_queued_again(
    shell: BoardShell,
) -> None:
    shell.bot.hold()  # the first post waits for Telegram
    shell.board.post(GROUP, 7)
    shell.board.post(GROUP, 7)  # before the first even ran
    await eventually(lambda: bool(shell.service.called("claim_board")))
    shell.board.post(GROUP, 7)  # while the first is being sent
    shell.bot.release()
    await shell.settle()

    assert len(shell.service.called("claim_board")) == 1
    assert len(shell.bot.texts) == 1


async def test_a_board_posted_already_is_queued_again_but_not_sent_again(
    shell: BoardShell,
) -> None:
    await shell.posted()

    shell.board.post(GROUP, 7)  # the sweep found it (say) just before it was recorded
    await shell.settle()

    assert len(shell.service.called("claim_board")) == 2  # its claim is refused
    assert len(shell.bot.texts) == 1


async def test_a_board_taken_over_from_a_dead_worker_disarms_the_copy_it_may_have_sent(
    shell: BoardShell,
) -> None:
    # The dead worker knew no message in the chat after id 0 when it took the job; then
    # Telegram took its board (message 1) and, say, a player's message (2) came.
    shell.bot.sent_before(2)
    shell.service.claimed_before[7] = 0

    shell.board.post(GROUP, 7)
    await shell.settle()
    await eventually(lambda: len(shell.bot.of("edit_message_reply_markup")) == 2)

    assert shell.service.board_messages == {7: 3}
    disarmed = [call.args["message_id"] for call in shell.bot.of("edit_message_reply_markup")]
    assert disarmed == [1, 2]  # the new board, 3, keeps its buttons


async def test_a_board_another_worker_is_posting_is_left_to_it(shell: BoardShell) -> None:
    shell.service.board_claims.add(7)

    shell.board.post(GROUP, 7)
    await shell.settle()

    assert shell.bot.texts == []
    assert 7 not in shell.service.board_messages


async def test_a_refused_board_post_is_marked_board_refused(shell: BoardShell) -> None:
    shell.bot.fail_next(BadRequest("Chat not found"))

    shell.board.post(GROUP, 7)
    await shell.settle()

    assert shell.service.board_messages == {7: BOARD_REFUSED}


async def test_a_board_whose_send_fails_on_the_way_is_tried_again(shell: BoardShell) -> None:
    shell.bot.fail_next(NetworkError("Bad Gateway"))

    shell.board.post(GROUP, 7)
    await shell.settle()

    attempts = [call for call in shell.bot.calls if call.method == "send_message"]
    assert [call.error is None for call in attempts] == [False, True]
    assert shell.service.board_messages == {7: 1}


async def test_a_board_that_never_reached_telegram_is_left_for_redelivery(
    shell: BoardShell, caplog: pytest.LogCaptureFixture
) -> None:
    shell.bot.fail_always(NetworkError("connection reset"))

    with caplog.at_level(logging.WARNING):
        shell.board.post(GROUP, 7)
        await shell.settle()

    assert 7 not in shell.service.board_messages  # not refused: still to be posted
    assert len(shell.bot.calls) >= 3  # tried again until the tries ran out
    # A failure on the way is expected: log lines naming the chat and round, no traceback.
    assert caplog.records and all(record.exc_info is None for record in caplog.records)
    assert all(record.levelno == logging.WARNING for record in caplog.records)
    assert f"chat {GROUP} round 7" in caplog.text
    # Once the lease ran out, the sweep's post goes through.
    shell.bot.recover()
    shell.service.board_claims.clear()
    shell.board.post(GROUP, 7)
    await shell.settle()
    assert shell.service.board_messages == {7: 1}


async def spend_the_groups_minute(shell: BoardShell) -> SecondsClock:
    """Take every send of the group's minute; its clock stands a hundredth of a second
    before the oldest frees (a send waiting for it wakes at once, and again, until the
    test moves the clock on)."""
    clock = shell.sends.clock
    assert isinstance(clock, SecondsClock)
    while shell.sends.room(GROUP):
        shell.sends.take(GROUP)
    clock.advance(59.99)
    return clock


async def test_a_board_is_drawn_when_its_slot_frees_from_the_round_as_it_is_then(
    shell: BoardShell,
) -> None:
    clock = await spend_the_groups_minute(shell)
    shell.board.post(GROUP, 7)
    await eventually(lambda: bool(shell.service.called("claim_board")))
    # While the board waits for the group's slot, Ann bids and time passes.
    shell.service.put(with_bid(shell.round, ANN.id, 2_000))
    shell.clock.now_ms += 5_000
    assert shell.bot.texts == []

    clock.advance(0.02)
    await shell.settle()

    (text,) = shell.bot.texts
    shown = shell.service.rounds[7]
    assert shown.high_bidder == ANN.id
    expected, _ = Views(SETTINGS).board(shown, {ANN.id: ANN, BOB.id: BOB}, shell.clock())
    assert text == expected and "Ann" in text


async def test_a_board_that_waited_for_its_slot_opens_its_window_when_it_is_shown(
    shell: BoardShell,
) -> None:
    clock = await spend_the_groups_minute(shell)
    moved: list[CommandResult] = []
    shell.board.window_moved = moved.append
    window = SETTINGS.bid_seconds * 1000
    shell.board.post(GROUP, 7)
    await eventually(lambda: bool(shell.service.called("claim_board")))
    shell.clock.now_ms += 8_000  # the group's minute holds the board back for 8 s

    clock.advance(0.02)
    await shell.settle()

    (text,) = shell.bot.texts
    state = shell.service.rounds[7]
    # The window opens now, as the board shows it: the whole window is left.
    assert state.deadline_ms == shell.clock() + window
    assert [result.round for result in moved] == [state]
    expected, _ = Views(SETTINGS).board(state, {}, shell.clock())
    assert text == expected


async def test_a_board_on_time_moves_no_window(shell: BoardShell) -> None:
    shell.board.post(GROUP, 7)
    await shell.settle()

    assert shell.service.called("move_window") == []
    assert shell.service.rounds[7] == shell.round


async def test_a_board_whose_round_ended_before_its_slot_is_not_sent(shell: BoardShell) -> None:
    clock = await spend_the_groups_minute(shell)
    shell.board.post(GROUP, 7)
    await eventually(lambda: bool(shell.service.called("claim_board")))
    ended, _ = voided(shell.round)
    shell.service.put(ended)

    clock.advance(0.02)
    await shell.settle()

    assert shell.bot.texts == []
    assert 7 not in shell.service.board_messages  # neither posted nor refused


async def test_a_slow_post_keeps_renewing_its_lease_until_telegram_has_it() -> None:
    shell = BoardShell(edit_seconds=0.0, lease_seconds=0.03)  # renewed every 10 ms
    shell.bot.hold()

    shell.board.post(GROUP, 7)
    await eventually(lambda: len(shell.service.called("renew_board_claim")) >= 3)
    shell.bot.release()
    await shell.settle()
    renewals = len(shell.service.called("renew_board_claim"))
    await asyncio.sleep(0.05)

    assert shell.service.board_messages == {7: 1}
    assert len(shell.service.called("renew_board_claim")) == renewals  # stopped once sent
    assert {c.args for c in shell.service.called("renew_board_claim")} == {(7, 30)}


# -- refreshing ---------------------------------------------------------------------------


async def test_an_edit_right_after_the_post_waits_for_the_chats_throttle() -> None:
    shell = BoardShell(edit_seconds=60.0)
    await shell.posted()

    shell.change(with_bid(shell.round, ANN.id, 1_000))
    await asyncio.sleep(0.03)
    await shell.outbox.drain(5.0)

    assert shell.edits == []
    shell.board.cancel_edits()
    await shell.board.drain(5.0)


async def test_several_refreshes_within_the_throttle_make_one_edit_with_the_latest_state() -> None:
    shell = BoardShell(edit_seconds=0.03)
    await shell.posted()

    first = shell.change(with_bid(shell.round, ANN.id, 1_000))
    latest = shell.change(with_bid(first, BOB.id, 2_000))
    await eventually(lambda: len(shell.edits) == 1)
    await asyncio.sleep(0.05)  # past another throttle interval: nothing more comes
    await shell.settle()

    (edit,) = shell.bot.of("edit_message_text")
    assert edit.args["text"] == shell.board_text(latest)
    assert "Bob" in edit.args["text"]
    assert edit.args["message_id"] == 1
    assert edit.args["chat_id"] == GROUP
    # The later change rode along with the edit on its way: one read of the round, not two.
    assert len(shell.service.called("round")) == 2  # the post's and the edit's
    assert shell.service.called("board_message") == []  # its id came with the round


async def test_after_an_edit_the_next_change_gets_an_edit_of_its_own(shell: BoardShell) -> None:
    await shell.posted()

    first = shell.change(with_bid(shell.round, ANN.id, 1_000))
    await shell.settle()
    second = shell.change(with_bid(first, BOB.id, 2_000))
    await shell.settle()

    assert shell.edits == [shell.board_text(first), shell.board_text(second)]


async def test_a_refresh_that_changes_nothing_edits_nothing(shell: BoardShell) -> None:
    await shell.posted()

    shell.board.refresh(shell.round)
    await shell.settle()

    assert shell.edits == []
    assert len(shell.service.called("round")) == 2  # it did look


async def test_a_board_posted_by_another_worker_is_edited_by_its_recorded_message(
    shell: BoardShell,
) -> None:
    shell.service.board_messages[7] = 55

    shell.change(with_bid(shell.round, ANN.id, 1_000))
    await shell.settle()

    (edit,) = shell.bot.of("edit_message_text")
    assert edit.args["message_id"] == 55


@pytest.mark.parametrize("recorded", [None, BOARD_REFUSED], ids=["not posted", "refused"])
async def test_a_board_without_a_message_is_not_edited(
    shell: BoardShell, recorded: int | None
) -> None:
    if recorded is not None:
        shell.service.board_messages[7] = recorded

    shell.change(with_bid(shell.round, ANN.id, 1_000))
    await shell.settle()

    assert shell.edits == []


async def test_the_last_edit_of_a_round_that_ended_forgets_its_board(shell: BoardShell) -> None:
    await shell.posted()
    ended, _ = voided(shell.round)

    shell.service.put(ended)
    shell.board.refresh(ended, at_once=True)  # as the end of every round is shown
    await shell.settle()
    assert shell.edits == [shell.board_text(ended)]
    assert shell.service.closed == {7}  # recorded: the sweep need not make it
    assert shell.board.sizes()["shown"] == 0  # and is now forgotten

    shell.board.refresh(ended)  # (a late duplicate)
    await shell.settle()
    assert len(shell.edits) == 1


# -- reposting a new phase ----------------------------------------------------------------


def betting(state: Round) -> Round:
    """``state`` (bidding) once Ann's bid won it at its deadline: betting is open."""
    won = with_bid(state, ANN.id, 1_000)
    after = engine.advance(won, won.deadline_ms, player_seeds={}).round
    assert after.phase is Phase.BETTING
    return after


def grabbing(state: Round) -> Round:
    """``state`` (betting) once Bob's bet is in and its deadline passed: grabbing is open."""
    bet = engine.bet(state, BOB.id, 500, free_chips=10**9, now_ms=state.deadline_ms - 1).round
    after = engine.advance(bet, bet.deadline_ms, player_seeds={}).round
    assert after.phase is Phase.GRABBING
    return after


async def test_a_new_phase_is_a_new_board_message_and_the_old_one_is_deleted(
    shell: BoardShell,
) -> None:
    await shell.posted()
    opened = betting(shell.round)
    shell.service.put(opened)
    recorded_at_delete: list[dict[int, int]] = []
    replaced_at_delete: list[dict[int, int]] = []
    delete = shell.bot.delete_message

    async def deleting(chat_id: int, message_id: int) -> bool:
        recorded_at_delete.append(dict(shell.service.board_messages))
        replaced_at_delete.append(dict(shell.service.replaced))
        return await delete(chat_id, message_id)

    shell.bot.delete_message = deleting  # type: ignore[method-assign]

    shell.board.repost(opened)
    await shell.settle()

    text, markup = Views(SETTINGS).board(opened, {ANN.id: ANN, BOB.id: BOB}, shell.clock())
    assert [call.method for call in shell.bot.calls] == [
        "send_message",  # the first board
        "send_message",  # betting opens: it notifies the group
        "delete_message",  # and only then does the old board go
    ]
    new = shell.bot.of("send_message")[1]
    assert (new.args["text"], new.args["reply_markup"]) == (text, markup)
    assert "Betting" in new.args["text"]
    assert shell.bot.of("delete_message")[0].args == {"chat_id": GROUP, "message_id": 1}
    assert shell.service.board_messages == {7: 2}
    # Recorded before the old one goes, and the old one with it: a crash in between
    # leaves a record of a message that exists, and of the one still to be taken down.
    assert recorded_at_delete == [{7: 2}]
    assert replaced_at_delete == [{7: 1}]
    assert shell.service.replaced == {}  # taken down: forgotten

    # The new message is the board from now on.
    bet = engine.bet(opened, BOB.id, 500, free_chips=10**9, now_ms=opened.deadline_ms - 1)
    shell.change(bet.round)
    await shell.settle()
    (edit,) = shell.bot.of("edit_message_text")
    assert edit.args["message_id"] == 2
    assert "Bob" in edit.args["text"]


async def test_the_new_board_shows_the_phase_as_it_is_when_the_message_goes_out(
    shell: BoardShell,
) -> None:
    await shell.posted()
    opened = betting(shell.round)
    shell.service.put(opened)

    shell.board.repost(opened)
    # Before its turn comes: betting opened (at the bidding deadline) 3 s ago, and Bob bet.
    shell.clock.now_ms = shell.round.deadline_ms + 3_000
    latest = engine.bet(opened, BOB.id, 500, free_chips=10**9, now_ms=shell.clock.now_ms).round
    shell.service.put(latest)
    await shell.settle()

    new = shell.bot.of("send_message")[1]
    # Shown 3 s after it opened: the window opens as the group sees it (docs/rules.md §1).
    shown = shell.service.rounds[latest.id]
    assert shown.deadline_ms == shell.clock() + SETTINGS.bet_seconds * 1000
    assert new.args["text"] == shell.board_text(shown)
    assert f"{SETTINGS.bet_seconds}s left" in new.args["text"]
    assert "Bob" in new.args["text"]


async def test_grabbing_opens_on_a_new_board_message_too(shell: BoardShell) -> None:
    await shell.posted()
    bets_open = betting(shell.round)
    shell.service.put(bets_open)
    shell.board.repost(bets_open)
    await shell.settle()
    grabs_open = grabbing(bets_open)
    shell.service.put(grabs_open)
    shell.clock.now_ms = bets_open.deadline_ms

    shell.board.repost(grabs_open)
    await shell.settle()

    assert len(shell.bot.texts) == 3
    grab = shell.bot.of("send_message")[2]
    assert grab.args["text"] == shell.board_text(grabs_open)
    assert f"{SETTINGS.grab_seconds}s left" in grab.args["text"]
    assert [c.args["message_id"] for c in shell.bot.of("delete_message")] == [1, 2]
    assert [c.args for c in shell.service.called("set_board_message")] == [(7, 1)]
    replaced = shell.service.called("replace_board_message")
    assert [c.args for c in replaced] == [(7, 1, 2), (7, 2, 3)]
    assert shell.bot.of("edit_message_text") == []


def settled(state: Round) -> Round:
    """``state`` (grabbing) once its deadline passed: grabbed for everyone, settled."""
    after = engine.advance(state, state.deadline_ms, player_seeds={}).round
    assert not after.phase.is_open
    return after


@pytest.mark.parametrize("ended", [False, True], ids=["grabbing opened", "round ended"])
async def test_a_repost_whose_phase_is_over_when_its_turn_comes_sends_nothing(
    shell: BoardShell, ended: bool
) -> None:
    # Its turn came late (the chat's outbox waited for the group's minute): the step that
    # ended the phase queued its own repost or edit, which shows the round as it is.
    await shell.posted()
    opened = betting(shell.round)
    shell.service.put(opened)
    shell.board.repost(opened)
    later = grabbing(opened)
    if ended:
        later = settled(later)
    shell.service.put(later)

    await shell.settle()

    assert shell.bot.texts == [shell.board_text(shell.round)]  # the first board only
    assert shell.bot.of("delete_message") == []
    assert shell.service.board_messages == {7: 1}

    # What the later step queued shows it: a new board for grabbing, the end edited in.
    if ended:
        shell.board.refresh(later, at_once=True)
    else:
        shell.board.repost(later)
    await shell.settle()
    if ended:
        assert shell.edits == [shell.board_text(later)]
        assert len(shell.bot.texts) == 1
    else:
        assert shell.bot.texts[1:] == [shell.board_text(later)]
        assert shell.service.board_messages == {7: 2}


async def test_a_board_another_worker_posted_is_reposted_and_its_message_deleted(
    shell: BoardShell,
) -> None:
    shell.service.board_messages[7] = 55
    opened = betting(shell.round)
    shell.service.put(opened)

    shell.board.repost(opened)
    await shell.settle()

    assert shell.bot.texts == [shell.board_text(opened)]
    assert shell.bot.of("delete_message")[0].args["message_id"] == 55
    assert shell.service.board_messages == {7: 1}


@pytest.mark.parametrize("recorded", [None, BOARD_REFUSED], ids=["not posted", "refused"])
async def test_a_board_without_a_message_is_not_reposted(
    shell: BoardShell, recorded: int | None
) -> None:
    # One still being posted shows the new phase when it goes out; a refused one has
    # nowhere to go.
    if recorded is not None:
        shell.service.board_messages[7] = recorded
    opened = betting(shell.round)
    shell.service.put(opened)

    shell.board.repost(opened)
    await shell.settle()

    assert shell.bot.calls == []
    assert shell.service.called("set_board_message") == []


@pytest.mark.parametrize(
    ("room", "reposted"),
    [(ROOM_KEPT_FOR_ROUNDS + 1, True), (ROOM_KEPT_FOR_ROUNDS, False), (0, False)],
    ids=["room to spare", "room kept for the round", "no room"],
)
async def test_a_new_phase_in_a_busy_minute_is_shown_by_editing_the_old_board(
    shell: BoardShell, room: int, reposted: bool
) -> None:
    await shell.posted()
    while shell.sends.room(GROUP) > room:
        shell.sends.take(GROUP)  # replies and other rounds' messages
    opened = betting(shell.round)
    shell.service.put(opened)

    shell.board.repost(opened)
    await shell.settle()

    if reposted:
        assert len(shell.bot.texts) == 2
        assert shell.service.board_messages == {7: 2}
        assert shell.edits == []
    else:
        assert len(shell.bot.texts) == 1  # no send, so none waits for a slot either
        assert shell.bot.of("delete_message") == []
        assert shell.service.board_messages == {7: 1}
        (edit,) = shell.bot.of("edit_message_text")
        assert edit.args["message_id"] == 1
        assert edit.args["text"] == shell.board_text(opened)


async def test_a_refused_repost_shows_the_new_phase_on_the_old_board(
    shell: BoardShell, caplog: pytest.LogCaptureFixture
) -> None:
    await shell.posted()
    opened = betting(shell.round)
    shell.service.put(opened)
    shell.bot.fail_next(BadRequest("Not enough rights to send text messages"), "send_message")

    with caplog.at_level(logging.WARNING, logger="bot.telegram.messenger"):
        shell.board.repost(opened)
        await shell.settle()

    (edit,) = shell.bot.of("edit_message_text")
    assert (edit.args["message_id"], edit.args["text"]) == (1, shell.board_text(opened))
    assert shell.bot.of("delete_message") == []
    assert shell.service.board_messages == {7: 1}
    assert "Not enough rights" in caplog.text


async def test_an_old_board_that_cannot_be_deleted_stays_but_the_new_one_is_the_board(
    shell: BoardShell,
) -> None:
    await shell.posted()
    opened = betting(shell.round)
    shell.service.put(opened)
    shell.bot.fail_next(BadRequest("Message can't be deleted"), "delete_message")

    shell.board.repost(opened)
    await shell.settle()
    shell.service.calls.clear()
    shell.change(grabbing(opened))
    await shell.settle()

    assert shell.service.board_messages == {7: 2}
    (edit,) = shell.bot.of("edit_message_text")
    assert edit.args["message_id"] == 2
    # The old board that stays has no live buttons.
    (disarm,) = shell.bot.of("edit_message_reply_markup")
    assert disarm.args == {"chat_id": GROUP, "message_id": 1, "reply_markup": None}


async def replaced_while_telegram_is_unreachable(shell: BoardShell) -> Round:
    """Betting opened on a new board (2) while nothing could be deleted or disarmed: the
    old board (1) is still live, and remembered to be taken down. The round, betting."""
    await shell.posted()
    opened = betting(shell.round)
    shell.service.put(opened)
    shell.bot.fail_always(NetworkError("Bad Gateway"), "delete_message")
    shell.bot.fail_always(NetworkError("Bad Gateway"), "edit_message_reply_markup")
    shell.board.repost(opened)
    await shell.settle()
    assert shell.service.board_messages == {7: 2}
    assert shell.service.replaced == {7: 1}
    return opened


async def test_an_old_board_telegram_could_not_be_reached_for_is_taken_down_by_the_sweep(
    shell: BoardShell,
) -> None:
    await replaced_while_telegram_is_unreachable(shell)

    shell.bot.recover()
    await shell.board.redeliver()
    await shell.settle()

    assert [c.args["message_id"] for c in shell.bot.of("delete_message")] == [1]
    assert shell.service.replaced == {}


async def test_an_old_board_whose_worker_died_before_taking_it_down_is_taken_down_by_the_sweep(
    shell: BoardShell,
) -> None:
    await shell.posted()
    opened = betting(shell.round)
    shell.service.put(opened)
    # What a worker killed between recording the new board and deleting the old one left.
    shell.service.board_messages[7] = 2
    shell.service.replaced[7] = 1

    await shell.board.redeliver()
    await shell.board.redeliver()  # the next sweep, while the first is on its way
    await shell.settle()

    assert [c.args["message_id"] for c in shell.bot.of("delete_message")] == [1]
    assert shell.service.replaced == {}
    assert shell.service.board_messages == {7: 2}


async def test_a_new_phase_takes_down_the_old_board_still_remembered_before_replacing_the_next(
    shell: BoardShell,
) -> None:
    await shell.posted()
    bets_open = betting(shell.round)
    shell.service.put(bets_open)
    # What a worker killed between recording betting's board and deleting the first left.
    await shell.bot.send_message(GROUP, "betting's board")
    shell.service.board_messages[7] = 2
    shell.service.replaced[7] = 1
    grabs_open = grabbing(bets_open)
    shell.service.put(grabs_open)

    shell.board.repost(grabs_open)
    await shell.settle()

    # Both old boards are gone: the database remembers one a round, so the one it
    # remembered went before the next took its place there.
    assert [c.args["message_id"] for c in shell.bot.of("delete_message")] == [1, 2]
    assert shell.service.board_messages == {7: 3}
    assert [c.args for c in shell.service.called("replace_board_message")] == [(7, 2, 3)]
    assert shell.service.replaced == {}


async def test_a_new_phase_is_edited_in_while_an_old_board_remembered_cannot_be_taken_down(
    shell: BoardShell,
) -> None:
    bets_open = await replaced_while_telegram_is_unreachable(shell)
    grabs_open = grabbing(bets_open)
    shell.service.put(grabs_open)

    shell.board.repost(grabs_open)
    await shell.settle()

    # No third board: the database would have forgotten the first, and its buttons.
    assert len(shell.bot.texts) == 2
    assert shell.service.board_messages == {7: 2}
    assert shell.service.replaced == {7: 1}
    edit = shell.bot.of("edit_message_text")[-1]
    assert (edit.args["message_id"], edit.args["text"]) == (2, shell.board_text(grabs_open))
    assert shell.service.board_phases == {7: Phase.GRABBING}


async def test_a_board_posted_anew_after_another_worker_replaced_the_old_one_is_taken_down(
    shell: BoardShell,
) -> None:
    await shell.posted()
    opened = betting(shell.round)
    shell.service.put(opened)
    send = shell.bot.send_message

    async def other_worker_first(*args: Any, **kwargs: Any) -> Any:
        shell.service.board_messages[7] = 55  # its new board, recorded while ours went out
        return await send(*args, **kwargs)

    shell.bot.send_message = other_worker_first  # type: ignore[method-assign]
    shell.board.repost(opened)
    await shell.settle()

    assert shell.service.board_messages == {7: 55}
    # Ours is a second board: taken down, not recorded; the old one is the other's job.
    assert [c.args["message_id"] for c in shell.bot.of("delete_message")] == [2]
    assert shell.service.replaced == {}


async def test_a_posted_board_and_a_new_phases_board_are_recorded_with_the_phase_they_show(
    shell: BoardShell,
) -> None:
    await shell.posted()
    assert shell.service.board_phases == {7: Phase.BIDDING}
    opened = betting(shell.round)
    shell.service.put(opened)

    shell.board.repost(opened)
    await shell.settle()

    assert shell.service.board_phases == {7: Phase.BETTING}
    assert await shell.service.unshown_phases() == []


async def test_a_new_phase_shown_by_an_edit_is_recorded_once(shell: BoardShell) -> None:
    await shell.posted()
    opened = betting(shell.round)
    shell.service.put(opened)
    while shell.sends.room(GROUP) > ROOM_KEPT_FOR_ROUNDS:
        shell.sends.take(GROUP)  # a busy minute: the phase is shown by an edit

    shell.board.repost(opened)
    await shell.settle()
    bet = engine.bet(opened, BOB.id, 500, free_chips=10**9, now_ms=opened.deadline_ms - 1)
    shell.change(bet.round)  # a bet list's edit: the board still shows betting
    await shell.settle()

    assert len(shell.bot.of("edit_message_text")) == 2
    assert [c.args for c in shell.service.called("mark_phase_shown")] == [(7, 1, Phase.BETTING)]
    assert shell.service.board_phases == {7: Phase.BETTING}


async def test_a_new_phase_its_worker_never_showed_is_shown_by_the_sweep_after_a_lease(
    shell: BoardShell,
) -> None:
    await shell.posted()
    opened = betting(shell.round)
    shell.service.put(opened)  # the worker that opened betting died before showing it...
    await shell.bot.send_message(GROUP, "its betting board, never recorded")  # ...or this

    await shell.board.redeliver()  # found: its worker's for a lease (10 s here)
    await shell.settle()
    assert len(shell.bot.texts) == 2
    shell.board.lease_ms = 0  # the lease ran out
    await shell.board.redeliver()
    await shell.board.redeliver()  # the next sweep, while the first is on its way
    await shell.settle()

    assert len(shell.bot.texts) == 3
    assert "Betting" in shell.bot.texts[2]
    assert shell.service.board_messages == {7: 3}
    assert shell.service.board_phases == {7: Phase.BETTING}
    assert [c.args["message_id"] for c in shell.bot.of("delete_message")] == [1]
    # What the dead worker may have sent lies between the two boards: no live buttons.
    await eventually(lambda: bool(shell.bot.of("edit_message_reply_markup")))
    (disarmed,) = shell.bot.of("edit_message_reply_markup")
    assert disarmed.args == {"chat_id": GROUP, "message_id": 2, "reply_markup": None}


async def test_a_phase_taken_over_in_a_busy_minute_is_still_a_new_board_bounding_the_copy(
    shell: BoardShell,
) -> None:
    await shell.posted()
    opened = betting(shell.round)
    shell.service.put(opened)  # the worker that opened betting died after sending this:
    await shell.bot.send_message(GROUP, "its betting board, never recorded")
    while shell.sends.room(GROUP) > ROOM_KEPT_FOR_ROUNDS:
        shell.sends.take(GROUP)  # a busy minute: its own worker would have edited it in
    shell.board.lease_ms = 0

    await shell.board.redeliver()  # found unshown
    await shell.board.redeliver()  # a lease later: taken over
    await shell.settle()

    assert len(shell.bot.texts) == 3
    assert shell.service.board_messages == {7: 3}
    await eventually(lambda: bool(shell.bot.of("edit_message_reply_markup")))
    (disarmed,) = shell.bot.of("edit_message_reply_markup")
    assert disarmed.args == {"chat_id": GROUP, "message_id": 2, "reply_markup": None}


async def test_a_phase_this_process_showed_while_the_sweep_looked_is_not_shown_again(
    shell: BoardShell,
) -> None:
    await shell.posted()
    shell.board.lease_ms = 0
    opened = betting(shell.round)
    shell.service.put(opened)
    shell.board.repost(opened)  # its worker's, queued
    await shell.board.redeliver()  # the sweep finds it not shown yet, and queues it too
    await shell.settle()

    assert len(shell.bot.texts) == 2
    assert shell.service.board_messages == {7: 2}


# -- results and shoes --------------------------------------------------------------------


async def test_results_are_sent_once_under_the_claim_and_marked_announced(
    shell: BoardShell,
) -> None:
    ended, event = voided(shell.round)

    shell.board.announce(ended, event)
    shell.board.announce(ended, event)  # queued already: not again
    await shell.settle()

    assert shell.bot.texts == [Views(SETTINGS).results(ended, event, {})]
    assert [c.args for c in shell.service.called("claim_announcement")] == [(7, 10_000)]
    assert shell.service.announced == {7}


async def test_results_another_worker_is_sending_are_left_to_it(shell: BoardShell) -> None:
    ended, event = voided(shell.round)
    shell.service.announcement_claims.add(7)

    shell.board.announce(ended, event)
    await shell.settle()

    assert shell.bot.texts == []
    assert shell.service.announced == set()


async def test_results_telegram_refuses_are_marked_announced_not_sent_forever(
    shell: BoardShell,
) -> None:
    ended, event = voided(shell.round)
    shell.bot.fail_next(BadRequest("Chat not found"))

    shell.board.announce(ended, event)
    await shell.settle()

    assert shell.service.announced == {7}


async def test_a_replaced_shoe_is_announced_with_the_old_ones_seed(shell: BoardShell) -> None:
    state = dataclasses.replace(shell.round, shoe=ShoeRef(5, b"\x02" * 32, 0))
    started = RoundStarted(state.commitment, state.deadline_ms, RetiredShoe(4, b"\x01" * 32))

    shell.board.shoe_replaced(state, started)
    await shell.settle()

    expected = translate("en", "shoe.replaced", shoe_id=5, old_id=4, seed="01" * 32)
    assert shell.bot.texts == [expected]


async def test_a_retired_shoe_is_announced_with_its_seed(shell: BoardShell) -> None:
    started = RoundStarted(
        shell.round.commitment, shell.round.deadline_ms, RetiredShoe(4, b"\x01" * 32)
    )

    shell.board.shoe_replaced(shell.round, started)  # the table plays a shoeless game now
    await shell.settle()

    assert shell.bot.texts == [translate("en", "shoe.retired", old_id=4, seed="01" * 32)]


# -- redelivery ---------------------------------------------------------------------------


async def test_redeliver_sends_the_boards_and_results_no_worker_is_sending(
    shell: BoardShell,
) -> None:
    ended, event = voided(new_round(6).round)
    shell.service.unannounced_rounds = [(ended, event)]
    shell.service.unposted = [(7, GROUP)]

    await shell.board.redeliver()
    await shell.settle()

    assert shell.service.announced == {6}
    assert shell.service.board_messages == {7: 2}  # the results went first
    # Those started or ended less than a lease ago are left to the worker that did so.
    assert [c.args for c in shell.service.called("unannounced")] == [(10_000,)]
    assert [c.args for c in shell.service.called("unposted_boards")] == [(10_000,)]


async def test_redeliver_does_not_queue_again_what_this_process_is_sending(
    shell: BoardShell,
) -> None:
    shell.bot.hold()
    shell.board.post(GROUP, 7)
    await eventually(lambda: bool(shell.service.called("claim_board")))
    shell.service.unposted = [(7, GROUP)]

    await shell.board.redeliver()
    shell.bot.release()
    await shell.settle()

    assert len(shell.service.called("claim_board")) == 1
    assert len(shell.bot.texts) == 1


# -- the bot's overall rate ---------------------------------------------------------------


async def test_a_new_phase_while_the_bots_rate_is_behind_is_shown_by_editing_the_old_board(
    shell: BoardShell,
) -> None:
    await shell.posted()
    rate = await shell.rate_behind(0.9)  # the next message's turn is more than a second away
    assert rate.backlog_seconds > REPOST_BACKLOG_SECONDS
    opened = betting(shell.round)
    shell.service.put(opened)

    shell.board.repost(opened)
    await shell.settle()

    assert len(shell.bot.texts) == 1  # the first board only: no new message
    assert shell.bot.of("delete_message") == []
    (edit,) = shell.bot.of("edit_message_text")
    assert edit.args["text"] == shell.board_text(opened)


async def test_a_new_phase_while_the_bots_rate_is_tight_is_edited_in_though_not_behind(
    shell: BoardShell,
) -> None:
    await shell.posted()
    rate = SendRate(per_second=10)  # a second's worth of room: nothing waits
    shell.board.messenger.rate = rate
    for _ in range(10):  # half the rate over the last two seconds
        await rate.acquire(Priority.RESULTS)
    assert rate.tight and rate.backlog_seconds <= REPOST_BACKLOG_SECONDS
    opened = betting(shell.round)
    shell.service.put(opened)

    shell.board.repost(opened)
    await shell.settle()

    assert len(shell.bot.texts) == 1  # the first board only: no new message
    assert shell.bot.of("delete_message") == []
    (edit,) = shell.bot.of("edit_message_text")
    assert edit.args["text"] == shell.board_text(opened)


async def test_a_bet_lists_edit_waiting_for_its_turn_holds_up_no_results_of_its_chat(
    shell: BoardShell,
) -> None:
    await shell.posted()
    await shell.rate_behind(4)  # whatever comes next waits its turn
    shell.change(with_bid(shell.round, ANN.id, 1_000))  # an edit, waiting at the lowest priority
    await asyncio.sleep(0.05)
    ended, event = voided(shell.round)

    shell.board.announce(ended, event)
    await shell.settle()

    calls = [call.method for call in shell.bot.calls[1:]]  # after the first board
    assert calls == ["send_message", "edit_message_text"]
    assert shell.bot.texts[-1] == Views(SETTINGS).results(ended, event, {})


async def test_changes_while_a_bet_lists_edit_waits_for_its_turn_ride_along_with_it(
    shell: BoardShell,
) -> None:
    await shell.posted()
    await shell.rate_behind(4)  # whatever comes next waits its turn
    ann_bid = shell.change(with_bid(shell.round, ANN.id, 1_000))
    await asyncio.sleep(0.05)  # its edit waits for its turn
    both_bid = shell.change(with_bid(ann_bid, BOB.id, 2_000))
    await shell.settle()

    assert shell.edits == [shell.board_text(both_bid)]  # one edit, of the latest state


async def test_a_bet_lists_edit_whose_turn_comes_after_the_round_ended_sends_nothing(
    shell: BoardShell,
) -> None:
    await shell.posted()
    await shell.rate_behind(4)
    shell.change(with_bid(shell.round, ANN.id, 1_000))  # an edit, waiting at the lowest priority
    await asyncio.sleep(0.05)
    ended, _ = voided(shell.round)
    shell.service.put(ended)
    shell.board.refresh(ended, at_once=True)
    await shell.settle()

    # The end's edit went first; the bet list's would have shown the round open again.
    assert shell.edits == [shell.board_text(ended)]


async def test_what_shows_a_deadline_uses_the_database_as_urgent_work_and_a_bet_list_does_not(
    shell: BoardShell,
) -> None:
    await shell.posted()
    assert all(call.urgent for call in shell.service.calls)  # the board's claim, read, record
    shell.service.calls.clear()
    shell.change(with_bid(shell.round, ANN.id, 1_000))
    await shell.settle()
    assert shell.service.called("round") and not any(c.urgent for c in shell.service.calls)

    shell.service.calls.clear()
    opened = shell.change(betting(shell.round))
    shell.board.repost(opened)
    await shell.settle()
    ended, event = voided(opened)
    shell.service.put(ended)
    shell.board.refresh(ended, at_once=True)
    shell.board.announce(ended, event)
    await shell.settle()
    urgent = {call.name for call in shell.service.calls if call.urgent}
    assert {"round", "replace_board_message", "claim_announcement", "mark_announced"} <= urgent


async def test_a_new_phase_shown_by_an_edit_is_not_shown_once_the_phase_is_over_by_its_turn(
    shell: BoardShell,
) -> None:
    await shell.posted()
    await shell.rate_behind(0.9)  # the next message's turn is a second away
    opened = betting(shell.round)
    shell.service.put(opened)
    shell.board.repost(opened)
    await asyncio.sleep(0.05)  # the phase's edit waits for its turn
    ended, _ = voided(opened)
    shell.service.put(ended)  # (what ended it edits the end in itself)
    await shell.settle()

    assert shell.bot.of("edit_message_text") == []


async def test_a_rounds_closing_edit_goes_after_the_boards_and_phases_waiting_for_their_turn(
    shell: BoardShell,
) -> None:
    await shell.posted()
    await shell.rate_behind(4)  # whatever comes next waits its turn
    ended, _ = voided(shell.round)
    shell.service.put(ended)
    shell.board.refresh(ended, at_once=True)  # its results show the end; this takes buttons away
    following = new_round(8).round
    shell.service.put(following)
    shell.board.post(following.chat_id, following.id)
    await shell.settle()

    calls = [call.method for call in shell.bot.calls[1:]]  # after the first board
    assert calls == ["send_message", "edit_message_text"]
    assert shell.edits == [shell.board_text(ended)]


# -- an ended round's board loses its buttons ---------------------------------------------


async def test_a_closing_edit_that_never_reached_telegram_is_made_by_the_sweep(
    shell: BoardShell,
) -> None:
    await shell.posted()
    ended, _ = voided(shell.round)
    shell.service.put(ended)
    shell.bot.fail_always(NetworkError("Bad Gateway"), "edit_message_text")

    shell.board.refresh(ended, at_once=True)
    await shell.settle()
    assert shell.service.closed == set()  # not recorded: still to be made

    shell.bot.recover()
    shell.service.unclosed = {7}  # what the sweep finds once the grace is over
    await shell.board.redeliver()
    await shell.settle()

    assert shell.edits == [shell.board_text(ended)]
    (edit,) = shell.bot.of("edit_message_text")
    assert edit.args["reply_markup"] is None  # no live buttons
    assert shell.service.closed == {7}


async def test_a_round_that_ended_while_its_board_was_on_its_way_is_closed_once_posted(
    shell: BoardShell,
) -> None:
    shell.bot.hold()  # Telegram is slow to take the board
    shell.board.post(GROUP, 7)
    await eventually(lambda: bool(shell.service.called("round")))  # composed, being sent
    ended, _ = voided(shell.round)
    shell.service.put(ended)
    shell.board.refresh(ended, at_once=True)  # the round ends meanwhile

    shell.bot.release()
    await shell.settle()
    await shell.settle()

    assert shell.service.board_messages == {7: 1}
    assert shell.edits == [shell.board_text(ended)]
    assert shell.service.closed == {7}


async def test_a_board_waiting_for_a_slot_another_worker_spent_holds_its_window_meanwhile(
    shell: BoardShell,
) -> None:
    class Spent:
        """The count every worker shares: the group's minute is spent for 0.6 s more."""

        def __init__(self) -> None:
            self.waits = [0.6]

        async def take(self, chat_id: int) -> tuple[float, int]:
            return (self.waits.pop(0), 0) if self.waits else (0.0, 1)

        async def delivered(self, chat_id: int, taken_ms: int) -> None:
            pass

    shell.board.messenger.slots.shared = Spent()
    window = SETTINGS.bid_seconds * 1000
    started = shell.clock()

    shell.board.post(GROUP, 7)
    await eventually(lambda: bool(shell.service.called("move_window")))
    # This process's count learnt the minute is spent: a new phase would be an edit.
    assert shell.board.messenger.group_sends.room(GROUP) == 0
    clock = shell.sends.clock
    assert isinstance(clock, SecondsClock)
    clock.advance(0.7)  # the slot frees, as 0.6 s pass (on both clocks)
    shell.clock.now_ms += 600
    await shell.settle()

    # Held up front by the wait (before it, the deadline could pass unseen), then the
    # board went out with the whole window.
    (first, *_) = shell.service.called("move_window")
    assert first.args[2] == started + 600
    assert shell.service.rounds[7].deadline_ms >= started + 600 + window
    assert shell.bot.texts and f"{SETTINGS.bid_seconds}s left" in shell.bot.texts[0]


async def test_a_board_posted_anew_while_another_worker_ended_the_round_is_closed(
    shell: BoardShell,
) -> None:
    await shell.posted()
    opened = betting(shell.round)
    shell.service.put(opened)
    shell.bot.hold()  # the new betting board is on its way

    shell.board.repost(opened)
    await eventually(lambda: len(shell.service.called("round")) >= 2)  # composed
    ended, _ = voided(opened)
    shell.service.put(ended)  # another worker ended the round (its last edit: board 1)
    shell.bot.release()
    await shell.settle()
    await shell.settle()

    assert shell.service.board_messages == {7: 2}
    (edit,) = shell.bot.of("edit_message_text")
    assert edit.args["message_id"] == 2 and edit.args["reply_markup"] is None
    assert shell.service.closed == {7}


async def test_an_edit_that_lands_after_another_worker_closed_the_board_is_closed_again(
    shell: BoardShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    await shell.posted()
    bid = with_bid(shell.round, ANN.id, 1_000)
    ended, _ = voided(bid)
    edit = shell.bot.edit_message_text

    async def ends_meanwhile(*args: object, **kwargs: object) -> object:
        # The edit showing Ann's bid is on its way when another worker ends the round.
        shell.service.put(ended)
        monkeypatch.setattr(shell.bot, "edit_message_text", edit)
        return await edit(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shell.bot, "edit_message_text", ends_meanwhile)
    shell.change(bid)
    await shell.settle()
    await shell.settle()

    assert shell.edits == [shell.board_text(bid), shell.board_text(ended)]
    assert shell.bot.of("edit_message_text")[-1].args["reply_markup"] is None
    assert shell.service.closed == {7}
    # Recorded open before it was closed again: had this worker died in between, the
    # sweep (which looks for boards recorded open) would have closed it.
    marks = [call.name for call in shell.service.calls if call.name.startswith("mark_board_")]
    assert marks[-2:] == ["mark_board_open", "mark_board_closed"]


async def test_a_board_its_worker_died_before_recording_is_taken_down_once_pressed(
    shell: BoardShell,
) -> None:
    await shell.posted()
    opened = betting(shell.round)
    shell.service.put(opened)
    # The worker that showed betting died after Telegram took its board, before recording
    # it; the round ended in another worker (its last edit: board 1). Nobody knows 2...
    await shell.bot.send_message(GROUP, "its betting board, never recorded")
    ended, _ = voided(opened)
    shell.service.put(ended)
    shell.board.close(GROUP, 7)
    await shell.settle()
    assert shell.service.closed == {7} and shell.service.board_messages == {7: 1}

    shell.board.pressed(7, 2)  # ...until a player presses a button on it
    await shell.settle()
    assert shell.service.replaced == {7: 2}
    shell.board.lease_ms = 0  # its worker, had it lived, would have recorded it by now
    await shell.board.redeliver()
    await shell.settle()

    assert [c.args["message_id"] for c in shell.bot.of("delete_message")] == [2]
    assert shell.service.replaced == {}
    assert shell.service.board_messages == {7: 1}


async def test_a_press_on_the_board_this_process_knows_looks_nothing_up(
    shell: BoardShell,
) -> None:
    await shell.posted()
    looked = len(shell.service.called("board_message"))

    shell.board.pressed(7, 1)
    await shell.settle()

    assert len(shell.service.called("board_message")) == looked
    assert shell.service.called("mark_stray_board") == []
    # One this process does not know as the board is looked up, and left if it is.
    shell.board.pressed(8, 5)
    shell.service.board_messages[8] = 5
    await shell.settle()
    assert shell.service.replaced == {}

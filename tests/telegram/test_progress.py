"""RoundProgress: publishing what a command or deadline did (refusals, board, results,
timers, refreshes; a phase opening as a new board message, the end of a round at once),
deadlines applied under the chat's urgent turn, the bounded sweep, and recovery at
start-up. The collaborators are the real ones, over a fake Bot, service
and timers."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable

import pytest

from bot.engine import round as engine
from bot.engine.errors import GameError
from bot.engine.round import (
    DealerChosen,
    Phase,
    RetiredShoe,
    Round,
    RoundSettled,
    RoundStarted,
    RoundState,
    RoundVoided,
    ShoeRef,
)
from bot.engine.settings import Settings
from bot.service.game import CommandResult
from bot.telegram.board import Board
from bot.telegram.deadlines import Deadlines
from bot.telegram.delivery import ChatOutbox
from bot.telegram.i18n import translate
from bot.telegram.lookups import ChatSettings, People
from bot.telegram.messenger import Messenger
from bot.telegram.ordering import ChatLocks
from bot.telegram.progress import (
    FORGET_UPDATES_SECONDS,
    STANDING_BETS_EVERY_SWEEPS,
    RoundProgress,
)
from bot.telegram.replies import Replies
from tests.helpers.telegram import (
    GROUP,
    OTHER_GROUP,
    T0_MS,
    FakeBot,
    FakeService,
    FakeTimers,
    MillisecondsClock,
    eventually,
    new_round,
    spin,
    voided,
    with_bid,
)

SWEEP_SECONDS = 1.0


class Observer:
    """Records the deadlines looked at."""

    def __init__(self) -> None:
        self.advanced_rounds: list[tuple[int, bool, float, float]] = []

    def scheduled(self, state: RoundState) -> None:
        pass

    def advanced(
        self,
        round_id: int,
        result: CommandResult,
        *,
        by_timer: bool,
        entered_ms: float,
        applied_ms: float,
    ) -> None:
        self.advanced_rounds.append((round_id, by_timer, entered_ms, applied_ms))


class ProgressShell:
    """RoundProgress and its collaborators over a fake Bot, service and timers."""

    def __init__(self, *, sweep_concurrency: int = 8, edit_seconds: float = 0.0) -> None:
        self.bot = FakeBot()
        self.service = FakeService()
        self.queue = FakeTimers()
        self.observer = Observer()
        self.locks = ChatLocks()
        messenger = Messenger()
        messenger.attach(self.bot)
        self.outbox = ChatOutbox()
        service = self.service
        chats = ChatSettings(service)
        self.board = Board(
            service,
            messenger,
            self.outbox,
            chats,
            People(service),
            edit_seconds=edit_seconds,
            lease_seconds=10.0,
            clock=MillisecondsClock(),
        )
        self.deadlines = Deadlines(MillisecondsClock(), self.observer)
        self.progress = RoundProgress(
            service,
            self.locks,
            self.board,
            self.deadlines,
            Replies(messenger, self.outbox, chats),
            sweep_seconds=SWEEP_SECONDS,
            sweep_concurrency=sweep_concurrency,
            observer=self.observer,
        )
        self.deadlines.attach(self.queue, self.progress.advance, self.progress.start_due)

    async def settle(self) -> None:
        await self.board.drain(5.0)
        await self.outbox.drain(5.0)

    def timer_of(self, round_id: int) -> float | None:
        """When the round's active timer fires (seconds from the test's now), if any."""
        jobs = [job for job in self.queue.active if job.name == f"deadline:{round_id}"]
        assert len(jobs) <= 1
        return jobs[0].when if jobs else None

    def posted(self, state: Round) -> None:
        """``state`` is in the database, its board posted as message 1."""
        self.service.put(state)
        self.service.board_messages[state.id] = 1


@pytest.fixture
def shell() -> ProgressShell:
    return ProgressShell()


def started(round_id: int = 7, chat_id: int = GROUP) -> tuple[Round, CommandResult]:
    """A round that just started, and the result that started it."""
    transition = new_round(round_id, chat_id)
    return transition.round, CommandResult(transition.round, transition.events)


# -- publish ------------------------------------------------------------------------------


async def test_a_round_that_could_not_start_by_itself_is_explained(shell: ProgressShell) -> None:
    shell.progress.publish(GROUP, CommandResult(refused=GameError("table_closed")))
    await eventually(lambda: len(shell.bot.texts) == 1)

    assert shell.bot.texts == [translate("en", "error.table_closed")]


async def test_a_started_round_gets_its_board_and_its_timer(shell: ProgressShell) -> None:
    state, result = started()
    shell.service.put(state)

    shell.progress.publish(GROUP, result)
    await shell.settle()

    assert shell.service.board_messages == {7: 1}
    assert shell.timer_of(7) == 18.0
    assert shell.bot.of("edit_message_text") == []  # a new board needs no edit


async def test_a_change_refreshes_the_board_and_keeps_the_timer(shell: ProgressShell) -> None:
    state, result = started()
    shell.posted(state)
    shell.progress.publish(GROUP, result)
    transition = engine.bid(state, 11, 1_000, free_chips=10**9, now_ms=state.deadline_ms - 1)
    shell.service.put(transition.round)

    shell.progress.publish(GROUP, CommandResult(transition.round, transition.events))
    await shell.settle()

    (edit,) = shell.bot.of("edit_message_text")
    assert edit.args["message_id"] == 1
    assert len(shell.queue.jobs) == 1 and shell.timer_of(7) == 18.0


def voided_after_its_start(shell: ProgressShell) -> tuple[Round, RoundVoided]:
    """Round 7, started and published with its board posted, then voided (in the fake
    service, not yet published)."""
    state, result = started()
    shell.posted(state)
    shell.progress.publish(GROUP, result)
    ended, event = voided(state)
    shell.service.put(ended)
    return ended, event


async def test_a_round_that_ended_gets_its_results_and_last_edit_and_loses_its_timer(
    shell: ProgressShell,
) -> None:
    ended, event = voided_after_its_start(shell)

    shell.progress.publish(GROUP, CommandResult(ended, (event,)))
    await shell.settle()

    assert shell.service.announced == {7}
    assert len(shell.bot.texts) == 1  # the results (the board was posted before)
    assert len(shell.bot.of("edit_message_text")) == 1
    assert shell.timer_of(7) is None and len(shell.deadlines) == 0


async def test_a_round_that_ended_with_a_pause_times_the_next_start_which_starts_it(
    shell: ProgressShell,
) -> None:
    ended, event = voided_after_its_start(shell)
    following, following_started = started(8)
    shell.service.put(following)
    shell.service.start_results[GROUP] = following_started
    pause_ends_ms = shell.deadlines.clock() + 2_000

    shell.progress.publish(GROUP, CommandResult(ended, (event,), next_round_at_ms=pause_ends_ms))
    await shell.settle()
    (pause,) = [job for job in shell.queue.active if job.name == f"next round:{GROUP}"]
    assert pause.when == 2.0
    await pause.run()
    await shell.settle()

    assert [call.args for call in shell.service.called("start_due_round")] == [(GROUP,)]
    assert shell.service.board_messages[8] is not None
    assert shell.timer_of(8) == 18.0


async def test_a_duplicate_update_publishes_nothing(shell: ProgressShell) -> None:
    state, result = started()
    shell.service.put(state)

    shell.progress.publish(GROUP, dataclasses.replace(result, duplicate=True))
    await shell.settle()

    assert shell.bot.calls == []
    assert shell.service.calls == []
    assert shell.queue.jobs == []


async def test_a_redeal_announces_the_old_round_and_posts_and_times_the_new_one(
    shell: ProgressShell,
) -> None:
    old, _ = started(7)
    shell.posted(old)
    ended, event = voided(old)
    new = new_round(8)
    shell.service.put(ended)
    shell.service.put(new.round)

    shell.progress.publish(
        GROUP, CommandResult(ended, (event,), started=new.round, started_events=new.events)
    )
    await shell.settle()

    assert shell.service.announced == {7}
    assert 8 in shell.service.board_messages
    assert shell.timer_of(8) == 18.0


async def test_a_new_shoe_is_announced_before_the_rounds_board(shell: ProgressShell) -> None:
    state = dataclasses.replace(new_round(7).round, shoe=ShoeRef(5, b"\x02" * 32, 0))
    shell.service.put(state)
    event = RoundStarted(state.commitment, state.deadline_ms, RetiredShoe(4, b"\x01" * 32))

    shell.progress.publish(GROUP, CommandResult(state, (event,)))
    await shell.settle()

    notice = translate("en", "shoe.replaced", shoe_id=5, old_id=4, seed="01" * 32)
    assert shell.bot.texts[0] == notice
    assert shell.service.board_messages == {7: 2}


# -- what shows on the board --------------------------------------------------------------

#: Board edits wait a minute here: what shows sooner did not wait for the throttle.
THROTTLED = 60.0


async def posted_by_publishing(shell: ProgressShell, state: Round) -> None:
    """Publish ``state`` (just started): its board is posted as message 1 and the chat's
    throttle starts from that post."""
    shell.service.put(state)
    shell.progress.publish(GROUP, CommandResult(state, new_round(state.id).events))
    await shell.settle()
    assert shell.service.board_messages == {state.id: 1}


def step(shell: ProgressShell, transition: engine.Transition[Round]) -> CommandResult:
    """The database has the transition's round; the result that did it."""
    shell.service.put(transition.round)
    return CommandResult(transition.round, transition.events)


async def stop_throttled_edits(shell: ProgressShell) -> None:
    shell.board.cancel_edits()
    await shell.board.drain(5.0)


def a_bid(state: Round) -> engine.Transition[Round]:
    return engine.bid(state, 11, 1_000, free_chips=10**9, now_ms=state.deadline_ms - 1)


def a_bet(state: Round) -> engine.Transition[Round]:
    bidding = with_bid(state, 11, 1_000)
    betting = engine.advance(bidding, bidding.deadline_ms, player_seeds={}).round
    return engine.bet(betting, 12, 500, free_chips=10**9, now_ms=betting.deadline_ms - 1)


@pytest.mark.parametrize("change", [a_bid, a_bet], ids=["bid", "bet"])
async def test_a_bid_or_a_bet_rides_the_throttled_edit(
    change: Callable[[Round], engine.Transition[Round]],
) -> None:
    # (With no throttle it is edited in at once: test_a_change_refreshes_the_board...)
    shell = ProgressShell(edit_seconds=THROTTLED)
    state = new_round(7).round
    await posted_by_publishing(shell, state)

    shell.progress.publish(GROUP, step(shell, change(state)))
    await shell.outbox.drain(5.0)

    assert shell.bot.of("edit_message_text") == []  # it waits for the throttle
    assert len(shell.bot.texts) == 1
    await stop_throttled_edits(shell)


async def test_grabbing_opens_on_a_new_board_message(shell: ProgressShell) -> None:
    await posted_by_publishing(shell, new_round(7).round)
    bidding = with_bid(new_round(7).round, 11, 1_000)
    bets_open = engine.advance(bidding, bidding.deadline_ms, player_seeds={}).round
    bet = engine.bet(bets_open, 12, 500, free_chips=10**9, now_ms=bets_open.deadline_ms - 1)
    opened = step(shell, engine.advance(bet.round, bet.round.deadline_ms, player_seeds={}))
    assert opened.round is not None and opened.round.phase is Phase.GRABBING

    shell.progress.publish(GROUP, opened)
    await shell.settle()

    reposted = shell.bot.of("send_message")[1]
    assert "Grab" in reposted.args["text"]
    assert [c.args["message_id"] for c in shell.bot.of("delete_message")] == [1]
    assert shell.bot.of("edit_message_text") == []
    assert shell.service.board_messages == {7: 2}
    assert shell.timer_of(7) == (bet.round.deadline_ms + 20_000 - T0_MS) / 1000


async def test_betting_opens_on_a_new_board_message_past_the_throttle() -> None:
    shell = ProgressShell(edit_seconds=THROTTLED)
    state = new_round(7).round
    await posted_by_publishing(shell, state)
    bidding = with_bid(state, 11, 1_000)
    shell.service.put(bidding)
    opened = step(shell, engine.advance(bidding, bidding.deadline_ms, player_seeds={}))

    shell.progress.publish(GROUP, opened)
    await shell.settle()

    assert len(shell.bot.texts) == 2
    assert "Betting" in shell.bot.texts[1]
    assert [c.args["message_id"] for c in shell.bot.of("delete_message")] == [1]


def ended_without_bids() -> engine.Transition[Round]:
    state = new_round(7).round
    return engine.advance(state, state.deadline_ms, player_seeds={})


def settled_after_grabbing() -> engine.Transition[Round]:
    bidding = with_bid(new_round(7).round, 11, 1_000)
    state = engine.advance(bidding, bidding.deadline_ms, player_seeds={}).round
    state = engine.bet(state, 12, 500, free_chips=10**9, now_ms=state.deadline_ms - 1).round
    state = engine.advance(state, state.deadline_ms, player_seeds={}).round
    return engine.advance(
        state, state.deadline_ms, player_seeds={}
    )  # nobody grabbed: grabbed for them


def card_round_dealt() -> engine.Transition[Round]:
    settings = dataclasses.replace(Settings(), ruleset="bullbull")
    bidding = new_round(7, settings=settings).round
    bidding = engine.bid(bidding, 11, 50_000, free_chips=10**9, now_ms=T0_MS + 1).round
    state = engine.advance(bidding, bidding.deadline_ms, player_seeds={}).round
    state = engine.bet(state, 12, 1_000, free_chips=10**9, now_ms=state.deadline_ms - 1).round
    return engine.advance(
        state, state.deadline_ms, player_seeds={}
    )  # dealt and settled in one step


@pytest.mark.parametrize(
    "ending",
    [ended_without_bids, settled_after_grabbing, card_round_dealt],
    ids=["voided", "settled", "card round dealt"],
)
async def test_the_end_of_a_round_shows_on_the_board_at_once_past_the_throttle(
    ending: Callable[[], engine.Transition[Round]],
) -> None:
    shell = ProgressShell(edit_seconds=THROTTLED)
    transition = ending()
    await posted_by_publishing(shell, new_round(7, settings=transition.round.settings).round)
    assert not transition.round.phase.is_open
    assert any(isinstance(e, (RoundSettled, RoundVoided)) for e in transition.events)

    shell.progress.publish(GROUP, step(shell, transition))
    await shell.outbox.drain(5.0)

    (edit,) = shell.bot.of("edit_message_text")
    assert edit.args["message_id"] == 1
    assert edit.args["reply_markup"] is None  # no buttons on a round that ended
    assert shell.bot.of("delete_message") == []  # shown on the board it has, not reposted
    await stop_throttled_edits(shell)


async def test_a_phase_that_opened_on_a_round_that_ended_in_the_same_step_is_not_reposted() -> None:
    # No step does both today; were one to (a ruleset voiding at once), the round's board
    # shows how it ended, on the message it has.
    shell = ProgressShell(edit_seconds=THROTTLED)
    state = new_round(7).round
    await posted_by_publishing(shell, state)
    ended, void = voided(with_bid(state, 11, 1_000))
    opened = DealerChosen(11, 1_000, state.deadline_ms + 40_000)
    shell.service.put(ended)

    shell.progress.publish(GROUP, CommandResult(ended, (opened, void)))
    await shell.outbox.drain(5.0)

    assert len(shell.bot.of("edit_message_text")) == 1
    assert shell.bot.of("delete_message") == []
    assert shell.service.board_messages == {7: 1}
    await stop_throttled_edits(shell)


# -- deadlines ----------------------------------------------------------------------------


async def test_a_deadline_goes_before_the_chats_waiting_commands(shell: ProgressShell) -> None:
    order: list[str] = []

    async def on_advance(round_id: int) -> None:
        order.append("deadline")

    shell.service.on_advance = on_advance
    holding = asyncio.Event()
    done = asyncio.Event()

    async def command(name: str) -> None:
        async with shell.locks.turn(GROUP):
            order.append(name)
            if name == "running":
                holding.set()
                await done.wait()

    running = asyncio.create_task(command("running"))
    await holding.wait()
    waiting = asyncio.create_task(command("waiting"))
    await spin()  # it waits for its turn
    deadline = asyncio.create_task(shell.progress.advance(7, GROUP))
    await spin()
    assert order == ["running"]  # the deadline waits for the command being handled

    done.set()
    await asyncio.gather(running, waiting, deadline)

    assert order == ["running", "deadline", "waiting"]
    assert len(shell.locks) == 0


async def test_a_timer_applies_its_deadline_publishes_it_and_tells_the_observer(
    shell: ProgressShell,
) -> None:
    bidding = with_bid(new_round(7).round, 11, 1_000)
    shell.posted(bidding)
    shell.deadlines.schedule(bidding)
    transition = engine.advance(
        bidding, bidding.deadline_ms, player_seeds={}
    )  # 11 deals; betting opens
    shell.service.put(transition.round)
    shell.service.advance_results[7] = CommandResult(transition.round, transition.events)

    await shell.queue.named("deadline:7").run()
    await shell.settle()

    assert [call.args for call in shell.service.called("advance")] == [(7,)]
    ((round_id, by_timer, entered_ms, applied_ms),) = shell.observer.advanced_rounds
    assert (round_id, by_timer) == (7, True)
    assert entered_ms <= applied_ms
    assert shell.timer_of(7) == 18.0 + 40.0  # the betting deadline
    # Betting opens on a new board message (it notifies); the old one goes.
    (reposted,) = shell.bot.of("send_message")
    assert "Betting" in reposted.args["text"]
    assert len(shell.bot.of("delete_message")) == 1
    assert shell.bot.of("edit_message_text") == []


async def test_a_deadline_whose_phase_no_board_shows_yet_waits(shell: ProgressShell) -> None:
    shell.service.unseen.add(7)  # its worker died before showing it, or Telegram is down

    await shell.progress.advance(7, GROUP)

    assert [call.args for call in shell.service.called("phase_unseen")] == [(7,)]
    assert shell.service.called("advance") == []
    shell.service.unseen.clear()  # shown (its window opened anew): applied when due
    await shell.progress.advance(7, GROUP)
    assert [call.args for call in shell.service.called("advance")] == [(7,)]


async def test_a_timers_deadline_of_a_phase_this_process_showed_needs_no_look(
    shell: ProgressShell,
) -> None:
    state, result = started()
    shell.service.put(state)
    shell.service.unseen.add(7)  # as the database would say, were the look made
    # No board of it shown by this process (another worker's): the look is made, and
    # holds the deadline.
    shell.deadlines.schedule(state)
    await shell.queue.named("deadline:7").run()
    assert [call.args for call in shell.service.called("phase_unseen")] == [(7,)]
    assert shell.service.called("advance") == []

    # Its board posted here, showing bidding: the timer applies bidding's deadline
    # without the look (a round that left bidding meanwhile is not moved on by it).
    shell.progress.publish(GROUP, result)
    await shell.settle()
    timer = shell.queue.jobs[-1]
    assert timer.name == "deadline:7" and not timer.removed
    await timer.run()
    assert len(shell.service.called("phase_unseen")) == 1
    assert [call.args for call in shell.service.called("advance")] == [(7,)]
    assert shell.service.advanced_phases == [Phase.BIDDING]


async def test_a_deadline_the_sweep_found_is_not_by_timer(shell: ProgressShell) -> None:
    await shell.progress.advance(7, GROUP)

    assert [entry[:2] for entry in shell.observer.advanced_rounds] == [(7, False)]
    assert shell.service.advanced_phases == [None]  # whichever phase is due


async def test_the_next_round_starts_as_urgent_work_and_its_board_is_delivered_as_urgent(
    shell: ProgressShell,
) -> None:
    state, result = started(8)
    shell.service.put(state)
    shell.service.start_results[GROUP] = result

    await shell.progress.start_due(GROUP)
    await shell.settle()

    (start,) = shell.service.called("start_due_round")
    assert start.urgent
    # The board shows the deadline that started the round (Board's own urgency).
    assert [call.urgent for call in shell.service.called("claim_board")] == [True]
    assert shell.service.board_messages == {8: 1}
    assert shell.timer_of(8) == 18.0


# -- catching up --------------------------------------------------------------------------


async def test_catch_up_advances_overdue_rounds_side_by_side_but_at_most_so_many_at_once() -> None:
    shell = ProgressShell(sweep_concurrency=3)
    shell.service.due = [(round_id, -round_id) for round_id in range(1, 11)]  # ten chats
    running = 0
    most = 0
    go_on = asyncio.Event()

    async def on_advance(round_id: int) -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await go_on.wait()
        running -= 1

    shell.service.on_advance = on_advance
    sweep = asyncio.create_task(shell.progress.catch_up())
    await eventually(lambda: running == 3)
    await asyncio.sleep(0.01)
    assert running == 3  # no fourth while three are under way

    go_on.set()
    await sweep

    assert most == 3
    advanced = [call.args[0] for call in shell.service.called("advance")]
    assert sorted(advanced) == list(range(1, 11))


async def test_catch_up_starts_the_rounds_whose_pause_is_over(shell: ProgressShell) -> None:
    shell.service.due_chats = [GROUP, OTHER_GROUP]

    await shell.progress.catch_up()

    assert [call.args for call in shell.service.called("start_due_round")] == [
        (GROUP,),
        (OTHER_GROUP,),
    ]


async def test_a_chat_that_fails_holds_up_no_other_and_is_logged(
    shell: ProgressShell, caplog: pytest.LogCaptureFixture
) -> None:
    shell.service.due = [(1, GROUP), (2, OTHER_GROUP)]
    shell.service.due_chats = [-1003]

    async def on_advance(round_id: int) -> None:
        if round_id == 1:
            raise RuntimeError("database went away")

    shell.service.on_advance = on_advance
    with caplog.at_level(logging.ERROR, logger="bot.telegram.progress"):
        await shell.progress.catch_up()

    assert [call.args for call in shell.service.called("advance")] == [(1,), (2,)]
    assert [call.args for call in shell.service.called("start_due_round")] == [(-1003,)]
    assert "database went away" in caplog.text
    assert len(shell.locks) == 0


async def test_the_sweep_redelivers_and_survives_a_failed_lookup(
    shell: ProgressShell, caplog: pytest.LogCaptureFixture
) -> None:
    state, _ = started()
    shell.service.put(state)
    shell.service.unposted = [(7, GROUP)]
    await shell.progress.sweep()
    await shell.settle()
    assert shell.service.board_messages == {7: 1}

    async def fail() -> None:
        raise RuntimeError("database went away")

    shell.service.on_redeliver_lookup = fail
    with caplog.at_level(logging.ERROR, logger="bot.telegram.progress"):
        await shell.progress.sweep()  # does not raise

    assert "database went away" in caplog.text


# -- start-up -----------------------------------------------------------------------------


async def test_recover_sends_what_was_left_finishes_overdue_rounds_and_times_open_ones(
    shell: ProgressShell,
) -> None:
    finished, event = voided(new_round(6).round)
    open_ones = [new_round(7).round, new_round(8, OTHER_GROUP).round]
    for state in open_ones:
        shell.service.put(state)
    shell.service.unannounced_rounds = [(finished, event)]
    shell.service.due = [(5, GROUP)]
    shell.service.open = open_ones
    shell.service.unposted = [(7, GROUP)]

    reopened = await shell.progress.recover(shell.queue)
    await shell.settle()

    assert reopened == 2
    assert shell.service.announced == {6}
    assert [call.args for call in shell.service.called("advance")] == [(5,)]
    assert shell.timer_of(7) == 18.0 and shell.timer_of(8) == 18.0
    assert set(shell.service.board_messages) == {7}
    order = [call.name for call in shell.service.calls if call.name != "claim_announcement"]
    assert order.index("unannounced") < order.index("advance") < order.index("open_rounds")
    assert order.index("open_rounds") < order.index("unposted_boards")
    sweep = shell.queue.named("sweep")
    assert (sweep.interval, sweep.first) == (SWEEP_SECONDS, SWEEP_SECONDS)
    forget = shell.queue.named("forget old updates")
    assert (forget.interval, forget.first) == (FORGET_UPDATES_SECONDS, 0)


async def test_the_sweep_and_forget_jobs_do_their_work(
    shell: ProgressShell, caplog: pytest.LogCaptureFixture
) -> None:
    await shell.progress.recover(shell.queue)
    shell.service.calls.clear()
    shell.service.old_updates = 12

    await shell.queue.named("sweep").run()
    with caplog.at_level(logging.INFO, logger="bot.telegram.progress"):
        await shell.queue.named("forget old updates").run()

    names = [call.name for call in shell.service.calls]
    assert names[:2] == ["due_rounds", "due_chat_ids"]
    assert {"unannounced", "unposted_boards", "forget_old_updates"} <= set(names)
    assert "forgot 12 processed updates" in caplog.text


async def test_every_few_sweeps_standing_bets_a_window_missed_are_placed(
    shell: ProgressShell, caplog: pytest.LogCaptureFixture
) -> None:
    shell.service.autobet_failure = RuntimeError("database went away")
    with caplog.at_level(logging.ERROR, logger="bot.telegram.progress"):
        for _ in range(2 * STANDING_BETS_EVERY_SWEEPS):
            await shell.progress.sweep()  # a failed placing does not stop the sweep
    assert len(shell.service.called("place_due_autobets")) == 2
    assert "database went away" in caplog.text

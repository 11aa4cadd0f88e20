"""What follows a command or a deadline: telling the group (board, results, refusals),
timing the next deadline, and catching up on rounds whose deadline passed unseen."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable

from telegram.ext import ContextTypes

from bot.engine.round import (
    CardsDealt,
    DealerChosen,
    GrabbingStarted,
    Phase,
    Round,
    RoundSettled,
    RoundStarted,
    RoundState,
    RoundVoided,
)
from bot.priority import urgent
from bot.service.game import CommandResult
from bot.telegram.autobet_notices import AutobetNotices
from bot.telegram.board import Board
from bot.telegram.deadlines import DeadlineObserver, Deadlines
from bot.telegram.observers import ShellObserver, Unobserved
from bot.telegram.ordering import ChatLocks
from bot.telegram.outages import OutageLog, database_unavailable_here
from bot.telegram.replies import Replies
from bot.telegram.service_needs import ProgressService
from bot.telegram.telegram_needs import Timers

log = logging.getLogger(__name__)

#: Overdue rounds the sweep advances at once: enough to keep the database busy (they
#: queue for SQLite's one writer anyway), few enough that a thousand overdue rounds after
#: a restart neither open a thousand transactions nor starve the pool.
SWEEP_CONCURRENCY = 8
#: How often processed updates past their window are forgotten.
FORGET_UPDATES_SECONDS = 3600.0
#: Sweeps between two looks for betting windows whose standing bets were not placed (their
#: placing failed as the window opened): one statement, so not every second.
STANDING_BETS_EVERY_SWEEPS = 5
#: Sweeps between two looks for kept answers whose worker stopped holding them.
KEPT_ANSWERS_EVERY_SWEEPS = 2


#: Events after which the board must show the round's new phase without delay.
PHASE_CHANGES = (DealerChosen, GrabbingStarted, CardsDealt, RoundSettled, RoundVoided)


class RoundProgress:
    """Moves rounds on: applies deadlines under their chat's turn, publishes what every
    command and deadline did, and sweeps for what a lost timer or a dead worker left."""

    def __init__(
        self,
        service: ProgressService,
        locks: ChatLocks,
        board: Board,
        deadlines: Deadlines,
        replies: Replies,
        *,
        sweep_seconds: float,
        sweep_concurrency: int = SWEEP_CONCURRENCY,
        observer: DeadlineObserver | None = None,
        shell_observer: ShellObserver | None = None,
        autobet_notices: AutobetNotices | None = None,
    ) -> None:
        self.service = service
        self.locks = locks
        self.board = board
        self.deadlines = deadlines
        self.replies = replies
        self.sweep_seconds = sweep_seconds
        self.sweep_concurrency = sweep_concurrency
        self.observer = observer
        self.shell_observer: ShellObserver = shell_observer or Unobserved()
        self.autobet_notices = autobet_notices
        self._sweeps = 0
        self._outages = OutageLog(log)
        board.window_moved = self.window_moved

    def publish(self, chat_id: int, result: CommandResult) -> None:
        """Tell the group what a command or deadline did (through the chat's outbox, so
        the caller never waits on Telegram) and time the next deadline."""
        if result.refused is not None:
            self.replies.tell_error(chat_id, result.refused)
        state = result.round
        if state is None or result.duplicate:
            return
        for event in result.events:
            if isinstance(event, RoundStarted):
                if event.retired_shoe is not None:
                    self.board.shoe_replaced(state, event)
                self.board.post(chat_id, state.id)
            elif isinstance(event, (RoundSettled, RoundVoided)):
                assert isinstance(state, Round)  # the engine ends a whole round only
                self.board.announce(state, event)
                void_reason = event.reason.value if isinstance(event, RoundVoided) else None
                self.shell_observer.round_ended(state.id, state.settings.ruleset, void_reason)
        self.deadlines.schedule(state)
        if result.next_round_at_ms is not None:
            self.deadlines.schedule_start(chat_id, result.next_round_at_ms)
        self._show_on_board(state, result)
        self._show_autobets(chat_id, result)
        if result.started is not None:
            for event in result.started_events:
                if isinstance(event, RoundStarted) and event.retired_shoe is not None:
                    self.board.shoe_replaced(result.started, event)
            self.board.post(chat_id, result.started.id)
            self.deadlines.schedule(result.started)

    def window_moved(self, result: CommandResult) -> None:
        """A window opened later, when its board reached the group: time its deadline
        again (the one timed before finds it not due, and does nothing)."""
        if result.round is not None:
            self.deadlines.schedule(result.round)

    def _show_autobets(self, chat_id: int, result: CommandResult) -> None:
        """Standing bets placed by themselves (not as betting opened, whose new board
        shows them) ride the throttled edit; those that stopped are named to the group."""
        run = result.autobets
        if run is None:
            return
        if run.placed and not result.events:
            self.board.refresh(run.round)
        if self.autobet_notices is not None:
            self.autobet_notices.stopped(chat_id, run)

    def _show_on_board(self, state: RoundState, result: CommandResult) -> None:
        """A new phase for players to act in is a new board message (it notifies); the end
        of a round shows at once; anything else (a bet) rides the throttled edit."""
        events = result.events
        if not events or any(isinstance(e, RoundStarted) for e in events):
            return  # nothing changed, or the round's first board is on its way
        opened = any(isinstance(e, (DealerChosen, GrabbingStarted)) for e in events)
        if opened and state.phase.is_open:
            self.board.repost(state)
            return
        if any(isinstance(e, PHASE_CHANGES) for e in events):
            self.board.refresh(state, at_once=True)
        else:
            self.board.refresh(state)

    async def advance(
        self, round_id: int, chat_id: int, *, by_timer: bool = False, phase: Phase | None = None
    ) -> None:
        """Apply a round's deadline under its chat's turn, before the chat's waiting
        commands, and before other chats' commands waiting for the database; ``phase``:
        only that phase's (a timer set for it)."""
        entered_ms = time.time_ns() / 1e6
        async with self.locks.turn(chat_id, urgent=True):
            # A phase this process showed needs no look (one read less per deadline).
            if phase is None or not self.board.shows(round_id, phase):
                with urgent():
                    if await self.service.phase_unseen(round_id):
                        # docs/rules.md §1: no board shows the phase yet (its worker died,
                        # or Telegram is unreachable); it opens anew when one does.
                        return
            # GameService.advance is urgent itself (its database turn comes first too).
            result = await self.service.advance(round_id, phase)
            if self.observer is not None:
                self.observer.advanced(
                    round_id,
                    result,
                    by_timer=by_timer,
                    entered_ms=entered_ms,
                    applied_ms=time.time_ns() / 1e6,
                )
            self.publish(chat_id, result)

    async def start_due(self, chat_id: int) -> None:
        """Start the chat's next round, its pause being over."""
        async with self.locks.turn(chat_id, urgent=True):
            with urgent():  # the pause's end is a deadline too
                result = await self.service.start_due_round(chat_id)
            self.publish(chat_id, result)  # outside: tasks it starts must not inherit it

    async def catch_up(self) -> None:
        """Advance overdue rounds (lost or late timers) and start rounds whose pause is
        over, chats side by side (at most ``sweep_concurrency`` at once), so one busy chat
        holds up no other."""
        bound = asyncio.Semaphore(self.sweep_concurrency)

        async def bounded(work: Awaitable[None]) -> None:
            async with bound:
                await work

        # The looks are urgent work, as the deadlines they stand in for: in a flood of
        # commands they would otherwise wait for the hot path's connections behind them.
        with urgent():
            due = await self.service.due_rounds()
        outcomes = await asyncio.gather(
            *(bounded(self.advance(round_id, chat_id)) for round_id, chat_id in due),
            return_exceptions=True,
        )
        with urgent():  # after the advances, which may have ended a pause's round
            due_chats = await self.service.due_chat_ids()
        outcomes += await asyncio.gather(
            *(bounded(self.start_due(chat_id)) for chat_id in due_chats),
            return_exceptions=True,
        )
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                if database_unavailable_here(outcome):
                    self._outages.unavailable("sweep (the next one tries again)", outcome)
                else:
                    log.error("sweep: a chat failed; the next sweep tries again", exc_info=outcome)

    async def sweep(self) -> None:
        """Catch up, then send the boards and results whose sender died (and now and then
        place the standing bets a window that is still open did not get)."""
        await self.catch_up()
        self._sweeps += 1
        if self._sweeps % STANDING_BETS_EVERY_SWEEPS == 0:
            await self._place_missed_standing_bets()
        try:
            with urgent():  # what shows deadlines, as above
                await self.board.redeliver()
        except Exception:
            log.exception("sweep: looking for undelivered messages failed; next sweep again")
        await self._answers_kept(look=self._sweeps % KEPT_ANSWERS_EVERY_SWEEPS == 0)

    async def _answers_kept(self, *, look: bool) -> None:
        """Hold on to the answers this worker keeps, and (``look``) take over those no
        worker holds any more."""
        try:
            await self.replies.keep_claims()
            if look:
                await self.replies.resume_kept()
        except Exception as error:  # the database is down: the next sweep tries again
            log.warning("sweep: kept answers: %s; next sweep again", error)

    async def recover(self, queue: Timers) -> int:
        """After start-up: send what a stopped process left unsent, finish overdue rounds,
        time the open ones, and start the sweep; the number of open rounds."""
        resumed = await self.replies.resume_kept()
        if resumed:
            log.info("%d answers kept by a stopped worker go out now", resumed)
        for state, ended in await self.service.unannounced():
            # Stopped (or crashed) before Telegram had a round's results: send them now.
            # Those a worker was sending when it died follow once its lease ran out (sweep).
            self.board.announce(state, ended)
        # Overdue rounds are advanced side by side (bounded), as the sweep does.
        await self.catch_up()
        # A window that opened just before the stop has its standing bets now.
        await self._place_missed_standing_bets()
        open_rounds = await self.service.open_rounds()
        for state in open_rounds:
            self.deadlines.schedule(state)
        for round_id, chat_id in await self.service.unposted_boards():
            # Stopped before Telegram had a round's board: post it now (unless publishing
            # it above got there first: posting is claimed).
            self.board.post(chat_id, round_id)
        queue.run_repeating(
            self._sweep_job, interval=self.sweep_seconds, first=self.sweep_seconds, name="sweep"
        )
        queue.run_repeating(
            self._forget_old_updates_job,
            interval=FORGET_UPDATES_SECONDS,
            first=0,
            name="forget old updates",
        )
        return len(open_rounds)

    async def _place_missed_standing_bets(self) -> None:
        """Place the standing bets of rounds taking bets that have not had them."""
        try:
            results = await self.service.place_due_autobets()
        except Exception:
            log.exception("placing missed standing bets failed; the next sweep tries again")
            return
        for result in results:
            assert result.round is not None
            self.publish(result.round.chat_id, result)

    async def _sweep_job(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        await self.sweep()

    async def _forget_old_updates_job(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        forgotten = await self.service.forget_old_updates()
        if forgotten:
            log.info("forgot %d processed updates past their window", forgotten)

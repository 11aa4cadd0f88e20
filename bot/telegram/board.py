"""The round's messages in the group: the live board (posted, then edited as the round
moves), the results, and the notice that a shoe was replaced."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TypeVar

from cachetools import TTLCache
from telegram import InlineKeyboardMarkup

from bot.engine.round import (
    WINDOW_LATE_MS,
    Phase,
    Round,
    RoundSettled,
    RoundStarted,
    RoundVoided,
    window_ms,
)
from bot.engine.settings import MAX_WINDOW_SECONDS
from bot.priority import urgent
from bot.service.game import BOARD_REFUSED, CommandResult
from bot.telegram.budget import ROOM_KEPT_FOR_ROUNDS, Priority
from bot.telegram.delivery import ChatOutbox
from bot.telegram.lookups import ChatSettings, People
from bot.telegram.messenger import Edit, Messenger
from bot.telegram.results import ResultsMessage
from bot.telegram.service_needs import BoardService
from bot.telegram.views import Views

log = logging.getLogger(__name__)
_T = TypeVar("_T")

#: Boards remembered at once (their message id and what they show): every open round's.
BOARDS_CACHED = 20_000
#: How long a board is remembered at most. A round's last edit forgets it; this bounds
#: what a round whose end this process never saw (another worker's) keeps: after it, the
#: message id is read from the database and what it shows is sent again.
BOARD_CACHE_SECONDS = 4 * MAX_WINDOW_SECONDS
#: How far behind the bot's overall rate may be for a phase to be shown as a new board
#: message: beyond it, every group's new boards would come later than an edit would.
REPOST_BACKLOG_SECONDS = 1.0

Rendered = tuple[str, InlineKeyboardMarkup | None]


def board_people(state: Round) -> list[int]:
    """Everyone a round's board names: bettors, the high bidder, the dealer."""
    ids = [bet.user_id for bet in state.bets]
    ids += [user for user in (state.high_bidder, state.dealer_id) if user is not None]
    return ids


class Board:
    """Posts each round's board once, keeps it up to date (at most one edit per chat every
    ``edit_seconds``, the latest state each time), and posts the results and shoe notices,
    all through the chat's outbox so that no caller waits on Telegram.

    A board and the results are delivered at least once: the service's claim and lease
    make sure one worker sends each, and the sweep (``redeliver``) sends those whose
    worker died.

    What shows the group a deadline (a round's board, a new phase, the results) reads and
    writes the database as urgent work, as the deadline's advance itself does: before
    the commands waiting for it, so that a flood of bets does not hold up what everyone
    waits to see. A bet list's edit is ordinary work.
    """

    def __init__(
        self,
        service: BoardService,
        messenger: Messenger,
        outbox: ChatOutbox,
        chats: ChatSettings,
        people: People,
        *,
        edit_seconds: float,
        lease_seconds: float,
        clock: Callable[[], int],
    ) -> None:
        self.service = service
        self.messenger = messenger
        self.outbox = outbox
        self.chats = chats
        self.people = people
        self.edit_seconds = edit_seconds
        self.lease_ms = round(lease_seconds * 1000)
        self.clock = clock
        #: Sends a round's results (text, picture, the dealer's cards turning over).
        self.results = ResultsMessage(messenger)
        #: Told of a window moved to open when its board reached the group (the deadline
        #: is timed again: ``RoundProgress.window_moved``).
        self.window_moved: Callable[[CommandResult], None] | None = None
        self._shown: TTLCache[int, Rendered] = TTLCache(BOARDS_CACHED, BOARD_CACHE_SECONDS)
        #: The phase each round's board was last recorded showing (by this process).
        self._phase_recorded: TTLCache[int, Phase] = TTLCache(BOARDS_CACHED, BOARD_CACHE_SECONDS)
        #: Rounds whose board the sweep found not showing their phase, and since when (a
        #: phase is shown again once that lasted a lease: its worker died, or failed).
        self._unshown_since: dict[tuple[int, Phase], float] = {}
        #: When each chat's board was last edited, while that still holds its next edit back.
        self._edited_at: TTLCache[int, float] = TTLCache(BOARDS_CACHED, edit_seconds)
        #: Rounds with an edit on its way: later changes ride along with it.
        self._edit_pending: set[int] = set()
        #: Boards and results this process has queued and not finished sending: the sweep
        #: looks for undelivered ones every time and must not queue them again.
        self._delivering: set[tuple[str, int]] = set()
        #: Rounds whose board message this process is sending now, and those of them
        #: that ended meanwhile (closed once the new message is recorded).
        self._posting: set[int] = set()
        self._close_after_post: set[int] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def sizes(self) -> dict[str, int]:
        """Entries kept now, per round or per chat (each bounded, or transient)."""
        return {
            "shown": len(self._shown),
            "phase_recorded": len(self._phase_recorded),
            "unshown_since": len(self._unshown_since),
            "edited_at": len(self._edited_at),
            "edit_pending": len(self._edit_pending),
            "delivering": len(self._delivering),
            "posting": len(self._posting),
            "close_after_post": len(self._close_after_post),
            "tasks": len(self._tasks),
        }

    # -- what callers ask for ---------------------------------------------------------

    def post(self, chat_id: int, round_id: int) -> None:
        """Post a round's board (unless this process has it queued already)."""
        self._deliver(("board", round_id), chat_id, partial(self._post, chat_id, round_id))

    def announce(self, state: Round, ended: RoundSettled | RoundVoided) -> None:
        """Send a round's results (unless this process has them queued already)."""
        self._deliver(("results", state.id), state.chat_id, partial(self._announce, state, ended))

    def refresh(self, state: Round, *, at_once: bool = False) -> None:
        """Edit the round's board soon: at most one edit per chat every ``edit_seconds``,
        the latest state each time (several changes in between make one edit); or, for a
        change of phase (``at_once``), as soon as the chat's outbox gets to it. The end
        of a round is shown by its results (a message of their own, more urgent): the
        board's last edit, which takes its buttons away, goes beside the chat's queue,
        after every board and phase waiting for the bot's rate (``Priority.CLOSING``)."""
        if at_once and state.phase.is_open:
            self.outbox.put(state.chat_id, partial(self._edit, state.id, Priority.PHASE))
            return
        if at_once:
            self.close(state.chat_id, state.id)
            return
        if state.id in self._edit_pending:
            return
        self._edit_pending.add(state.id)
        task = asyncio.get_running_loop().create_task(self._edit_later(state.chat_id, state.id))
        self._tasks.add(task)  # the loop keeps only weak references to tasks
        task.add_done_callback(self._tasks.discard)

    def close(self, chat_id: int, round_id: int) -> None:
        """Show an ended round over on its board, its buttons gone (unless this process
        has that queued already), and record it: one this process did not live to make
        is made by the sweep (``redeliver``). Beside the chat's queue, after every board
        and phase waiting for the bot's rate (``Priority.CLOSING``)."""
        key = ("closing", round_id)
        if key in self._delivering:
            return
        if round_id in self._posting:
            # A board of it is on its way: closed once Telegram has it and it is recorded
            # (the edit would find no message, or the one it replaces, now).
            self._close_after_post.add(round_id)
            return
        self._delivering.add(key)

        async def job() -> None:
            try:
                # The board as recorded before the edit: if another worker records a new
                # one meanwhile, the mark below does nothing and the sweep closes that.
                message_id = await self.service.board_message(round_id)
                # Raises if it failed on the way for as long as it is tried: left to the
                # sweep. Refused (the message is gone): nothing more to do.
                await self._edit(round_id, Priority.CLOSING, closing=True)
                await self.service.mark_board_closed(round_id, message_id)
            finally:
                self._delivering.discard(key)

        self.outbox.put_aside(job)

    def repost(self, state: Round) -> None:
        """Show a new phase (betting, grabbing) as a new board message, which notifies the
        group as an edit does not, and delete the old one. Only a board this worker or
        another has posted is reposted: one still being posted shows the phase anyway; nor
        one whose phase is over when its turn comes (what ended it shows itself)."""
        self._show_phase(state.chat_id, state.id, state.phase)

    def shoe_replaced(self, state: Round, started: RoundStarted) -> None:
        """Tell the group its shoe was replaced (or retired), revealing the old one's seed."""
        self.outbox.put(state.chat_id, partial(self._shoe_replaced, state, started))

    async def redeliver(self) -> None:
        """Queue the boards and results that should be out by now and that no worker is
        sending, and the last edits of ended rounds' boards not made: the worker that
        claimed one died (its lease ran out), or the worker that started or ended the
        round never got to it (a lease after it did so); the boards a new phase's
        replaced that their worker did not take down; and the phases no board shows."""
        grace = self.lease_ms
        for state, ended in await self.service.unannounced(unclaimed_grace_ms=grace):
            self.announce(state, ended)
        for round_id, chat_id in await self.service.unposted_boards(unclaimed_grace_ms=grace):
            self.post(chat_id, round_id)
        for round_id, chat_id in await self.service.unclosed_boards(grace_ms=grace):
            self.close(chat_id, round_id)
        for round_id, chat_id, message_id in await self.service.replaced_boards(grace_ms=grace):
            self._take_down_replaced(chat_id, round_id, message_id)
        self._show_unshown(await self.service.unshown_phases())

    def _show_unshown(self, unshown: list[tuple[int, int, Phase]]) -> None:
        """Show the phases boards have not shown for a lease's length (their worker died
        before it showed them, or could not): a phase just begun is its worker's to show."""
        now = time.monotonic()
        found = {}
        for round_id, chat_id, phase in unshown:
            since = found[round_id, phase] = self._unshown_since.get((round_id, phase), now)
            if now - since >= self.lease_ms / 1000:
                self._show_phase(chat_id, round_id, phase)
        self._unshown_since = found

    def forget_quiet(self) -> None:
        """Forget the boards and edit times whose time ran out."""
        for cache in (self._shown, self._edited_at):
            cache.expire()

    def cancel_edits(self) -> None:
        """Drop the edits waiting for their turn (stopping without sending them)."""
        for task in self._tasks:
            task.cancel()

    async def drain(self, timeout: float) -> None:
        """Wait for edits on their way to be queued."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout)

    # -- sending ----------------------------------------------------------------------

    def _deliver(
        self, key: tuple[str, int], chat_id: int, send: Callable[[], Awaitable[None]]
    ) -> None:
        if key in self._delivering:
            return
        self._delivering.add(key)

        async def job() -> None:
            try:
                with urgent():  # what shows a deadline: see ``Board``
                    await send()
            finally:
                self._delivering.discard(key)

        self.outbox.put(chat_id, job)

    async def _render(
        self, round_id: int, *, shown_now: bool = False, phase: Phase | None = None
    ) -> tuple[Round, str, InlineKeyboardMarkup | None]:
        """The round as it is and its board. ``shown_now``: the board shows the round's
        phase (if ``phase``, only that one) to the group now, so a window that opened
        unseen opens now instead."""
        state = await self.service.round(round_id)
        if state is None:
            raise LookupError(f"round {round_id} is gone")
        if shown_now and (phase is None or state.phase is phase):
            state = await self._opened_when_seen(state, self.clock())
        views = Views(state.settings)  # a running round keeps the settings it started with
        people = await self.people.names(board_people(state))
        text, markup = views.board(state, people, self.clock())
        return state, text, markup

    async def _opened_when_seen(self, state: Round, opens_at_ms: int) -> Round:
        """The round with its phase's window opening at ``opens_at_ms`` if it opened more
        than ``WINDOW_LATE_MS`` before (docs/rules.md §1: the group never loses time it was
        not shown), rescheduled; else as it is. Nothing is read or written unless late."""
        if not state.phase.is_open:
            return state
        if opens_at_ms + window_ms(state) - state.deadline_ms <= WINDOW_LATE_MS:
            return state
        result = await self.service.move_window(state.id, state.phase, opens_at_ms)
        if result.round is None:  # the round moved on meanwhile: as it is then
            return state
        log.info(
            "round %s: its %s board reached the group late; the window opens now",
            state.id,
            state.phase.value,
        )
        if self.window_moved is not None:
            self.window_moved(result)
        return result.round

    async def _post(self, chat_id: int, round_id: int) -> None:
        """Post the live board of a new round (as it is when the message goes out), unless
        it is posted or another worker is posting it. It counts as posted only once
        Telegram answered: a crash before that leaves it to be posted again when the lease
        ran out (twice only if Telegram had it already)."""
        if not await self.service.claim_board(round_id, lease_ms=self.lease_ms):
            return
        self._posting.add(round_id)
        try:
            await self._post_claimed(chat_id, round_id)
        finally:
            self._done_posting(chat_id, round_id)

    async def _post_claimed(self, chat_id: int, round_id: int) -> None:
        message_id, shown, phase = await self._keeping_lease(
            self.service.renew_board_claim,
            round_id,
            partial(self._send_board, chat_id, round_id, None),
        )
        if shown is None:  # over before its turn came: its results show it
            return
        if message_id is None:  # refused (logged); trying again would be refused too
            await self.service.set_board_message(round_id, BOARD_REFUSED)
            return
        self._shown[round_id] = shown
        self._edited_at[chat_id] = time.monotonic()
        await self.service.set_board_message(round_id, message_id, phase)
        self._phase_recorded[round_id] = phase
        await self._close_if_ended(chat_id, round_id)

    async def _send_board(
        self, chat_id: int, round_id: int, phase: Phase | None
    ) -> tuple[int | None, Rendered | None, Phase]:
        """Send a round's board as the round is once the chat's slot and the board's turn
        have come (again at each try), so that its countdown is the time really left;
        nothing if the round is over by then, or has left ``phase`` (what moved it on
        shows itself). The message's id (``None``: refused), what it shows (``None``:
        nothing was sent) and the round's phase it shows."""
        shown: list[tuple[Rendered, Phase]] = []

        async def waiting(seconds: float) -> None:
            # The board waits for the group's minute: its window waits too, so that the
            # deadline does not pass before the group sees it (moved again once it does).
            if seconds * 1000 <= WINDOW_LATE_MS:
                return
            state = await self.service.round(round_id)
            if state is not None and (phase is None or state.phase is phase):
                await self._opened_when_seen(state, self.clock() + round(seconds * 1000))

        async def compose() -> Rendered | None:
            shown.clear()
            state, text, markup = await self._render(round_id, shown_now=True, phase=phase)
            if not state.phase.is_open or (phase is not None and state.phase is not phase):
                return None
            shown.append(((text, markup), state.phase))
            return text, markup

        message_id = await self.messenger.send_composed(
            chat_id, compose, priority=Priority.PHASE, round_id=round_id, waiting=waiting
        )
        if not shown:
            return message_id, None, phase or Phase.BIDDING
        return message_id, shown[0][0], shown[0][1]

    async def _edit_later(self, chat_id: int, round_id: int) -> None:
        wait = self._edited_at.get(chat_id, 0.0) + self.edit_seconds - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        # Beside the chat's queue, not in it: an edit waits its turn behind every more
        # urgent message of the bot, and the chat's results must not wait behind it.
        self.outbox.put_aside(partial(self._edit, round_id))

    async def _edit(
        self,
        round_id: int,
        priority: Priority = Priority.EDIT,
        *,
        only_in: Phase | None = None,
        closing: bool = False,
    ) -> None:
        """Show a round's current state on its board message, as it is when the edit's
        turn in the bot's rate comes (``priority``: a new phase's edit goes before the bet
        lists' edits; ``only_in``: unless the round has left that phase by then). Until
        then the round's later changes ride along with this edit. Only the ``closing``
        edit shows a round that is over: any other edit whose turn comes after the end
        sends nothing."""
        made: list[tuple[Edit, Phase]] = []

        async def compose() -> Edit | None:
            composed = await self._compose_edit(round_id, only_in, closing)
            made[:] = [] if composed is None else [composed]
            return None if composed is None else composed[0]

        with urgent() if priority <= Priority.PHASE else contextlib.nullcontext():
            shown = await self.messenger.edit_on_its_turn(
                compose, priority=priority, round_id=round_id
            )
        if shown and made and not closing:
            edit, phase = made[0]
            await self._record_phase(round_id, edit.message_id, phase)
            # It showed the round open: if another worker ended the round (and made the
            # last edit) while this edit was on its way, it has just put buttons back.
            await self._close_if_ended(edit.chat_id, round_id)

    async def _record_phase(self, round_id: int, message_id: int, phase: Phase) -> None:
        """Record that the round's board shows ``phase``, unless this process did so."""
        if self._phase_recorded.get(round_id) is not phase:
            await self.service.mark_phase_shown(round_id, message_id, phase)
            self._phase_recorded[round_id] = phase

    async def _compose_edit(
        self, round_id: int, only_in: Phase | None, closing: bool
    ) -> tuple[Edit, Phase] | None:
        """The board's edit to the round's current state, and the phase it shows, unless
        it shows it already, or the edit is not for it (see ``_edit``)."""
        # Changes from now on need an edit of their own.
        self._edit_pending.discard(round_id)
        # A new phase's edit shows the phase to the group (its window opens now if late).
        showing = only_in is not None
        state, text, markup = await self._render(round_id, shown_now=showing, phase=only_in)
        if not state.phase.is_open and not closing:
            return None
        if only_in is not None and state.phase is not only_in:
            return None
        # Read each time, never remembered: another worker may have posted the board anew.
        message_id = await self.service.board_message(round_id)
        shown = self._shown.get(round_id)
        if not state.phase.is_open:  # the round's last edit: forget its board
            self._shown.pop(round_id, None)
            self._phase_recorded.pop(round_id, None)
        if not message_id or shown == (text, markup):
            return None
        if state.phase.is_open:
            self._shown[round_id] = (text, markup)
        self._edited_at[state.chat_id] = time.monotonic()
        return Edit(state.chat_id, message_id, text, markup), state.phase

    def _show_phase(self, chat_id: int, round_id: int, phase: Phase) -> None:
        """Queue showing a round's new phase (``_repost``), unless this process has it
        queued already."""
        key = (phase.value, round_id)
        if key in self._delivering:
            return
        self._delivering.add(key)

        async def job() -> None:
            try:
                await self._repost(chat_id, round_id, phase)
            finally:
                self._delivering.discard(key)

        self.outbox.put(chat_id, job)

    async def _repost(self, chat_id: int, round_id: int, phase: Phase) -> None:
        if self._phase_recorded.get(round_id) is phase:
            return  # this process showed it meanwhile (the sweep's look came before)
        with urgent():
            busy_group = self.messenger.group_sends.room(chat_id) <= ROOM_KEPT_FOR_ROUNDS
            if busy_group or self.messenger.rate.backlog_seconds > REPOST_BACKLOG_SECONDS:
                await self._edit(round_id, Priority.PHASE, only_in=phase)  # shown, unannounced
            else:
                await self._post_new_phase(chat_id, round_id, phase)

    async def _post_new_phase(self, chat_id: int, round_id: int, phase: Phase) -> None:
        old = await self.service.board_message(round_id)
        if not old or old == BOARD_REFUSED:
            return
        self._edit_pending.discard(round_id)
        self._posting.add(round_id)
        try:
            await self._replace_board(chat_id, round_id, phase, old)
        finally:
            self._done_posting(chat_id, round_id)

    async def _replace_board(self, chat_id: int, round_id: int, phase: Phase, old: int) -> None:
        new, shown, _ = await self._send_board(chat_id, round_id, phase)
        if shown is None:
            return  # over by its turn: the step that ended it queued its own repost or edit
        if new is None:  # refused (logged): the old board shows the phase instead
            text, markup = shown
            if await self.messenger.edit(
                chat_id, old, text, markup, priority=Priority.PHASE, round_id=round_id
            ):
                await self._record_phase(round_id, old, phase)
            return
        # The old board is remembered with the new one, until it is taken down: a worker
        # that dies before that leaves it to the sweep (``redeliver``), not live.
        if not await self.service.replace_board_message(round_id, old, new, phase):
            # Another worker replaced the old board first: this message is a second one.
            await self.messenger.take_down(chat_id, new, round_id=round_id)
            return
        self._phase_recorded[round_id] = phase
        self._shown[round_id] = shown
        self._edited_at[chat_id] = time.monotonic()
        await self._close_if_ended(chat_id, round_id)
        self._take_down_replaced(chat_id, round_id, old)

    def _take_down_replaced(self, chat_id: int, round_id: int, message_id: int) -> None:
        """Delete a board message a new phase's replaced (or take its buttons off), beside
        the chat's queue, unless this process is at it; forget it once that is settled.
        One Telegram could not be reached for stays remembered, for the sweep."""
        key = ("replaced", round_id)
        if key in self._delivering:
            return
        self._delivering.add(key)

        async def job() -> None:
            try:
                if await self.messenger.take_down(chat_id, message_id, round_id=round_id):
                    await self.service.replaced_board_gone(round_id, message_id)
            finally:
                self._delivering.discard(key)

        self.outbox.put_aside(job)

    async def _close_if_ended(self, chat_id: int, round_id: int) -> None:
        """Once a board message is recorded: if the round ended meanwhile (in another
        worker, whose last edit then found the message this one replaced), close it. The
        record comes before this look, and another worker's end before its last edit's:
        one of the two sees the other."""
        if await self.service.round_ended(round_id):
            self.close(chat_id, round_id)

    def _done_posting(self, chat_id: int, round_id: int) -> None:
        """A board message of the round is sent (or not) and recorded: if the round ended
        meanwhile, its board loses its buttons now."""
        self._posting.discard(round_id)
        if round_id in self._close_after_post:
            self._close_after_post.discard(round_id)
            self.close(chat_id, round_id)

    async def _announce(self, state: Round, ended: RoundSettled | RoundVoided) -> None:
        """Post the one message that closes a round, unless it went out or another worker
        is sending it. It counts as sent only once Telegram answered: a crash before that
        leaves it to be sent again when the lease ran out (twice only if Telegram had it
        already)."""
        if not await self.service.claim_announcement(state.id, lease_ms=self.lease_ms):
            return
        people = await self.people.names(list(state.participants) + board_people(state))
        await self._keeping_lease(
            self.service.renew_announcement_claim,
            state.id,
            partial(self.results.send, state, ended, people),
        )
        # Sent, or refused for good (logged): either way Telegram answered.
        await self.service.mark_announced(state.id)

    async def _shoe_replaced(self, state: Round, started: RoundStarted) -> None:
        retired = started.retired_shoe
        assert retired is not None
        seed = retired.seed.hex()
        if state.shoe is None:
            text = await self.chats.text(
                state.chat_id, "shoe.retired", old_id=retired.id, seed=seed
            )
        else:
            text = await self.chats.text(
                state.chat_id, "shoe.replaced", shoe_id=state.shoe.id, old_id=retired.id, seed=seed
            )
        await self.messenger.send(state.chat_id, text, priority=Priority.PHASE, round_id=state.id)

    async def _keeping_lease(
        self,
        renew: Callable[..., Awaitable[bool]],
        round_id: int,
        send: Callable[[], Awaitable[_T]],
    ) -> _T:
        """Run ``send`` holding the round's lease on it: renewed every third of its length,
        so that a message waiting behind Telegram's rate limits keeps its job and no other
        worker sends it too. A process that dies stops renewing, and the lease runs out."""
        sent = asyncio.Event()

        async def renew_until_sent() -> None:
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(sent.wait(), self.lease_ms / 3000)
                    return
                try:
                    if not await renew(round_id, lease_ms=self.lease_ms):
                        return  # delivered meanwhile, by a worker that took it over
                except Exception:
                    log.exception("round %s: renewing a delivery lease failed", round_id)

        renewing = asyncio.get_running_loop().create_task(renew_until_sent())
        try:
            return await send()
        finally:
            sent.set()
            await renewing

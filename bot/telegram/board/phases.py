"""A round's new phase (betting, grabbing) shown to the group: a new board message, which
notifies the group as an edit does not, or an edit when the group's minute or the bot's
rate is tight (an edit costs half a message, and no deletion follows it)."""

from __future__ import annotations

import time
from functools import partial

from bot.engine.round import Phase
from bot.priority import urgent
from bot.service.game import BOARD_REFUSED
from bot.telegram.board.closing import BoardClosing
from bot.telegram.board.editing import BoardEditor
from bot.telegram.board.memory import BoardMemory
from bot.telegram.board.posting import BoardPosting
from bot.telegram.board.refreshing import BoardRefresh
from bot.telegram.budget import ROOM_KEPT_FOR_ROUNDS, Priority
from bot.telegram.delivery import ChatOutbox
from bot.telegram.messenger import Messenger
from bot.telegram.service_needs import BoardService

#: How far behind the bot's overall rate may be for a phase to be shown as a new board
#: message: beyond it, every group's new boards would come later than an edit would.
#: (The rate is tight well before: ``SendRate.tight``, which edits the phase in too.)
REPOST_BACKLOG_SECONDS = 1.0


class PhaseBoards:
    """Shows a round's new phase as a new board message and takes the old one down (or,
    when the group's minute or the bot's rate is short, edits the phase in)."""

    def __init__(
        self,
        service: BoardService,
        messenger: Messenger,
        outbox: ChatOutbox,
        memory: BoardMemory,
        *,
        posting: BoardPosting,
        refresh: BoardRefresh,
        editor: BoardEditor,
        closing: BoardClosing,
    ) -> None:
        self.service = service
        self.messenger = messenger
        self.outbox = outbox
        self.memory = memory
        self.posting = posting
        self.refresh = refresh
        self.editor = editor
        self.closing = closing

    def show_phase(
        self, chat_id: int, round_id: int, phase: Phase, *, taken_over: bool = False
    ) -> None:
        """Queue showing a round's new phase (``_repost``), unless this process has it
        queued already. ``taken_over``: from a worker that died, which may have sent a
        board of it that it did not live to record."""
        send = partial(self._repost, chat_id, round_id, phase, taken_over)
        self.memory.queue_once((phase.value, round_id), partial(self.outbox.put, chat_id), send)

    def take_down_replaced(self, chat_id: int, round_id: int, message_id: int) -> None:
        """Delete a board message a new phase's replaced (or take its buttons off), beside
        the chat's queue, unless this process is at it; forget it once that is settled.
        One Telegram could not be reached for stays remembered, for the sweep."""

        async def send() -> None:
            if await self.messenger.take_down(chat_id, message_id, round_id=round_id):
                await self.service.replaced_board_gone(round_id, message_id)

        self.memory.queue_once(("replaced", round_id), self.outbox.put_aside, send)

    async def _repost(
        self, chat_id: int, round_id: int, phase: Phase, taken_over: bool = False
    ) -> None:
        if self.memory.phase_recorded.get(round_id) is phase:
            return  # this process showed it meanwhile (the sweep's look came before)
        with urgent():
            busy_group = self.messenger.group_sends.room(chat_id) <= ROOM_KEPT_FOR_ROUNDS
            rate = self.messenger.rate
            busy = busy_group or rate.tight or rate.backlog_seconds > REPOST_BACKLOG_SECONDS
            # Taken over, the phase is posted anyway: only a new board bounds the ids
            # among which the dead worker's unrecorded copy may be (``_replace_board``).
            if (busy and not taken_over) or not await self._post_new_phase(
                chat_id, round_id, phase, taken_over
            ):
                # Edited in: shown, unannounced.
                await self.refresh.edit(round_id, Priority.PHASE, only_in=phase)

    async def _post_new_phase(
        self, chat_id: int, round_id: int, phase: Phase, taken_over: bool
    ) -> bool:
        """Show the phase on a new board message; False if it is to be edited in instead:
        an old board is still to be taken down and cannot be now (the database remembers
        one such board a round: a second would be forgotten, and keep its buttons)."""
        old, replaced = await self.service.boards(round_id)
        if not old or old == BOARD_REFUSED:
            return True
        if replaced is not None:
            if not await self.messenger.take_down(chat_id, replaced, round_id=round_id):
                return False
            await self.service.replaced_board_gone(round_id, replaced)
        self.memory.edit_pending.discard(round_id)
        self.memory.posting.add(round_id)
        try:
            await self._replace_board(chat_id, round_id, phase, old, taken_over)
        finally:
            self.closing.done_posting(chat_id, round_id)
        return True

    async def _replace_board(
        self, chat_id: int, round_id: int, phase: Phase, old: int, taken_over: bool
    ) -> None:
        new, sent = await self.posting.send_board(chat_id, round_id, phase)
        if sent is None:
            return  # over by its turn: the step that ended it queued its own repost or edit
        shown, _ = sent
        if new is None:  # refused (logged): the old board shows the phase instead
            text, markup = shown
            if await self.messenger.edit(
                chat_id, old, text, markup, priority=Priority.PHASE, round_id=round_id
            ):
                await self.editor.record_phase(round_id, old, phase)
            return
        # The old board is remembered with the new one, until it is taken down: a worker
        # that dies before that leaves it to the sweep (``redeliver``), not live.
        if not await self.service.replace_board_message(round_id, old, new, phase):
            # Another worker replaced the old board first: this message is a second one
            # (or a press marked a stray meanwhile: the sweep shows the phase after a lease).
            await self.messenger.take_down(chat_id, new, round_id=round_id)
            return
        self.memory.phase_recorded[round_id] = phase
        self.memory.shown[round_id] = shown
        self.memory.board_ids[round_id] = new
        self.memory.edited_at[chat_id] = time.monotonic()
        await self.closing.close_if_ended(chat_id, round_id)
        self.take_down_replaced(chat_id, round_id, old)
        if taken_over:
            # A board the dead worker sent and did not record lies between the two (the
            # round is open: no results of it there to lose their buttons).
            self.messenger.strays.disarm_between(chat_id, old, new)

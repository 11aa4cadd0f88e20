"""One edit of a round's board: the round as it is when the edit's turn comes."""

from __future__ import annotations

import contextlib
import time

from bot.engine.round import Phase
from bot.priority import urgent
from bot.telegram.board.memory import BoardMemory
from bot.telegram.board.rendering import BoardRenderer
from bot.telegram.budget import Priority
from bot.telegram.messenger import Edit, Messenger
from bot.telegram.service_needs import BoardService


class BoardEditor:
    """Edits a round's board message to the round's current state, unless it shows that
    already, and records the phase it showed the group."""

    def __init__(
        self,
        service: BoardService,
        messenger: Messenger,
        memory: BoardMemory,
        renderer: BoardRenderer,
    ) -> None:
        self.service = service
        self.messenger = messenger
        self.memory = memory
        self.renderer = renderer

    async def edit(
        self,
        round_id: int,
        priority: Priority = Priority.EDIT,
        *,
        only_in: Phase | None = None,
        closing: bool = False,
    ) -> Edit | None:
        """Show a round's current state on its board message, as it is when the edit's
        turn in the bot's rate comes (``priority``: a new phase's edit goes before the bet
        lists' edits; ``only_in``: unless the round has left that phase by then). Until
        then the round's later changes ride along with this edit. Only the ``closing``
        edit shows a round that is over: any other edit whose turn comes after the end
        sends nothing. The edit if it showed the round open (its phase now recorded)."""
        made: list[tuple[Edit, Phase]] = []

        async def compose() -> Edit | None:
            composed = await self._compose(round_id, only_in, closing)
            made[:] = [] if composed is None else [composed]
            return None if composed is None else composed[0]

        # What shows a deadline uses the database as urgent work: see ``Board``.
        with urgent() if priority <= Priority.PHASE else contextlib.nullcontext():
            shown = await self.messenger.edit_on_its_turn(
                compose, priority=priority, round_id=round_id
            )
        if not (shown and made and not closing):
            return None
        edit, phase = made[0]
        await self.record_phase(round_id, edit.message_id, phase)
        return edit

    async def record_phase(self, round_id: int, message_id: int, phase: Phase) -> None:
        """Record that the round's board shows ``phase``, unless this process did so."""
        if self.memory.phase_recorded.get(round_id) is not phase:
            await self.service.mark_phase_shown(round_id, message_id, phase)
            self.memory.phase_recorded[round_id] = phase

    async def _compose(
        self, round_id: int, only_in: Phase | None, closing: bool
    ) -> tuple[Edit, Phase] | None:
        """The board's edit to the round's current state, and the phase it shows, unless
        it shows it already, or the edit is not for it (see ``edit``)."""
        memory = self.memory
        # Changes from now on need an edit of their own.
        memory.edit_pending.discard(round_id)
        # A new phase's edit shows the phase to the group (its window opens now if late).
        showing = only_in is not None
        # The message id is read with the round each time, never remembered: another
        # worker may have posted the board anew.
        state, text, markup, message_id = await self.renderer.render(
            round_id, shown_now=showing, phase=only_in
        )
        if not state.phase.is_open and not closing:
            return None
        if only_in is not None and state.phase is not only_in:
            return None
        shown = memory.shown.get(round_id)
        if not state.phase.is_open:  # the round's last edit: forget its board
            memory.shown.pop(round_id, None)
            memory.board_ids.pop(round_id, None)
            memory.phase_recorded.pop(round_id, None)
        elif message_id:
            memory.board_ids[round_id] = message_id
        if not message_id or shown == (text, markup):
            return None
        if state.phase.is_open:
            memory.shown[round_id] = (text, markup)
        memory.edited_at[state.chat_id] = time.monotonic()
        return Edit(state.chat_id, message_id, text, markup), state.phase

"""A round's first board: posted once, under the service's claim on it."""

from __future__ import annotations

import time
from functools import partial

from bot.engine.round import WINDOW_LATE_MS, Phase
from bot.service.game import BOARD_REFUSED
from bot.telegram.board.closing import BoardClosing
from bot.telegram.board.lease import DeliveryLease
from bot.telegram.board.memory import BoardMemory, Rendered, urgently
from bot.telegram.board.rendering import BoardRenderer
from bot.telegram.budget import Priority
from bot.telegram.delivery import ChatOutbox
from bot.telegram.messenger import Messenger
from bot.telegram.service_needs import BoardService


class BoardPosting:
    """Posts each round's board once: one worker sends it, under the service's claim and
    lease, and it counts as posted once Telegram answered and it is recorded."""

    def __init__(
        self,
        service: BoardService,
        messenger: Messenger,
        outbox: ChatOutbox,
        memory: BoardMemory,
        renderer: BoardRenderer,
        lease: DeliveryLease,
        closing: BoardClosing,
    ) -> None:
        self.service = service
        self.messenger = messenger
        self.outbox = outbox
        self.memory = memory
        self.renderer = renderer
        self.lease = lease
        self.closing = closing

    def post(self, chat_id: int, round_id: int) -> None:
        """Post a round's board (unless this process has it queued already)."""
        send = urgently(partial(self._post, chat_id, round_id))
        self.memory.queue_once(("board", round_id), partial(self.outbox.put, chat_id), send)

    async def send_board(
        self, chat_id: int, round_id: int, phase: Phase | None
    ) -> tuple[int | None, tuple[Rendered, Phase] | None]:
        """Send a round's board as the round is once the chat's slot and the board's turn
        have come (again at each try), so that its countdown is the time really left;
        nothing if the round is over by then, or has left ``phase`` (what moved it on
        shows itself). The message's id (``None``: refused), and what it shows with the
        round's phase it shows (``None``: nothing was sent)."""
        shown: list[tuple[Rendered, Phase]] = []

        async def waiting(seconds: float) -> None:
            # The board waits for the group's minute: its window waits too, so that the
            # deadline does not pass before the group sees it (moved again once it does).
            if seconds * 1000 <= WINDOW_LATE_MS:
                return
            state = await self.service.round(round_id)
            if state is not None and (phase is None or state.phase is phase):
                opens_at_ms = self.renderer.clock() + round(seconds * 1000)
                await self.renderer.opened_when_seen(state, opens_at_ms)

        async def compose() -> Rendered | None:
            shown.clear()
            state, text, markup, _ = await self.renderer.render(
                round_id, shown_now=True, phase=phase
            )
            if not state.phase.is_open or (phase is not None and state.phase is not phase):
                return None
            shown.append(((text, markup), state.phase))
            return text, markup

        message_id = await self.messenger.send_composed(
            chat_id, compose, priority=Priority.PHASE, round_id=round_id, waiting=waiting
        )
        return message_id, (shown[0] if shown else None)

    async def _post(self, chat_id: int, round_id: int) -> None:
        """Post the live board of a new round (as it is when the message goes out), unless
        it is posted or another worker is posting it. It counts as posted only once
        Telegram answered: a crash before that leaves it to be posted again when the lease
        ran out (twice only if Telegram had it already; the first copy then loses its
        buttons)."""
        strays = self.messenger.strays
        claim = await self.service.claim_board(
            round_id, lease_ms=self.lease.lease_ms, newest_known=strays.newest(chat_id)
        )
        if claim is None:
            return
        # Taken over from a worker that died: it may have sent the board and not lived to
        # record it. That copy, after what it knew, loses its buttons once this one is out.
        strays.lost(chat_id, claim.copy_after)
        self.memory.posting.add(round_id)
        try:
            await self._post_claimed(chat_id, round_id)
        finally:
            self.closing.done_posting(chat_id, round_id)

    async def _post_claimed(self, chat_id: int, round_id: int) -> None:
        message_id, sent = await self.lease.keeping(
            self.service.renew_board_claim,
            round_id,
            partial(self.send_board, chat_id, round_id, None),
        )
        if sent is None:  # over before its turn came: its results show it
            return
        shown, phase = sent
        if message_id is None:  # refused (logged); trying again would be refused too
            await self.service.set_board_message(round_id, BOARD_REFUSED)
            return
        self.memory.shown[round_id] = shown
        self.memory.edited_at[chat_id] = time.monotonic()
        await self.service.set_board_message(round_id, message_id, phase)
        self.memory.board_ids[round_id] = message_id
        self.memory.phase_recorded[round_id] = phase
        await self.closing.close_if_ended(chat_id, round_id)

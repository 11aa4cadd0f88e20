"""The sweep's part for boards: what a worker that died (or failed) left undelivered."""

from __future__ import annotations

import time

from bot.engine.round import Phase
from bot.telegram.board.closing import BoardClosing
from bot.telegram.board.lease import DeliveryLease
from bot.telegram.board.notices import RoundNotices
from bot.telegram.board.phases import PhaseBoards
from bot.telegram.board.posting import BoardPosting
from bot.telegram.service_needs import BoardService


class BoardSweep:
    """Queues again the boards, results, last edits, take-downs and phases that should
    be out by now and that no worker is sending."""

    def __init__(
        self,
        service: BoardService,
        lease: DeliveryLease,
        *,
        posting: BoardPosting,
        notices: RoundNotices,
        closing: BoardClosing,
        phases: PhaseBoards,
    ) -> None:
        self.service = service
        self.lease = lease
        self.posting = posting
        self.notices = notices
        self.closing = closing
        self.phases = phases
        #: Rounds whose board the sweep found not showing their phase, and since when (a
        #: phase is shown again once that lasted a lease: its worker died, or failed).
        self.unshown_since: dict[tuple[int, Phase], float] = {}

    async def redeliver(self) -> None:
        """Queue the boards and results that should be out by now and that no worker is
        sending, and the last edits of ended rounds' boards not made: the worker that
        claimed one died (its lease ran out), or the worker that started or ended the
        round never got to it (a lease after it did so); the boards a new phase's
        replaced that their worker did not take down; and the phases no board shows."""
        grace = self.lease.lease_ms
        for state, ended in await self.service.unannounced(unclaimed_grace_ms=grace):
            self.notices.announce(state, ended)
        for round_id, chat_id in await self.service.unposted_boards(unclaimed_grace_ms=grace):
            self.posting.post(chat_id, round_id)
        for round_id, chat_id in await self.service.unclosed_boards(grace_ms=grace):
            self.closing.close(chat_id, round_id)
        for round_id, chat_id, message_id in await self.service.replaced_boards(grace_ms=grace):
            self.phases.take_down_replaced(chat_id, round_id, message_id)
        self._show_unshown(await self.service.unshown_phases())

    def _show_unshown(self, unshown: list[tuple[int, int, Phase]]) -> None:
        """Show the phases boards have not shown for a lease's length (their worker died
        before it showed them, or could not): a phase just begun is its worker's to show."""
        now = time.monotonic()
        found = {}
        for round_id, chat_id, phase in unshown:
            since = found[round_id, phase] = self.unshown_since.get((round_id, phase), now)
            if now - since >= self.lease.lease_ms / 1000:
                self.phases.show_phase(chat_id, round_id, phase, taken_over=True)
        self.unshown_since = found

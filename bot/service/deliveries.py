"""Delivery use cases: a round's board and results reach the group at least once (see
``bot.store.deliveries`` for how leases make that so)."""

from __future__ import annotations

from collections.abc import Callable

from bot.engine.round import Phase, Round, RoundSettled, RoundVoided
from bot.store.deliveries import BOARD_REFUSED as BOARD_REFUSED
from bot.store.deliveries import BoardClaim as BoardClaim
from bot.store.deliveries import Message
from bot.store.unit_of_work import Store

#: How long a worker holds the job of posting a board or sending results before another
#: worker, or this one restarted, may take it over. The holder renews it while its message
#: waits to go out (behind Telegram's rate limits), so this is only how late a message
#: whose sender died goes out: shorter than a bidding window, so that a board lost in a
#: crash still shows while bids are open; long enough that a slow database or a busy
#: event loop does not let a live holder's lease run out between renewals (a third of it).
DELIVERY_LEASE_MS = 3_000


#: How long past its deadline a phase that no board shows yet is held open (docs/rules.md
#: §1): long enough for a restarted or another worker to show it (its window then opens
#: anew), short of holding a round for good where Telegram never takes its board.
UNSEEN_PHASE_HOLD_MS = 60_000


class DeliveryUseCases:
    """Boards and results on their way to the group."""

    def __init__(self, store: Store, *, clock: Callable[[], int]) -> None:
        self.store = store
        self.clock = clock

    async def _lease(self, round_id: int, message: Message, lease_ms: int, renew: bool) -> bool:
        return await self.store.delivery_records.lease(
            round_id, message, now_ms=self.clock(), lease_ms=lease_ms, renew=renew
        )

    async def claim_board(
        self,
        round_id: int,
        *,
        lease_ms: int = DELIVERY_LEASE_MS,
        newest_known: int | None = None,
    ) -> BoardClaim | None:
        """Take the job of posting a round's board for ``lease_ms``; ``None`` if it is
        posted, or another worker (or this one before a restart) holds a lease that has
        not run out. ``newest_known``: the newest message id this worker knows in the
        chat, which a worker taking the job over after a crash is told
        (``BoardClaim.copy_after``)."""
        return await self.store.delivery_records.claim_board(
            round_id, now_ms=self.clock(), lease_ms=lease_ms, newest_known=newest_known
        )

    async def renew_board_claim(self, round_id: int, *, lease_ms: int = DELIVERY_LEASE_MS) -> bool:
        """Hold the job of posting a round's board for ``lease_ms`` more; False once it is
        posted."""
        return await self._lease(round_id, Message.BOARD, lease_ms, renew=True)

    async def claim_announcement(self, round_id: int, *, lease_ms: int = DELIVERY_LEASE_MS) -> bool:
        """Take the job of sending a round's results for ``lease_ms``; False if they went
        out, or another worker (or this one before a restart) holds a lease that has not
        run out. Until ``mark_announced`` the results are still to be sent."""
        return await self._lease(round_id, Message.RESULTS, lease_ms, renew=False)

    async def renew_announcement_claim(
        self, round_id: int, *, lease_ms: int = DELIVERY_LEASE_MS
    ) -> bool:
        """Hold the job of sending a round's results for ``lease_ms`` more; False once they
        went out."""
        return await self._lease(round_id, Message.RESULTS, lease_ms, renew=True)

    async def set_board_message(
        self, round_id: int, message_id: int, phase: Phase | None = None
    ) -> None:
        """Record that Telegram has a round's board, showing ``phase`` (``BOARD_REFUSED``,
        no phase: it refused it)."""
        shown = None if phase is None else phase.value
        await self.store.delivery_records.set_board_message(round_id, message_id, shown)

    async def replace_board_message(self, round_id: int, old: int, new: int, phase: Phase) -> bool:
        """Record that Telegram has a new board message showing ``phase`` in place of
        ``old``, which is remembered until ``replaced_board_gone``; False if another worker
        replaced ``old`` first (then ``new`` is a second board, to be taken down), or if a
        board is still remembered to be taken down (``boards``: the database remembers
        one, and would forget it)."""
        return await self.store.delivery_records.replace_board_message(
            round_id, old, new, phase.value, now_ms=self.clock()
        )

    async def mark_phase_shown(self, round_id: int, message_id: int, phase: Phase) -> None:
        """Record that the round's board, ``message_id``, shows ``phase`` (nothing if the
        board is another message by now)."""
        await self.store.delivery_records.mark_phase_shown(round_id, message_id, phase.value)

    async def unshown_phases(self) -> list[tuple[int, int, Phase]]:
        """Open rounds whose posted board does not show their phase yet: (round id, chat
        id, phase). A phase just begun is among them until its worker has shown it."""
        rows = await self.store.delivery_lookup.unshown_phases()
        return [(round_id, chat_id, Phase(phase)) for round_id, chat_id, phase in rows]

    async def mark_stray_board(self, round_id: int, message_id: int) -> bool:
        """Record that ``message_id`` shows the round's buttons but is not its board (a
        board a worker sent and died before recording: Telegram took it, and nobody
        learnt its id until a player pressed it): it is taken down as a replaced board is,
        by the sweep once ``replaced_boards``' grace passed (its worker, if alive, records
        it as the board before that, and then it stays). False if it is the board, or
        another replaced board is still to be taken down."""
        return await self.store.delivery_records.mark_stray_board(
            round_id, message_id, now_ms=self.clock()
        )

    async def replaced_board_gone(self, round_id: int, message_id: int) -> None:
        """Record that a replaced board message is deleted, or has no buttons left."""
        await self.store.delivery_records.forget_replaced_board(round_id, message_id)

    async def replaced_boards(self, *, grace_ms: int) -> list[tuple[int, int, int]]:
        """Board messages replaced ``grace_ms`` ago or more and not yet taken down (their
        worker died first, or Telegram could not be reached): (round id, chat id, message
        id)."""
        return await self.store.delivery_lookup.replaced_boards(
            now_ms=self.clock(), grace_ms=grace_ms
        )

    async def mark_announced(self, round_id: int) -> None:
        """Record that Telegram took a round's results (or refused them for good)."""
        await self.store.delivery_records.mark_announced(round_id, self.clock())

    async def mark_board_closed(self, round_id: int, message_id: int | None) -> None:
        """Record that an ended round's board, ``message_id`` (``None``: none), shows it
        over without buttons, unless its board is another message by now (posted by a
        worker that recorded it after this one looked)."""
        await self.store.delivery_records.mark_board_closed(round_id, message_id, self.clock())

    async def mark_board_open(self, round_id: int) -> None:
        """Record that an ended round's board shows buttons again (an edit rendered before
        the round ended landed after its last edit): the sweep closes it again if the
        worker that saw it does not live to."""
        await self.store.delivery_records.mark_board_open(round_id)

    async def unclosed_boards(self, *, grace_ms: int) -> list[tuple[int, int]]:
        """Ended rounds whose board may still show live buttons, that ended ``grace_ms``
        ago or more: (round id, chat id)."""
        return await self.store.delivery_lookup.unclosed_boards(
            now_ms=self.clock(), grace_ms=grace_ms
        )

    async def unannounced(
        self, within_ms: int = 3_600_000, *, unclaimed_grace_ms: int = 0
    ) -> list[tuple[Round, RoundSettled | RoundVoided]]:
        """Rounds that ended in the last ``within_ms`` without their results having gone
        out and that no worker is sending (nobody holds a lease that has not run out), each
        with what ended it, to announce them now. Rounds that ended less than
        ``unclaimed_grace_ms`` ago and were never claimed are left to the worker that ended
        them (the sweep passes the lease's length: that worker has it queued)."""
        now = self.clock()
        # Nearly always none (the sweep asks every second): one cheap statement finds
        # that; the rounds are loaded whole only when there are some. One announced in
        # between is loaded all the same: claiming it refuses it, as it refuses one
        # announced after any read.
        round_ids = await self.store.delivery_lookup.unannounced(
            now_ms=now, since_ms=now - within_ms, unclaimed_grace_ms=unclaimed_grace_ms
        )
        if not round_ids:
            return []
        async with self.store.reading() as uow:
            return await uow.queries.ended_rounds(round_ids)

    async def unposted_boards(self, *, unclaimed_grace_ms: int = 0) -> list[tuple[int, int]]:
        """Open rounds whose board is not posted and that no worker is posting: (round id,
        chat id). Rounds that started less than ``unclaimed_grace_ms`` ago and were never
        claimed are left to the worker that started them. (An ended round's results say
        all its board would.)"""
        return await self.store.delivery_lookup.unposted_boards(
            now_ms=self.clock(), unclaimed_grace_ms=unclaimed_grace_ms
        )

    async def phase_unseen(self, round_id: int, *, hold_ms: int = UNSEEN_PHASE_HOLD_MS) -> bool:
        """Whether the round's deadline is to wait because no board shows its phase yet
        (none was posted, or the one posted shows an earlier phase), for at most
        ``hold_ms`` past it; a board Telegram refused shows nothing, and holds nothing."""
        found = await self.store.delivery_lookup.board_shows(round_id)
        if found is None:
            return False
        phase, deadline_ms, message_id, board_phase = found
        if not Phase(phase).is_open or message_id == BOARD_REFUSED:
            return False
        shown = message_id is not None and board_phase == phase
        return not shown and self.clock() < deadline_ms + hold_ms

    async def round_ended(self, round_id: int) -> bool:
        """Whether the round is over (settled or void), as one cheap read says."""
        phase = await self.store.delivery_lookup.phase(round_id)
        return phase is not None and not Phase(phase).is_open

    async def board_message(self, round_id: int) -> int | None:
        """The message id of a round's live board; ``None`` until Telegram has it,
        ``BOARD_REFUSED`` if it refused it."""
        return await self.store.delivery_lookup.board_message(round_id)

    async def boards(self, round_id: int) -> tuple[int | None, int | None]:
        """A round's live board (as ``board_message``) and the board message replaced by
        a new phase's (or a stray) still to be taken down, ``None`` if there is none."""
        return await self.store.delivery_lookup.boards(round_id)

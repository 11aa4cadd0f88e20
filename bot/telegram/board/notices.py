"""The messages that tell a group what a round did: its results, a shoe replaced."""

from __future__ import annotations

from functools import partial

from bot.engine.round import Round, RoundSettled, RoundStarted, RoundState, RoundVoided
from bot.telegram.board.lease import DeliveryLease
from bot.telegram.board.memory import BoardMemory, urgently
from bot.telegram.board.rendering import board_people
from bot.telegram.budget import Priority
from bot.telegram.delivery import ChatOutbox
from bot.telegram.lookups import ChatSettings, People
from bot.telegram.messenger import Messenger
from bot.telegram.results import ResultsMessage
from bot.telegram.service_needs import BoardService


class RoundNotices:
    """Sends a round's results once, under the service's claim and lease, and the notice
    that a table's shoe was replaced (or retired)."""

    def __init__(
        self,
        service: BoardService,
        messenger: Messenger,
        outbox: ChatOutbox,
        memory: BoardMemory,
        chats: ChatSettings,
        people: People,
        lease: DeliveryLease,
        results: ResultsMessage,
    ) -> None:
        self.service = service
        self.messenger = messenger
        self.outbox = outbox
        self.memory = memory
        self.chats = chats
        self.people = people
        self.lease = lease
        self.results = results

    def announce(self, state: Round, ended: RoundSettled | RoundVoided) -> None:
        """Send a round's results (unless this process has them queued already)."""
        send = urgently(partial(self._announce, state, ended))
        self.memory.queue_once(("results", state.id), partial(self.outbox.put, state.chat_id), send)

    def shoe_replaced(self, state: RoundState, started: RoundStarted) -> None:
        """Tell the group its shoe was replaced (or retired), revealing the old one's seed."""
        self.outbox.put(state.chat_id, partial(self._shoe_replaced, state, started))

    async def _announce(self, state: Round, ended: RoundSettled | RoundVoided) -> None:
        """Post the one message that closes a round, unless it went out or another worker
        is sending it. It counts as sent only once Telegram answered: a crash before that
        leaves it to be sent again when the lease ran out (twice only if Telegram had it
        already)."""
        if not await self.service.claim_announcement(state.id, lease_ms=self.lease.lease_ms):
            return
        people = await self.people.names(list(state.participants) + board_people(state))
        await self.lease.keeping(
            self.service.renew_announcement_claim,
            state.id,
            partial(self.results.send, state, ended, people),
        )
        # Sent, or refused for good (logged): either way Telegram answered.
        await self.service.mark_announced(state.id)

    async def _shoe_replaced(self, state: RoundState, started: RoundStarted) -> None:
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

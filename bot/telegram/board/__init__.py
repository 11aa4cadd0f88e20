"""The round's messages in the group: the live board (posted, then edited as the round
moves), the results, and the notice that a shoe was replaced.

``Board`` is what the rest of the shell calls. Its parts, a job each, share what this
process remembers (``memory``): the board rendered as the round is (``rendering``), a
round's first board (``posting``, under a ``lease``), one edit (``editing``) and when to
make it (``refreshing``), a new phase as a new message (``phases``), an ended round's
last edit (``closing``), the results and shoe notices (``notices``), the sweep's
look for what a dead worker left (``sweep``), and a press on a board it left unrecorded
(``presses``)."""

from __future__ import annotations

from collections.abc import Callable

from bot.engine.round import Phase, Round, RoundSettled, RoundStarted, RoundState, RoundVoided
from bot.service.game import CommandResult
from bot.telegram.board.closing import BoardClosing
from bot.telegram.board.editing import BoardEditor
from bot.telegram.board.lease import DeliveryLease
from bot.telegram.board.memory import BOARD_CACHE_SECONDS, BOARDS_CACHED, BoardMemory
from bot.telegram.board.notices import RoundNotices
from bot.telegram.board.phases import REPOST_BACKLOG_SECONDS, PhaseBoards
from bot.telegram.board.posting import BoardPosting
from bot.telegram.board.presses import BoardPresses
from bot.telegram.board.refreshing import BoardRefresh
from bot.telegram.board.rendering import BoardRenderer, board_people
from bot.telegram.board.sweep import BoardSweep
from bot.telegram.delivery import ChatOutbox
from bot.telegram.lookups import ChatSettings, People
from bot.telegram.messenger import Messenger
from bot.telegram.miniapp_links import MiniAppLinks
from bot.telegram.results import ResultsMessage
from bot.telegram.service_needs import BoardService

__all__ = [
    "BOARDS_CACHED",
    "BOARD_CACHE_SECONDS",
    "REPOST_BACKLOG_SECONDS",
    "Board",
    "board_people",
]


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
        links: MiniAppLinks | None = None,
    ) -> None:
        self.service = service
        self.messenger = messenger
        self.outbox = outbox
        #: Sends a round's results (text, picture, the dealer's cards turning over).
        self.results = ResultsMessage(messenger)
        memory = self._memory = BoardMemory(edit_seconds=edit_seconds)
        lease = self._lease = DeliveryLease(lease_seconds)
        renderer = self._renderer = BoardRenderer(service, people, clock, links)
        editor = BoardEditor(service, messenger, memory, renderer)
        closing = self._closing = BoardClosing(service, outbox, memory, editor)
        refresh = self._refresh = BoardRefresh(
            outbox, memory, editor, closing, edit_seconds=edit_seconds
        )
        posting = self._posting = BoardPosting(
            service, messenger, outbox, memory, renderer, lease, closing
        )
        phases = self._phases = PhaseBoards(
            service,
            messenger,
            outbox,
            memory,
            posting=posting,
            refresh=refresh,
            editor=editor,
            closing=closing,
        )
        notices = self._notices = RoundNotices(
            service, messenger, outbox, memory, chats, people, lease, self.results
        )
        self._presses = BoardPresses(service, outbox, memory)
        self._sweep = BoardSweep(
            service, lease, posting=posting, notices=notices, closing=closing, phases=phases
        )

    @property
    def lease_ms(self) -> int:
        """How long a worker's claim on sending a board or the results lasts."""
        return self._lease.lease_ms

    @lease_ms.setter
    def lease_ms(self, lease_ms: int) -> None:
        self._lease.lease_ms = lease_ms

    @property
    def window_moved(self) -> Callable[[CommandResult], None] | None:
        """Told of a window moved to open when its board reached the group (the deadline
        is timed again: ``RoundProgress.window_moved``)."""
        return self._renderer.window_moved

    @window_moved.setter
    def window_moved(self, told: Callable[[CommandResult], None] | None) -> None:
        self._renderer.window_moved = told

    def sizes(self) -> dict[str, int]:
        """Entries kept now, per round or per chat (each bounded, or transient)."""
        return {
            **self._memory.sizes(),
            "unshown_since": len(self._sweep.unshown_since),
            "tasks": len(self._refresh.tasks),
        }

    # -- what callers ask for ---------------------------------------------------------

    def post(self, chat_id: int, round_id: int) -> None:
        """Post a round's board (unless this process has it queued already)."""
        self._posting.post(chat_id, round_id)

    def announce(self, state: Round, ended: RoundSettled | RoundVoided) -> None:
        """Send a round's results (unless this process has them queued already)."""
        self._notices.announce(state, ended)

    def refresh(self, state: RoundState, *, at_once: bool = False) -> None:
        """Edit the round's board soon: throttled, or for a change of phase (``at_once``)
        as soon as the chat's outbox gets to it (``BoardRefresh.refresh``)."""
        self._refresh.refresh(state, at_once=at_once)

    def close(self, chat_id: int, round_id: int) -> None:
        """Show an ended round over on its board, its buttons gone, and record it
        (``BoardClosing.close``)."""
        self._closing.close(chat_id, round_id)

    def repost(self, state: RoundState) -> None:
        """Show a new phase (betting, grabbing) as a new board message, which notifies the
        group as an edit does not, and delete the old one. Only a board this worker or
        another has posted is reposted: one still being posted shows the phase anyway; nor
        one whose phase is over when its turn comes (what ended it shows itself)."""
        self._phases.show_phase(state.chat_id, state.id, state.phase)

    def shows(self, round_id: int, phase: Phase) -> bool:
        """Whether this process recorded the round's board showing ``phase``: then it is
        shown (a board that replaces it shows the same phase, or a later one)."""
        return self._memory.phase_recorded.get(round_id) is phase

    def pressed(self, round_id: int, message_id: int) -> None:
        """A bid, bet, cancel or Grab button of the round was pressed on ``message_id``:
        if that is not its board, it is taken down (``BoardPresses``)."""
        self._presses.pressed(round_id, message_id)

    def shoe_replaced(self, state: RoundState, started: RoundStarted) -> None:
        """Tell the group its shoe was replaced (or retired), revealing the old one's seed."""
        self._notices.shoe_replaced(state, started)

    async def redeliver(self) -> None:
        """Queue what should be out by now and no worker is sending (``BoardSweep``)."""
        await self._sweep.redeliver()

    def forget_quiet(self) -> None:
        """Forget the boards and edit times whose time ran out."""
        self._memory.forget_quiet()

    def cancel_edits(self) -> None:
        """Drop the edits waiting for their turn (stopping without sending them)."""
        self._refresh.cancel()

    async def drain(self, timeout: float) -> None:
        """Wait for edits on their way to be queued."""
        await self._refresh.drain(timeout)

"""Shells of the shell's collaborators for their tests: a ``Board`` and ``Replies`` each
over the fakes of ``tests.helpers.telegram``, with what their tests move and read, and the
whole shell (``GameBot``) over a fake Bot."""

from __future__ import annotations

from bot.config import Config
from bot.engine.round import Round
from bot.service.game import GameService, Person
from bot.store.db import Database
from bot.telegram.board import Board
from bot.telegram.budget import GROUP_SENDS_PER_MINUTE, Priority, SendBudget, SendRate
from bot.telegram.delivery import ChatOutbox
from bot.telegram.lookups import ChatSettings, People
from bot.telegram.messenger import Messenger
from bot.telegram.replies import Replies
from bot.telegram.shell import GameBot
from bot.telegram.views import Views
from tests.helpers.telegram import (
    FAST_RETRIES,
    GROUP,
    SETTINGS,
    Deliveries,
    FakeBot,
    FakeService,
    MillisecondsClock,
    SecondsClock,
    message_update,
    new_round,
    person,
)

ANN, BOB = Person(11, "Ann"), Person(12, "Bob")
LEASE_SECONDS = 10.0


class BoardShell:
    """A Board over a fake Bot and a fake service holding round 7 of ``GROUP``."""

    def __init__(self, *, edit_seconds: float, lease_seconds: float = LEASE_SECONDS) -> None:
        self.bot = FakeBot()
        self.service = FakeService()
        self.service.people = {ANN.id: ANN, BOB.id: BOB}
        self.clock = MillisecondsClock()
        #: The group's minute of sends, on a clock that only the test moves.
        self.sends = SendBudget(GROUP_SENDS_PER_MINUTE, clock=SecondsClock())
        messenger = Messenger(self.sends, retrying=FAST_RETRIES, toast_retrying=FAST_RETRIES)
        messenger.attach(self.bot)
        self.outbox = ChatOutbox()
        service = self.service
        self.board = Board(
            service,
            messenger,
            self.outbox,
            ChatSettings(service),
            People(service),
            edit_seconds=edit_seconds,
            lease_seconds=lease_seconds,
            clock=self.clock,
        )
        self.round = new_round(7).round
        self.service.put(self.round)

    async def settle(self) -> None:
        """Let edits on their way be queued, and everything queued go out."""
        await self.board.drain(5.0)
        await self.outbox.drain(5.0)

    async def posted(self) -> None:
        """Round 7's board, posted."""
        self.board.post(GROUP, self.round.id)
        await self.settle()
        assert self.service.board_messages[self.round.id] == 1

    async def rate_behind(self, per_second: float) -> SendRate:
        """Give the messenger a strict rate of ``per_second`` whose next turn is taken:
        whatever comes next waits ``1 / per_second`` seconds for it."""
        rate = SendRate(per_second=per_second, burst=1)
        self.board.messenger.rate = rate
        await rate.acquire(Priority.RESULTS)
        return rate

    def change(self, state: Round) -> Round:
        """Make ``state`` the round as the database has it, and refresh its board."""
        self.service.put(state)
        self.board.refresh(state)
        return state

    def board_text(self, state: Round) -> str:
        people = {person.id: person for person in (ANN, BOB)}
        return Views(SETTINGS).board(state, people, self.clock())[0]

    @property
    def edits(self) -> list[str]:
        return [call.args["text"] for call in self.bot.of("edit_message_text")]


class RepliesShell:
    """Replies over a fake Bot, with a group budget of ``per_minute`` replies."""

    def __init__(self, per_minute: int) -> None:
        self.bot = FakeBot()
        self.service = FakeService()
        self.clock = SecondsClock()
        self.deliveries = Deliveries()
        self.messenger = Messenger(
            observer=self.deliveries, retrying=FAST_RETRIES, toast_retrying=FAST_RETRIES
        )
        self.messenger.attach(self.bot)
        self.outbox = ChatOutbox()
        chats = ChatSettings(self.service)
        self.replies = Replies(
            self.messenger,
            self.outbox,
            chats,
            per_minute=per_minute,
            clock=self.clock,
            retry_seconds=0.01,
        )

    async def settle(self) -> None:
        """Let everything queued go out (timers are not waited for)."""
        await self.outbox.drain(5.0)

    async def spend_budget(self) -> None:
        """Use up the group's budget now: one reply per slot, each sent alone."""
        for number in range(self.replies.budget.limit):
            self.replies.reply(
                message_update(GROUP, person(11, "Ann"), f"/balance {number}"), f"spent {number}"
            )
            await self.settle()

    def until_slot_almost_free(self) -> None:
        """Move the clock to a hundredth of a second before the oldest send leaves the
        window (the budget's timer then fires soon, in real time)."""
        self.clock.advance(self.replies.budget.wait(GROUP) - 0.01)

    def past_the_slot(self) -> None:
        """Move the clock just past the moment the oldest send leaves the window."""
        self.clock.advance(0.02)


class GameShell:
    """The bot's own shell (``GameBot``, with its real handlers) over ``service``, by
    default one over a database it never opens, its messages going to a fake Bot."""

    def __init__(self, service: GameService | None = None, config: Config | None = None) -> None:
        self.service = service or GameService(Database.from_url("sqlite+aiosqlite://"))
        self.game = GameBot(config or Config(), self.service)
        self.bot = FakeBot()
        self.game.messenger.attach(self.bot)

    async def sent(self) -> list[str]:
        """The texts of the messages sent, oldest first, once everything queued went out."""
        await self.game.outbox.drain(5.0)
        return self.bot.texts

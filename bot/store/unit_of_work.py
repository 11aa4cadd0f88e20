"""The store as the service meets it: units of work with a repository per aggregate.

A ``UnitOfWork`` is one database transaction and the repositories that work in it. It
commits when its block ends without an error and rolls back otherwise; no repository
commits by itself. ``Store.writing()`` gives one that writes, ``Store.reading()`` one on
a consistent snapshot that blocks no writer, ``Store.round_commands`` runs the hot
path (a bid, bet, grab or deadline in two round trips) and ``Store.round_starts`` a
round's start on the same connections. Beside them, a few small looks and writes that
every group or the sweep takes again and again run as single statements on those
connections: ``autobet_lookup``, ``chat_lookup`` (a group's settings), ``chat_bots`` (the
bot that serves a group), ``delivery_records``
(the leases on boards and results), ``delivery_lookup`` (boards and results still to go
out, a board's message), ``due_lookup`` (rounds and tables due) and ``table_reads`` (a
group's table for the Mini App's live feed).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.answers import AnswerRecords
from bot.store.autobets import AutobetLookup, AutobetRepository
from bot.store.chat_bots import ChatBots
from bot.store.chats import ChatLookup, ChatRepository
from bot.store.client_seeds import ClientSeeds
from bot.store.console import ConsoleLinkUses, ConsoleQueries
from bot.store.console_sessions import ConsoleSessions
from bot.store.db import Database
from bot.store.deliveries import DeliveryLookup, DeliveryRecords
from bot.store.due import DueLookup
from bot.store.ledger import Ledger
from bot.store.people import AuditLog, UserRepository
from bot.store.queries import Queries
from bot.store.round_commands import RoundCommands
from bot.store.round_starts import RoundStarts
from bot.store.round_writers import RoundWriter
from bot.store.rounds import RoundRepository
from bot.store.shoes import ShoeRepository
from bot.store.stats import StatsQueries
from bot.store.table_reads import TableReads
from bot.store.updates import ProcessedUpdates


class UnitOfWork:
    """One transaction's repositories."""

    def __init__(self, session: AsyncSession, bot_id: int) -> None:
        self.rounds = RoundRepository(session)
        self.round_writer = RoundWriter(session)
        self.ledger = Ledger(session)
        self.chats = ChatRepository(session, bot_id)
        self.shoes = ShoeRepository(session)
        self.autobets = AutobetRepository(session, bot_id)
        self.users = UserRepository(session)
        self.client_seeds = ClientSeeds(session)
        self.audit = AuditLog(session)
        self.updates = ProcessedUpdates(session, bot_id)
        self.queries = Queries(session, bot_id)
        self.console = ConsoleQueries(session)
        self.console_links = ConsoleLinkUses(session)
        self.console_sessions = ConsoleSessions(session)
        self.stats = StatsQueries(session)
        #: Run once the unit has committed (never if it rolls back).
        self.after_commit: list[Callable[[], None]] = []


class Store:
    """Units of work over one database, for one bot (processed updates are its own)."""

    def __init__(self, db: Database, *, bot_id: int = 0) -> None:
        self.db = db
        self.bot_id = bot_id
        self.round_commands = RoundCommands(db, bot_id=bot_id)
        self.round_starts = RoundStarts(db, bot_id=bot_id)
        self.autobet_lookup = AutobetLookup(db)
        self.chat_lookup = ChatLookup(db)
        self.delivery_records = DeliveryRecords(db)
        self.delivery_lookup = DeliveryLookup(db, bot_id=bot_id)
        self.due_lookup = DueLookup(db, bot_id=bot_id)
        self.chat_bots = ChatBots(db, bot_id=bot_id)
        self.answer_records = AnswerRecords(db, bot_id=bot_id)
        self.table_reads = TableReads(db, self.round_commands.settings_of)

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[UnitOfWork]:
        """A unit of work that writes: commits on success, rolls back on any error."""
        async with self.db.transaction() as session:
            uow = UnitOfWork(session, self.bot_id)
            yield uow
        for hook in uow.after_commit:
            hook()

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[UnitOfWork]:
        """A unit of work for reads only."""
        async with self.db.reading() as session:
            yield UnitOfWork(session, self.bot_id)

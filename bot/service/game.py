"""The service: the bot's use cases over one database, one unit of work per command or
deadline.

Each use case loads what it needs, asks the engine, and writes the new round state, its
ledger transaction and the processed update in one transaction, compare-and-set on the
round's version. It returns what happened (``CommandResult``) so the shell can tell the
group, or raises a ``GameError`` whose ``key`` names the message to show; then nothing
changed.

The use cases live by family, each in a module of its own: ``rounds``, ``tables``,
``chips``, ``deliveries``, ``reading`` and ``autobets`` (which extends ``rounds``: a
round command that opens betting places the standing bets). ``GameService`` puts them
together so that the shell has one object to call (the families share one
``ServiceCore``: the store, the clock, the seeds, the defaults).
"""

from __future__ import annotations

from functools import cached_property

from bot.service.answers import KeptAnswers as KeptAnswers
from bot.service.answers import KeptRecord as KeptRecord
from bot.service.answers import NewAnswer as NewAnswer
from bot.service.autobets import AutobetChange as AutobetChange
from bot.service.autobets import AutobetUseCases
from bot.service.autobets import SameAgain as SameAgain
from bot.service.chips import ChipUseCases
from bot.service.deliveries import BOARD_REFUSED as BOARD_REFUSED
from bot.service.deliveries import DELIVERY_LEASE_MS as DELIVERY_LEASE_MS
from bot.service.deliveries import DeliveryUseCases
from bot.service.group_sends import GroupSends as GroupSends
from bot.service.reading import ReadingUseCases
from bot.service.records import MAX_USER_ID as MAX_USER_ID
from bot.service.records import AuditLine as AuditLine
from bot.service.records import Balance as Balance
from bot.service.records import CommandResult as CommandResult
from bot.service.records import ParticipantResult as ParticipantResult
from bot.service.records import Person as Person
from bot.service.records import RoundSummary as RoundSummary
from bot.service.records import SettingChange as SettingChange
from bot.service.records import ShoeInfo as ShoeInfo
from bot.service.records import StatementLine as StatementLine
from bot.service.records import random_seed as random_seed
from bot.service.records import wall_clock_ms as wall_clock_ms
from bot.service.seeds import SeedUseCases
from bot.service.stats import StatsUseCases
from bot.service.tables import TableUseCases
from bot.store.errors import database_unavailable as database_unavailable


class GameService(
    AutobetUseCases,
    TableUseCases,
    ChipUseCases,
    DeliveryUseCases,
    ReadingUseCases,
    StatsUseCases,
    SeedUseCases,
):
    """Every use case of the bot, over one database."""

    @cached_property
    def kept_answers(self) -> KeptAnswers:
        """The answers kept until Telegram has them (composed, not inherited: the shell's
        replies are its only user)."""
        return KeptAnswers(self.store, self.clock)

    def group_sends(self, *, limit: int, seconds: float) -> GroupSends:
        """The groups' shares of Telegram's limit, ``limit`` sends a group per ``seconds``,
        counted in the database for every worker of this bot."""
        return GroupSends(
            self.db, self.clock, bot_id=self.store.bot_id, limit=limit, seconds=seconds
        )

"""The service: the bot's use cases over one database, one unit of work per command or
deadline.

Each use case loads what it needs, asks the engine, and writes the new round state, its
ledger transaction and the processed update in one transaction, compare-and-set on the
round's version. It returns what happened (``CommandResult``) so the shell can tell the
group, or raises a ``GameError`` whose ``key`` names the message to show; then nothing
changed.

The use cases live by family, each a class of its own that is given what it needs (the
store, the clock, the people stored, the groups' settings, the observer, another family):
``round_starts``, ``round_commands`` (run by ``round_steps``), ``round_deadlines``,
``autobets``, ``tables``, ``table_snapshots``, ``chips``, ``deliveries``, ``reading``,
``stats`` and ``seeds``.
``GameService`` builds them, wires the standing bets to the rounds' events (placed as
betting opens, see ``bot.service.round_events``) and the live feed's ``round_changes`` to
every round state written, and hands the shell each use case under one object.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

from bot.engine.settings import Settings
from bot.rules import fairness as fair
from bot.service.answers import KeptAnswers as KeptAnswers
from bot.service.answers import KeptRecord as KeptRecord
from bot.service.answers import NewAnswer as NewAnswer
from bot.service.autobets import AutobetChange as AutobetChange
from bot.service.autobets import AutobetUseCases
from bot.service.autobets import SameAgain as SameAgain
from bot.service.chips import ChipUseCases
from bot.service.core import GroupSettings, ServiceObserver, StoredPeople, Unobserved
from bot.service.deliveries import BOARD_REFUSED as BOARD_REFUSED
from bot.service.deliveries import DELIVERY_LEASE_MS as DELIVERY_LEASE_MS
from bot.service.deliveries import BoardClaim as BoardClaim
from bot.service.deliveries import DeliveryUseCases
from bot.service.group_bots import GroupBotUseCases
from bot.service.group_sends import GroupSends as GroupSends
from bot.service.reading import PlayerRound as PlayerRound
from bot.service.reading import ReadingUseCases
from bot.service.reading import RoundOnBoard as RoundOnBoard
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
from bot.service.records import UnconfirmedChange as UnconfirmedChange
from bot.service.records import random_seed as random_seed
from bot.service.records import wall_clock_ms as wall_clock_ms
from bot.service.round_changes import RoundChanges
from bot.service.round_commands import RoundCommandUseCases
from bot.service.round_deadlines import RoundDeadlineUseCases
from bot.service.round_events import RoundEvents
from bot.service.round_starts import RoundStartUseCases
from bot.service.round_steps import RoundSteps
from bot.service.seeds import SeedUseCases
from bot.service.stats import StatsUseCases
from bot.service.table_snapshots import TableSnapshot as TableSnapshot
from bot.service.table_snapshots import TableSnapshots
from bot.service.tables import TableUseCases
from bot.store.db import Database
from bot.store.errors import database_unavailable as database_unavailable
from bot.store.unit_of_work import Store


class GameService:
    """Every use case of the bot, over one database: the families built and wired here,
    and each of their use cases offered by name (``service.bet`` is
    ``service.round_commands.bet``)."""

    def __init__(
        self,
        db: Database,
        defaults: Settings | None = None,
        *,
        clock: Callable[[], int] = wall_clock_ms,
        seed_source: Callable[[], bytes] = random_seed,
        seed_derivation: int = fair.CURRENT,
        bot_id: int = 0,
        observer: ServiceObserver | None = None,
        round_changes: RoundChanges | None = None,
    ) -> None:
        self.db = db
        #: Round states written, for the Mini App's live feed (``watch`` them): another
        #: bot's service in this process gives its own, so one feed hears every bot's.
        self.round_changes = round_changes or RoundChanges(db)
        #: Processed updates are recorded per bot (the token's numeric prefix).
        self.store = Store(db, bot_id=bot_id)
        self.clock = clock
        self.defaults = defaults or Settings()
        self.people = StoredPeople(clock)
        self._build(seed_source, seed_derivation, observer or Unobserved())
        self._offer()

    def _build(
        self, seed_source: Callable[[], bytes], seed_derivation: int, observer: ServiceObserver
    ) -> None:
        """The families, each given what it needs; the standing bets listen to the rounds'
        events."""
        store, clock, people = self.store, self.clock, self.people
        group_settings = GroupSettings(self.defaults)
        events = RoundEvents()
        self.round_starts = RoundStartUseCases(
            store,
            clock=clock,
            people=people,
            group_settings=group_settings,
            observer=observer,
            events=events,
            seed_source=seed_source,
            seed_derivation=seed_derivation,
        )
        self.round_steps = RoundSteps(
            store,
            clock=clock,
            people=people,
            observer=observer,
            events=events,
            starts=self.round_starts,
        )
        self.round_commands = RoundCommandUseCases(self.round_steps)
        self.round_deadlines = RoundDeadlineUseCases(
            store, clock=clock, starts=self.round_starts, commands=self.round_commands
        )
        self.autobets = AutobetUseCases(
            store,
            clock=clock,
            people=people,
            group_settings=group_settings,
            observer=observer,
            commands=self.round_commands,
            events=events,
        )
        events.on_betting_opened(self.autobets.betting_opened)
        events.on_committed(self.round_changes.committed)
        self.table_snapshots = TableSnapshots(store, group_settings=group_settings)
        self.tables = TableUseCases(
            store, clock=clock, people=people, group_settings=group_settings
        )
        self.chips = ChipUseCases(
            store, clock=clock, people=people, changed=self.round_changes.chips_changed
        )
        self.group_bots = GroupBotUseCases(store, clock=clock, people=people)
        self.deliveries = DeliveryUseCases(store, clock=clock)
        self.reading = ReadingUseCases(store, db=self.db, clock=clock)
        self.stats = StatsUseCases(store, clock=clock)
        self.seeds = SeedUseCases(store, clock=clock, people=people)

    def _offer(self) -> None:
        """Each family's use cases under the service's own name, as the shell calls them."""
        starts, commands, deadlines = self.round_starts, self.round_commands, self.round_deadlines
        self.start_round = starts.start_round
        self.start_due_round = starts.start_due_round
        self.bid = commands.bid
        self.bet = commands.bet
        self.stake = commands.stake
        self.grab = commands.grab
        self.advance = commands.advance
        self.move_window = commands.move_window
        self.due_rounds = deadlines.due_rounds
        self.due_chat_ids = deadlines.due_chat_ids
        self.open_rounds = deadlines.open_rounds
        self.sweep = deadlines.sweep
        self.recover = deadlines.recover

        autobets = self.autobets
        self.place_autobets = autobets.place_autobets
        self.place_due_autobets = autobets.place_due_autobets
        self.autobet = autobets.autobet
        self.set_autobet = autobets.set_autobet
        self.same_again = autobets.same_again

        tables = self.tables
        self.note_people = tables.note_people
        self.forget_old_updates = tables.forget_old_updates
        self.note_chat = tables.note_chat
        self.set_open = tables.set_open
        self.is_open = tables.is_open
        self.knows_chat = tables.knows_chat
        self.table_snapshot = self.table_snapshots.table_snapshot
        self.settings = tables.settings
        self.change_setting = tables.change_setting

        self.serves = self.group_bots.serves
        self.serve_here = self.group_bots.serve_here

        chips = self.chips
        self.credit = chips.credit
        self.debit = chips.debit
        self.fund = chips.fund
        self.balance = chips.balance
        self.bank_balance = chips.bank_balance
        self.house_balance = chips.house_balance
        self.balances_everywhere = chips.balances_everywhere
        self.statement = chips.statement

        deliveries = self.deliveries
        self.claim_board = deliveries.claim_board
        self.renew_board_claim = deliveries.renew_board_claim
        self.claim_announcement = deliveries.claim_announcement
        self.renew_announcement_claim = deliveries.renew_announcement_claim
        self.set_board_message = deliveries.set_board_message
        self.replace_board_message = deliveries.replace_board_message
        self.mark_phase_shown = deliveries.mark_phase_shown
        self.unshown_phases = deliveries.unshown_phases
        self.replaced_board_gone = deliveries.replaced_board_gone
        self.mark_stray_board = deliveries.mark_stray_board
        self.replaced_boards = deliveries.replaced_boards
        self.mark_announced = deliveries.mark_announced
        self.mark_board_closed = deliveries.mark_board_closed
        self.mark_board_open = deliveries.mark_board_open
        self.unclosed_boards = deliveries.unclosed_boards
        self.unannounced = deliveries.unannounced
        self.unposted_boards = deliveries.unposted_boards
        self.phase_unseen = deliveries.phase_unseen
        self.round_ended = deliveries.round_ended
        self.board_message = deliveries.board_message
        self.boards = deliveries.boards

        reading = self.reading
        self.round = reading.round
        self.round_on_board = reading.round_on_board
        self.current_round = reading.current_round
        self.current_phase = reading.current_phase
        self.shoe = reading.shoe
        self.history = reading.history
        self.results = reading.results
        self.ending = reading.ending
        self.player_rounds = reading.player_rounds
        self.audit_log = reading.audit_log
        self.names = reading.names
        self.find_user = reading.find_user
        self.database_refuses_writes = reading.database_refuses_writes
        self.vital_signs = reading.vital_signs

        self.player_stats = self.stats.player_stats
        self.leaders = self.stats.leaders
        self.client_seed = self.seeds.client_seed
        self.set_client_seed = self.seeds.set_client_seed

    @property
    def people_remembered(self) -> int:
        """Users this process remembers having stored as they are (``StoredPeople``)."""
        return self.people.remembered

    def forget_quiet(self) -> None:
        """Forget the users whose time as stored ran out (``StoredPeople.forget_quiet``)."""
        self.people.forget_quiet()

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

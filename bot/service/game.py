"""Use cases: one database transaction per command or deadline.

Each use case loads what it needs, asks the engine, and writes the new round state, its
ledger transaction and the processed update id in one transaction, compare-and-set on
the round's version. It returns what happened (``CommandResult``) so the shell can tell
the group, or raises a ``GameError`` whose ``key`` names the message to show; then
nothing changed.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import and_, insert, or_, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from bot.engine import round as engine
from bot.engine.errors import GameError, NotDue, RuleViolation
from bot.engine.round import (
    BANK,
    HOUSE,
    HOUSE_DEALER,
    MINT,
    BetCancelled,
    BetPlaced,
    BidPlaced,
    CardsDealt,
    Event,
    Phase,
    Posting,
    RetiredShoe,
    Round,
    RoundSettled,
    RoundVoided,
    ShoeRef,
    Transition,
    VoidReason,
    available,
)
from bot.engine.settings import CARD_TABLE_DEFAULTS, SettingError, Settings
from bot.rules.ruleset import Ruleset, get_ruleset
from bot.rules.split import SEED_BYTES, commitment
from bot.store import ledger, queries, rounds
from bot.store.db import Database, dialect_insert, urgent
from bot.store.errors import (
    PROCESSED_UPDATE,
    TRANSIENT_SQLSTATES,
    TransientDatabaseError,
    violated_constraint,
)
from bot.store.ledger import Balance
from bot.store.models import (
    AuditEntry,
    Chat,
    OutcomeRow,
    ProcessedUpdate,
    RoundRow,
    ShoeRow,
    User,
)

# The read side's results, where the shell has always imported them from.
from bot.store.queries import AuditLine as AuditLine
from bot.store.queries import RoundSummary as RoundSummary
from bot.store.queries import StatementLine as StatementLine
from bot.store.round_commands import AlreadyProcessed, Decide, Located, NotOnHotPath, RoundCommands

log = logging.getLogger(__name__)
_T = TypeVar("_T")

MAX_ATTEMPTS = 20
#: ``board_message_id`` of a round whose board Telegram refused (it is not tried again).
BOARD_REFUSED = 0
#: How long a worker holds the job of posting a board or sending results before another
#: worker, or this one restarted, may take it over. The holder renews it while its message
#: waits to go out (behind Telegram's rate limits), so this is only how late a message
#: whose sender died goes out: shorter than a bidding window, so that a board lost in a
#: crash still shows while bids are open; long enough that a slow database or a busy
#: event loop does not let a live holder's lease run out between renewals (a third of it).
DELIVERY_LEASE_MS = 10_000


def wall_clock_ms() -> int:
    """Milliseconds since the epoch (the service's default clock)."""
    return time.time_ns() // 1_000_000


def random_seed() -> bytes:
    """A fresh round seed from the operating system's CSPRNG."""
    return secrets.token_bytes(SEED_BYTES)


@dataclass(frozen=True, slots=True)
class Person:
    """A Telegram user as the shell saw them."""

    id: int
    first_name: str = ""
    username: str | None = None
    last_name: str | None = None


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a use case did.

    ``round`` is the round after the command (``None`` if none was involved), ``events``
    what happened to it, ``started`` a round that began as a consequence (after a
    re-deal) and ``started_events`` what its start did, ``duplicate`` is true when the
    update had been processed before, and ``refused`` is why a round due to start by
    itself could not.
    """

    round: Round | None = None
    events: tuple[Event, ...] = ()
    started: Round | None = None
    duplicate: bool = False
    refused: GameError | None = None
    started_events: tuple[Event, ...] = ()


@dataclass(frozen=True, slots=True)
class ParticipantResult:
    """A participant's line in a settled round."""

    user_id: int
    role: str
    stake: int
    envelope: int
    kind: str
    points: int
    multiplier: int
    result: str
    gross: int
    rake: int
    rebate: int
    net: int


@dataclass(frozen=True, slots=True)
class ShoeInfo:
    """A group's shoe; ``seed`` is ``None`` while it is still being dealt from."""

    id: int
    chat_id: int
    decks: int
    commitment: str
    dealt: int
    seed: bytes | None


@dataclass
class _Attempt:
    """What one try of a round command produced."""

    before: Round
    transition: Transition
    started: Transition | None = None
    refused: GameError | None = None

    def result(self) -> CommandResult:
        """What the shell needs to know of this attempt."""
        started = self.started
        return CommandResult(
            self.transition.round,
            self.transition.events,
            started.round if started else None,
            refused=self.refused,
            started_events=started.events if started else (),
        )


_TRANSACTION_KIND = {
    BidPlaced: "bid",
    BetPlaced: "bet",
    BetCancelled: "bet_cancel",
    RoundSettled: "settle",
    RoundVoided: "void",
}


class GameService:
    """The bot's use cases over one database."""

    def __init__(
        self,
        db: Database,
        defaults: Settings | None = None,
        *,
        clock: Callable[[], int] = wall_clock_ms,
        seed_source: Callable[[], bytes] = random_seed,
        bot_id: int = 0,
    ) -> None:
        self.db = db
        #: Processed updates are recorded per bot (the token's numeric prefix).
        self.bot_id = bot_id
        self.round_commands = RoundCommands(db, bot_id=bot_id)
        self.defaults = defaults or Settings()
        self.clock = clock
        self.seed_source = seed_source
        self._people_stored: dict[int, Person] = {}

    # -- helpers ----------------------------------------------------------------------

    async def _claim_update(self, session: AsyncSession, update_id: int | None, now: int) -> None:
        """Record the update as processed, in the transaction of its effect. An update
        processed before fails here with an ``IntegrityError`` on ``processed_updates``,
        which the callers turn into a duplicate result."""
        if update_id is not None:
            await session.execute(
                insert(ProcessedUpdate).values(
                    bot_id=self.bot_id, update_id=update_id, processed_at_ms=now
                )
            )

    @asynccontextmanager
    async def _unit(self) -> AsyncIterator[AsyncSession]:
        """The unit of work (``Database.transaction``); after it commits, the people it
        stored are remembered so that later commands need not look them up again."""
        async with self.db.transaction() as session:
            yield session
        self._people_stored.update(session.info.get("people", {}))

    async def _touch_people(
        self, session: AsyncSession, people: Sequence[Person], now: int
    ) -> None:
        """Store or update users, unless this process stored them as they are already."""
        for person in people:
            if self._people_stored.get(person.id) == person:
                continue
            session.info.setdefault("people", {})[person.id] = person
            values = _user_columns(person, now)
            # An upsert: two first commands of a new user at once must both go through.
            statement = dialect_insert(session, User).values(id=person.id, **values)
            await session.execute(
                statement.on_conflict_do_update(index_elements=[User.id], set_=values)
            )

    async def _chat(self, session: AsyncSession, chat_id: int, now: int) -> Chat:
        chat = await session.get(Chat, chat_id)
        if chat is None:
            # Two first commands in a new chat at once: the second insert is a no-op.
            await session.execute(
                dialect_insert(session, Chat)
                .values(
                    id=chat_id,
                    title="",
                    is_group=chat_id < 0,
                    is_open=False,
                    settings={},
                    created_at_ms=now,
                )
                .on_conflict_do_nothing()
            )
            chat = await session.get(Chat, chat_id)
            assert chat is not None
        return chat

    def _settings_of(self, chat: Chat | None) -> Settings:
        if chat is None or not chat.settings:
            return self.defaults
        return Settings.from_dict(chat.settings, base=self.defaults)

    async def _audit(
        self,
        session: AsyncSession,
        chat_id: int,
        actor: Person,
        action: str,
        now: int,
        **details: Any,
    ) -> None:
        session.add(
            AuditEntry(
                chat_id=chat_id,
                actor_id=actor.id,
                action=action,
                details=details,
                created_at_ms=now,
            )
        )

    async def _insert_round(self, session: AsyncSession, chat: Chat, now: int) -> Transition:
        settings = self._settings_of(chat)
        bank = 0
        if settings.dealer == HOUSE_DEALER:
            bank = await ledger.account_balance(session, chat.id, BANK)
            if bank <= 0:
                raise RuleViolation("bank_empty")
        shoe, retired = await self._shoe_for(session, chat.id, get_ruleset(settings.ruleset), now)
        transition = engine.start_round(
            round_id=0,
            chat_id=chat.id,
            settings=settings,
            seed=self.seed_source(),
            now_ms=now,
            bank=bank,
            shoe=shoe,
            retired_shoe=retired,
        )
        stored = await rounds.insert_round(session, transition.round, now)
        chat.next_round_at_ms = None
        return dataclasses.replace(transition, round=stored)

    async def _shoe_for(
        self, session: AsyncSession, chat_id: int, ruleset: Ruleset[Any], now: int
    ) -> tuple[ShoeRef | None, RetiredShoe | None]:
        """The shoe the group's next round deals from (``None`` for a game without one),
        and the shoe retired for it, whose seed is revealed: a spent shoe is replaced, and
        a table that moved to another game retires its shoe, so that the rounds dealt from
        it can be verified. (The round being started is the chat's only open round, so
        none is still to be dealt from a retired shoe.)"""
        row = await session.scalar(
            select(ShoeRow)
            .where(ShoeRow.chat_id == chat_id, ShoeRow.replaced_at_ms.is_(None))
            .with_for_update()
        )
        retired = None
        decks = ruleset.shoe_decks
        if row is not None and (row.decks != decks or row.dealt > ruleset.reshuffle_after):
            row.replaced_at_ms = now
            retired = RetiredShoe(row.id, bytes(row.seed))
            await session.flush()
            row = None
        if not decks:
            return None, retired
        if row is None:
            seed = self.seed_source()
            row = ShoeRow(
                chat_id=chat_id,
                decks=decks,
                seed=seed,
                commitment=commitment(seed),
                dealt=0,
                created_at_ms=now,
            )
            session.add(row)
            await session.flush()
        return ShoeRef(row.id, bytes(row.seed), row.dealt), retired

    async def _write(self, session: AsyncSession, attempt: _Attempt, now: int) -> None:
        """Persist a transition and its consequences in the current transaction."""
        before, transition = attempt.before, attempt.transition
        await rounds.save(session, before, transition, now)
        dealt = next((e for e in transition.events if isinstance(e, CardsDealt)), None)
        if dealt is not None and before.shoe is not None:
            moved = await session.execute(
                update(ShoeRow)
                .where(ShoeRow.id == before.shoe.id, ShoeRow.dealt == before.shoe.offset)
                .values(dealt=ShoeRow.dealt + dealt.cards)
            )
            if moved.rowcount != 1:  # type: ignore[attr-defined]
                raise RuntimeError(f"shoe {before.shoe.id} was dealt from by another round")
        if transition.postings:
            kind = next(
                (
                    _TRANSACTION_KIND[type(e)]
                    for e in transition.events
                    if type(e) in _TRANSACTION_KIND
                ),
                "round",
            )
            await ledger.post(
                session,
                chat_id=before.chat_id,
                kind=kind,
                postings=transition.postings,
                now_ms=now,
                round_id=before.id,
            )
        after = transition.round
        if after.phase.is_open:
            return
        chat = await self._chat(session, after.chat_id, now)
        if after.phase is Phase.SETTLED and chat.is_open:
            chat.next_round_at_ms = now + after.settings.pause_seconds * 1000
        elif after.void_reason in _REDEALS and chat.is_open:
            try:
                attempt.started = await self._insert_round(session, chat, now)
            except RuleViolation as error:  # the bank is empty: the table waits for /fund
                attempt.refused = error

    async def _run(
        self,
        *,
        chat_id: int | None,
        round_id: int | None,
        decide: Decide,
        actor: Person | None = None,
        update_id: int | None = None,
        skip_locked: bool = False,
    ) -> CommandResult:
        """Run a round command: on the hot path (two round trips) when it covers the
        step, else on the general path (the round loaded whole); retry on a stale version.

        ``round_id`` given with ``chat_id`` means the command names a round (a button):
        it is refused unless that is the chat's open round.
        """

        def checked(state: Round, free_chips: int, now: int) -> Transition:
            if chat_id is not None and round_id is not None and round_id != state.id:
                raise RuleViolation("stale_button")
            return decide(state, free_chips, now)

        hot = True
        for _ in range(MAX_ATTEMPTS):
            if hot:
                try:
                    return await self._run_hot(
                        chat_id, round_id, checked, actor, update_id, skip_locked
                    )
                except rounds.StaleRound:
                    continue
                except AlreadyProcessed:
                    return CommandResult(duplicate=True)
                except NotOnHotPath:
                    hot = False
                except GameError:
                    raise
                except Exception as error:
                    if _is_transient(error):
                        raise
                    log.exception("round command: the hot path failed; the general path runs")
                    hot = False
            try:
                return await self._run_whole(
                    chat_id, round_id, checked, actor, update_id, skip_locked
                )
            except rounds.StaleRound:
                continue
        raise RuntimeError(f"round command did not settle after {MAX_ATTEMPTS} attempts")

    async def _run_hot(
        self,
        chat_id: int | None,
        round_id: int | None,
        decide: Decide,
        actor: Person | None,
        update_id: int | None,
        skip_locked: bool,
    ) -> CommandResult:
        user_row = None
        if actor is not None and self._people_stored.get(actor.id) != actor:
            user_row = {"id": actor.id, **_user_columns(actor, self.clock())}
        where = Located(chat_id, None if chat_id is not None else round_id, skip_locked)
        applied = await self.round_commands.run(
            where,
            decide,
            clock=self.clock,
            user_id=actor.id if actor is not None else None,
            update_id=update_id,
            user_row=user_row,
        )
        if actor is not None:
            self._people_stored[actor.id] = actor
        if applied is None:
            if chat_id is not None:
                raise RuleViolation("stale_button" if round_id else "no_round")
            return CommandResult()
        return CommandResult(applied.transition.round, applied.transition.events)

    async def _run_whole(
        self,
        chat_id: int | None,
        round_id: int | None,
        decide: Decide,
        actor: Person | None,
        update_id: int | None,
        skip_locked: bool,
    ) -> CommandResult:
        """The general path: the round loaded whole, then written by ``_write``. Raises
        ``StaleRound`` to be tried again."""
        located: int | None = None
        try:
            async with self._unit() as session:
                # The clock is read once the transaction has its turn to write.
                now = self.clock()
                await self._claim_update(session, update_id, now)
                await self._touch_people(session, [actor] if actor else [], now)
                if chat_id is not None:
                    state = await rounds.load_open(session, chat_id)
                    if state is None:
                        raise RuleViolation("stale_button" if round_id else "no_round")
                else:
                    assert round_id is not None
                    state = await rounds.load(session, round_id, skip_locked=skip_locked)
                    if state is None:
                        return CommandResult()
                located = state.id
                free = 0
                if actor is not None:
                    free = (await ledger.balance(session, state.chat_id, actor.id)).available
                try:
                    transition = decide(state, free, now)
                except (GameError, DBAPIError):
                    raise  # refused, or the database's trouble (decided below)
                except Exception:
                    log.exception("round %s: error in a transition; voiding it", state.id)
                    transition = engine.void(state, VoidReason.ERROR)
                attempt = _Attempt(state, transition)
                await self._write(session, attempt, now)
        except (rounds.StaleRound, GameError):
            raise
        except Exception as error:
            if _is_repeat(error, update_id):
                return CommandResult(duplicate=True)
            if located is None or _is_transient(error):
                # Nothing was written; the command can be sent again, the sweep will
                # apply a deadline again.
                raise
            # Writing the transition failed: void the round, so none is left half-done.
            return await self._void_after_error(located, error)
        return attempt.result()

    async def _void_after_error(self, round_id: int, error: Exception) -> CommandResult:
        """Void a round whose transition could not be written, with every hold released."""
        log.error("round %s: a transition failed; voiding it", round_id, exc_info=error)
        async with self._unit() as session:
            now = self.clock()
            state = await rounds.load(session, round_id)
            if state is None or not state.phase.is_open:
                return CommandResult(state)
            attempt = _Attempt(state, engine.void(state, VoidReason.ERROR))
            await self._write(session, attempt, now)
        return attempt.result()

    # -- rounds -----------------------------------------------------------------------

    async def start_round(
        self, chat_id: int, *, actor: Person | None = None, update_id: int | None = None
    ) -> CommandResult:
        """Start a round in an open group. Refused if the table is closed or a round runs."""
        try:
            async with self._unit() as session:
                now = self.clock()
                await self._claim_update(session, update_id, now)
                await self._touch_people(session, [actor] if actor else [], now)
                chat = await self._chat(session, chat_id, now)
                if not chat.is_open:
                    raise RuleViolation("table_closed")
                running = await rounds.open_round_id(session, chat_id)
                if running is not None:
                    raise RuleViolation("round_running", round_id=running)
                transition = await self._insert_round(session, chat, now)
        except IntegrityError as error:
            if _is_repeat(error, update_id):
                return CommandResult(duplicate=True)
            # Two starts raced; the unique index let exactly one through.
            raise RuleViolation("round_running") from None
        return CommandResult(transition.round, transition.events)

    async def bid(
        self,
        chat_id: int,
        actor: Person,
        amount: int,
        *,
        round_id: int | None = None,
        update_id: int | None = None,
    ) -> CommandResult:
        """Bid ``amount`` cents to be the dealer of the chat's round."""
        return await self._stake(engine.bid, chat_id, actor, amount, round_id, update_id)

    async def bet(
        self,
        chat_id: int,
        actor: Person,
        amount: int,
        *,
        round_id: int | None = None,
        update_id: int | None = None,
    ) -> CommandResult:
        """Bet ``amount`` cents in the chat's round; again to change it, 0 to cancel it."""
        return await self._stake(engine.bet, chat_id, actor, amount, round_id, update_id)

    async def stake(
        self, chat_id: int, actor: Person, amount: int, *, update_id: int | None = None
    ) -> CommandResult:
        """A bare amount: a bid while the round is bidding, a bet while it is betting."""

        def by_phase(
            state: Round, user_id: int, amount: int, *, free_chips: int, now_ms: int
        ) -> Transition:
            command = engine.bid if state.phase is Phase.BIDDING else engine.bet
            return command(state, user_id, amount, free_chips=free_chips, now_ms=now_ms)

        return await self._stake(by_phase, chat_id, actor, amount, None, update_id)

    async def _stake(
        self,
        command: Callable[..., Transition],
        chat_id: int,
        actor: Person,
        amount: int,
        round_id: int | None,
        update_id: int | None,
    ) -> CommandResult:
        def decide(state: Round, free_chips: int, now: int) -> Transition:
            return command(state, actor.id, amount, free_chips=free_chips, now_ms=now)

        return await self._run(
            chat_id=chat_id, round_id=round_id, decide=decide, actor=actor, update_id=update_id
        )

    async def grab(
        self,
        chat_id: int,
        actor: Person,
        *,
        round_id: int | None = None,
        update_id: int | None = None,
    ) -> CommandResult:
        """Grab the next share of the chat's envelope; the last grab settles the round."""

        def decide(state: Round, free_chips: int, now: int) -> Transition:
            return engine.grab(state, actor.id, now)

        return await self._run(
            chat_id=chat_id, round_id=round_id, decide=decide, actor=actor, update_id=update_id
        )

    async def advance(self, round_id: int) -> CommandResult:
        """Apply a round's deadline if it has passed; nothing if not (a duplicate timer),
        or if another worker is advancing it right now."""

        def decide(state: Round, free_chips: int, now: int) -> Transition:
            return engine.advance(state, now)

        try:
            with urgent():  # before waiting commands for the write turn (bot/store/db.py)
                return await self._run(
                    chat_id=None, round_id=round_id, decide=decide, skip_locked=True
                )
        except NotDue:
            return CommandResult()

    async def due_rounds(self) -> list[tuple[int, int]]:
        """Open rounds whose deadline has passed: (round id, chat id), most overdue first."""
        now = self.clock()
        async with self.db.reading() as session:
            return await queries.due_rounds(session, now)

    async def due_chat_ids(self) -> list[int]:
        """Open tables whose pause after a settled round is over."""
        now = self.clock()
        async with self.db.reading() as session:
            return await queries.due_chat_ids(session, now)

    async def open_rounds(self) -> list[Round]:
        """Every open round (to reschedule their deadlines after a start), by id."""
        async with self.db.reading() as session:
            return await queries.open_rounds(session)

    async def start_due_round(self, chat_id: int) -> CommandResult:
        """Start the round of a table whose pause is over; if it cannot start (closed, a
        round already runs, the bank is empty), forget the pending start instead. The
        result's ``refused`` names why, when the group should be told (the empty bank)."""
        try:
            return await self.start_round(chat_id)
        except RuleViolation as error:
            async with self._unit() as session:
                await session.execute(
                    update(Chat).where(Chat.id == chat_id).values(next_round_at_ms=None)
                )
            return CommandResult(refused=error if error.key == "bank_empty" else None)

    async def sweep(self) -> list[CommandResult]:
        """Advance every overdue round and start the rounds whose pause is over."""
        results = [await self.advance(round_id) for round_id, _ in await self.due_rounds()]
        results += [await self.start_due_round(chat_id) for chat_id in await self.due_chat_ids()]
        return [result for result in results if result.events]

    async def recover(self) -> tuple[list[CommandResult], list[Round]]:
        """After a start: finish what is overdue, then list the open rounds to schedule."""
        results = await self.sweep()
        return results, await self.open_rounds()

    async def shoe(self, shoe_id: int) -> ShoeInfo | None:
        """A shoe as the public may see it: its seed only once it has been replaced."""
        async with self.db.reading() as session:
            row = await session.get(ShoeRow, shoe_id)
            if row is None:
                return None
            seed = bytes(row.seed) if row.replaced_at_ms is not None else None
            return ShoeInfo(row.id, row.chat_id, row.decks, row.commitment, row.dealt, seed)

    async def round(self, round_id: int) -> Round | None:
        """A round as stored (its seed is secret while it is open: callers must not show it)."""
        async with self.db.reading() as session:
            return await rounds.load(session, round_id, lock=False)

    async def open_phase(self, chat_id: int) -> Phase | None:
        """The phase of the chat's open round, if any (without loading the round)."""
        async with self.db.reading() as session:
            return await queries.open_phase(session, chat_id)

    async def current_round(self, chat_id: int) -> Round | None:
        """The chat's open round, if any."""
        async with self.db.reading() as session:
            return await rounds.load_open(session, chat_id, lock=False)

    # -- delivery of boards and results -------------------------------------------------
    #
    # A round row is the intent to post its board (``board_message_id IS NULL``) and, once
    # it ended, to send its results (``announced_at_ms IS NULL``): both are written in the
    # round's own transaction. A worker takes the job of sending one with a lease
    # (``claim_*``, compare-and-set), keeps renewing it while its message waits to go out
    # (``renew_*``), and marks it delivered only after Telegram answered
    # (``set_board_message``, ``mark_announced``). A worker that dies stops renewing; once
    # its lease ran out another worker, or the restarted one, sends the message again. So a
    # message is lost by no crash, and repeated only by a crash between Telegram's answer
    # and recording it.

    async def set_board_message(self, round_id: int, message_id: int) -> None:
        """Record that Telegram has a round's board (``BOARD_REFUSED``: it refused it)."""
        async with self._unit() as session:
            await session.execute(
                update(RoundRow).where(RoundRow.id == round_id).values(board_message_id=message_id)
            )

    async def claim_board(self, round_id: int, *, lease_ms: int = DELIVERY_LEASE_MS) -> bool:
        """Take the job of posting a round's board for ``lease_ms``; False if it is posted,
        or another worker (or this one before a restart) holds a lease that has not run out."""
        return await self._lease(
            round_id,
            RoundRow.board_message_id,
            RoundRow.board_claimed_until_ms,
            lease_ms,
            renew=False,
        )

    async def renew_board_claim(self, round_id: int, *, lease_ms: int = DELIVERY_LEASE_MS) -> bool:
        """Hold the job of posting a round's board for ``lease_ms`` more; False once it is
        posted."""
        return await self._lease(
            round_id,
            RoundRow.board_message_id,
            RoundRow.board_claimed_until_ms,
            lease_ms,
            renew=True,
        )

    async def claim_announcement(self, round_id: int, *, lease_ms: int = DELIVERY_LEASE_MS) -> bool:
        """Take the job of sending a round's results for ``lease_ms``; False if they went
        out, or another worker (or this one before a restart) holds a lease that has not
        run out. Until ``mark_announced`` the results are still to be sent."""
        return await self._lease(
            round_id,
            RoundRow.announced_at_ms,
            RoundRow.announcement_claimed_until_ms,
            lease_ms,
            renew=False,
        )

    async def renew_announcement_claim(
        self, round_id: int, *, lease_ms: int = DELIVERY_LEASE_MS
    ) -> bool:
        """Hold the job of sending a round's results for ``lease_ms`` more; False once they
        went out."""
        return await self._lease(
            round_id,
            RoundRow.announced_at_ms,
            RoundRow.announcement_claimed_until_ms,
            lease_ms,
            renew=True,
        )

    async def mark_announced(self, round_id: int) -> None:
        """Record that Telegram took a round's results (or refused them for good)."""
        async with self._unit() as session:
            await session.execute(
                update(RoundRow)
                .where(RoundRow.id == round_id, RoundRow.announced_at_ms.is_(None))
                .values(announced_at_ms=self.clock())
            )

    async def _lease(
        self,
        round_id: int,
        delivered: InstrumentedAttribute[int | None],
        claimed_until: InstrumentedAttribute[int | None],
        lease_ms: int,
        *,
        renew: bool,
    ) -> bool:
        """Set the round's ``claimed_until`` to now + ``lease_ms`` if it is not
        ``delivered`` and (unless ``renew``) nobody holds a lease that has not run out."""
        async with self._unit() as session:
            now = self.clock()
            condition = [RoundRow.id == round_id, delivered.is_(None)]
            if not renew:
                condition.append(or_(claimed_until.is_(None), claimed_until <= now))
            leased = await session.execute(
                update(RoundRow).where(*condition).values({claimed_until: now + lease_ms})
            )
            return bool(leased.rowcount)  # type: ignore[attr-defined]

    async def unannounced(
        self, within_ms: int = 3_600_000, *, unclaimed_grace_ms: int = 0
    ) -> list[tuple[Round, RoundSettled | RoundVoided]]:
        """Rounds that ended in the last ``within_ms`` without their results having gone
        out and that no worker is sending (nobody holds a lease that has not run out), each
        with what ended it, to announce them now. Rounds that ended less than
        ``unclaimed_grace_ms`` ago and were never claimed are left to the worker that ended
        them (the sweep passes the lease's length: that worker has it queued)."""
        now = self.clock()
        async with self.db.reading() as session:
            return await queries.unannounced(
                session,
                now_ms=now,
                since_ms=now - within_ms,
                unclaimed_grace_ms=unclaimed_grace_ms,
            )

    async def unposted_boards(self, *, unclaimed_grace_ms: int = 0) -> list[tuple[int, int]]:
        """Open rounds whose board is not posted and that no worker is posting: (round id,
        chat id). Rounds that started less than ``unclaimed_grace_ms`` ago and were never
        claimed are left to the worker that started them. (An ended round's results say
        all its board would.)"""
        now = self.clock()
        claimed_until = RoundRow.board_claimed_until_ms
        async with self.db.reading() as session:
            rows = await session.execute(
                select(RoundRow.id, RoundRow.chat_id)
                .where(
                    RoundRow.phase.in_(rounds.OPEN_PHASES),
                    RoundRow.board_message_id.is_(None),
                    or_(
                        claimed_until <= now,
                        and_(
                            claimed_until.is_(None),
                            RoundRow.started_at_ms <= now - unclaimed_grace_ms,
                        ),
                    ),
                )
                .order_by(RoundRow.id)
            )
            return [(round_id, chat_id) for round_id, chat_id in rows.tuples()]

    async def board_message(self, round_id: int) -> int | None:
        """The message id of a round's live board; ``None`` until Telegram has it,
        ``BOARD_REFUSED`` if it refused it."""
        async with self.db.reading() as session:
            return await session.scalar(
                select(RoundRow.board_message_id).where(RoundRow.id == round_id)
            )

    # -- tables and settings ----------------------------------------------------------

    async def note_people(self, people: Sequence[Person]) -> None:
        """Remember users (so an admin can name them by @username later)."""
        if all(self._people_stored.get(person.id) == person for person in people):
            return
        async with self._unit() as session:
            await self._touch_people(session, people, self.clock())

    async def note_chat(self, chat_id: int, title: str) -> None:
        """Create or retitle a chat."""
        now = self.clock()
        async with self._unit() as session:
            chat = await self._chat(session, chat_id, now)
            if chat.title != title[:256]:
                chat.title = title[:256]

    async def set_open(
        self, chat_id: int, actor: Person, is_open: bool, *, update_id: int | None = None
    ) -> bool | None:
        """Open or close a group's table; returns whether it changed (``None`` for an
        update processed before). A closing table finishes its current round but starts
        no new one."""

        async def body(session: AsyncSession, now: int) -> bool:
            await self._touch_people(session, [actor], now)
            chat = await self._chat(session, chat_id, now)
            if chat.is_open == is_open:
                return False
            chat.is_open = is_open
            if not is_open:
                chat.next_round_at_ms = None
            await self._audit(session, chat_id, actor, "open" if is_open else "close", now)
            return True

        return await self._admin_command(update_id, body)

    async def is_open(self, chat_id: int) -> bool:
        """Whether the group's table is open."""
        async with self.db.reading() as session:
            chat = await session.get(Chat, chat_id)
            return bool(chat and chat.is_open)

    async def settings(self, chat_id: int) -> Settings:
        """The group's settings: its changes over the configured defaults."""
        async with self.db.reading() as session:
            return self._settings_of(await session.get(Chat, chat_id))

    async def change_setting(
        self, chat_id: int, actor: Person, key: str, value: str, *, update_id: int | None = None
    ) -> tuple[str, str, str] | None:
        """Change one setting; returns (name, old, new) as displayed, or ``None`` for an
        update processed before. Raises ``GameError("bad_setting")`` with the reason for a
        bad key or value."""

        async def body(session: AsyncSession, now: int) -> tuple[str, str, str]:
            await self._touch_people(session, [actor], now)
            chat = await self._chat(session, chat_id, now)
            current = self._settings_of(chat)
            try:
                name, changed = current.changed(key, value)
            except SettingError as error:
                raise GameError("bad_setting", reason=str(error)) from None
            old, new = current.display(name), changed.display(name)
            keys = [name]
            if name == "ruleset" and changed.ruleset != current.ruleset:
                # A new game brings its table's rake and bet range.
                changed = changed.with_table_defaults(self.defaults)
                keys += list(CARD_TABLE_DEFAULTS)
            stored = changed.to_dict()
            chat.settings = {**chat.settings, **{key: stored[key] for key in keys}}
            await self._audit(session, chat_id, actor, "set", now, setting=name, old=old, new=new)
            return name, old, new

        return await self._admin_command(update_id, body)

    # -- chips ------------------------------------------------------------------------

    async def credit(
        self,
        chat_id: int,
        actor: Person,
        user_id: int,
        amount: int,
        *,
        update_id: int | None = None,
    ) -> Balance | None:
        """An admin gives a player chips from the group's mint; the player's new balance,
        or ``None`` for an update processed before."""
        return await self._admin_transfer(chat_id, actor, user_id, amount, update_id, credit=True)

    async def debit(
        self,
        chat_id: int,
        actor: Person,
        user_id: int,
        amount: int,
        *,
        update_id: int | None = None,
    ) -> Balance | None:
        """An admin takes available chips back to the mint (refused beyond what is
        available); the new balance, or ``None`` for an update processed before."""
        return await self._admin_transfer(chat_id, actor, user_id, amount, update_id, credit=False)

    async def _admin_transfer(
        self,
        chat_id: int,
        actor: Person,
        user_id: int,
        amount: int,
        update_id: int | None,
        *,
        credit: bool,
    ) -> Balance | None:
        if amount <= 0:
            raise RuleViolation("amount_not_positive")
        action = "credit" if credit else "debit"

        async def body(session: AsyncSession, now: int) -> Balance:
            await self._touch_people(session, [actor], now)
            await self._chat(session, chat_id, now)
            if not credit:
                free = (await ledger.balance(session, chat_id, user_id)).available
                if free < amount:
                    raise RuleViolation("debit_too_large", amount=amount, available=free)
            signed = amount if credit else -amount
            await ledger.post(
                session,
                chat_id=chat_id,
                kind=action,
                now_ms=now,
                actor_id=actor.id,
                postings=[Posting(MINT, -signed), Posting(available(user_id), signed)],
                memo=f"{action} by {actor.id}",
            )
            await self._audit(session, chat_id, actor, action, now, user_id=user_id, amount=amount)
            return await ledger.balance(session, chat_id, user_id)

        return await self._admin_command(update_id, body)

    async def fund(
        self, chat_id: int, actor: Person, amount: int, *, update_id: int | None = None
    ) -> int | None:
        """An admin moves chips from the group's mint into its bank, which deals when the
        house is the dealer; the bank's new balance, or ``None`` for an update processed
        before."""
        if amount <= 0:
            raise RuleViolation("amount_not_positive")

        async def body(session: AsyncSession, now: int) -> int:
            await self._touch_people(session, [actor], now)
            await self._chat(session, chat_id, now)
            await ledger.post(
                session,
                chat_id=chat_id,
                kind="fund",
                now_ms=now,
                actor_id=actor.id,
                postings=[Posting(MINT, -amount), Posting(BANK, amount)],
                memo=f"fund by {actor.id}",
            )
            await self._audit(session, chat_id, actor, "fund", now, amount=amount)
            return await ledger.account_balance(session, chat_id, BANK)

        return await self._admin_command(update_id, body)

    async def _admin_command(
        self, update_id: int | None, body: Callable[[AsyncSession, int], Awaitable[_T]]
    ) -> _T | None:
        """Run ``body`` in a transaction that records ``update_id``; ``None`` when that
        update was processed before (by this worker or, racing, by another)."""
        try:
            async with self._unit() as session:
                now = self.clock()
                await self._claim_update(session, update_id, now)
                return await body(session, now)
        except IntegrityError as error:
            if _is_repeat(error, update_id):
                return None
            raise

    async def balance(self, chat_id: int, user_id: int) -> Balance:
        """A player's chips in a group."""
        async with self.db.reading() as session:
            return await ledger.balance(session, chat_id, user_id)

    async def bank_balance(self, chat_id: int) -> int:
        """The group's bank: what the house deals with when it is the dealer."""
        async with self.db.reading() as session:
            return await ledger.account_balance(session, chat_id, BANK)

    async def house_balance(self, chat_id: int) -> int:
        """The group's house account: rake and fees taken less rebates paid."""
        async with self.db.reading() as session:
            return await ledger.account_balance(session, chat_id, HOUSE)

    async def balances_everywhere(self, user_id: int) -> list[tuple[int, str, Balance]]:
        """A player's chips in every group: (chat id, title, balance)."""
        async with self.db.reading() as session:
            return await queries.balances_everywhere(session, user_id)

    async def statement(self, chat_id: int, user_id: int, limit: int = 10) -> list[StatementLine]:
        """The latest ledger transactions that changed a player's chips, newest first
        (holds, which move chips between the player's own accounts, are left out)."""
        async with self.db.reading() as session:
            return await queries.statement(session, chat_id, user_id, limit)

    # -- reading ----------------------------------------------------------------------

    async def history(self, chat_id: int, limit: int = 10) -> list[RoundSummary]:
        """The chat's latest rounds, newest first."""
        async with self.db.reading() as session:
            return await queries.history(session, chat_id, limit)

    async def results(self, round_id: int) -> list[ParticipantResult]:
        """Each participant's line of a settled round: bettors in bet order, then the dealer."""
        async with self.db.reading() as session:
            rows = (
                await session.scalars(
                    select(OutcomeRow)
                    .where(OutcomeRow.round_id == round_id)
                    .order_by(OutcomeRow.id)
                )
            ).all()
            return [
                ParticipantResult(
                    r.user_id,
                    r.role,
                    r.stake,
                    r.envelope,
                    r.kind,
                    r.points,
                    r.multiplier,
                    r.result,
                    r.gross,
                    r.rake,
                    r.rebate,
                    r.net,
                )
                for r in rows
            ]

    async def audit_log(self, chat_id: int, limit: int = 10) -> list[AuditLine]:
        """The group's latest admin actions, newest first."""
        async with self.db.reading() as session:
            return await queries.audit_log(session, chat_id, limit)

    async def names(self, user_ids: Sequence[int]) -> dict[int, Person]:
        """What the bot knows of these users."""
        async with self.db.reading() as session:
            return {row[0]: Person(*row) for row in await queries.names(session, user_ids)}

    async def find_user(self, username: str) -> Person | None:
        """A user the bot has seen, by @username (case-insensitive)."""
        async with self.db.reading() as session:
            found = await queries.find_user(session, username.removeprefix("@"))
            return None if found is None else Person(*found)


def _user_columns(person: Person, now: int) -> dict[str, Any]:
    """The ``users`` columns of a person, as stored when the bot sees them."""
    return {
        "username": person.username,
        "first_name": person.first_name[:256],
        "last_name": person.last_name,
        "seen_at_ms": now,
    }


def _is_repeat(error: Exception, update_id: int | None) -> bool:
    """True when ``error`` says the update was recorded as processed already."""
    return (
        update_id is not None
        and isinstance(error, IntegrityError)
        and violated_constraint(error) == PROCESSED_UPDATE
    )


def _is_transient(error: Exception) -> bool:
    """True for a lost connection, a busy database, a deadlock or a timeout: worth trying
    again, not voiding a round for."""
    if isinstance(error, OperationalError | InterfaceError | TransientDatabaseError):
        return True
    if not isinstance(error, DBAPIError):
        return False
    return error.connection_invalidated or (
        getattr(error.orig, "sqlstate", None) in TRANSIENT_SQLSTATES
    )


#: Voids after which play goes on at once: the dealer's 0.01, and system errors (seed 000:
#: "System errors ... will also trigger a re-deal").
_REDEALS = (VoidReason.REDEAL, VoidReason.ERROR)

"""Round starts: a round started by a command or once a table's pause is over.

A start runs on the hot path (``Store.round_starts``: one read, one write) when it covers
the start, and otherwise on the general path, a unit of work that also replaces the
group's shoe and creates the house's account when the start needs them. Either way the
round is written in the same transaction as the processed update, and two starts that
race leave one round (a unique index lets one through).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from bot.engine import round as engine
from bot.engine.errors import GameError, RuleViolation
from bot.engine.round import BANK, HOUSE, HOUSE_DEALER, RetiredShoe, Round, ShoeRef, Transition
from bot.engine.settings import Settings
from bot.rules.ruleset import Ruleset, get_ruleset
from bot.rules.split import commitment
from bot.service.core import GroupSettings, ServiceObserver, StoredPeople
from bot.service.records import CommandResult, Person
from bot.service.round_events import RoundEvents
from bot.store.chats import ChatRecord
from bot.store.errors import AlreadyProcessed, RoundAlreadyOpen, is_transient
from bot.store.round_commands import NotOnHotPath
from bot.store.round_starts import StartRead
from bot.store.shoes import ShoeRecord
from bot.store.unit_of_work import Store, UnitOfWork


def _bank_for(settings: Settings, balance: int) -> int:
    """The pool a round opens with: the bank's balance when the house deals (refused if it
    is empty), else nothing."""
    if settings.dealer != HOUSE_DEALER:
        return 0
    if balance <= 0:
        raise RuleViolation("bank_empty")
    return balance


def _shoe_spent(shoe: ShoeRecord | None, ruleset: Ruleset[Any]) -> bool:
    """Whether the group's shoe is retired before its next round: spent, or of another
    game (a table that moved to a game of other decks, or of none)."""
    return shoe is not None and (
        shoe.decks != ruleset.shoe_decks or shoe.dealt > ruleset.reshuffle_after
    )


class RoundStartUseCases:
    """Starting rounds: by a command, once a pause is over, and (``insert_round``) in the
    transaction of a re-deal. A start that opens betting is told to ``events``."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Callable[[], int],
        people: StoredPeople,
        group_settings: GroupSettings,
        observer: ServiceObserver,
        events: RoundEvents,
        seed_source: Callable[[], bytes],
        seed_derivation: int,
    ) -> None:
        self.store = store
        self.clock = clock
        self.people = people
        self.group_settings = group_settings
        self.observer = observer
        self.events = events
        self.seed_source = seed_source
        #: How new rounds and shoes derive their deal seed (``bot.rules.fairness``).
        self.seed_derivation = seed_derivation

    async def start_round(
        self, chat_id: int, *, actor: Person | None = None, update_id: int | None = None
    ) -> CommandResult:
        """Start a round in an open group. Refused if the table is closed or a round runs.
        When the house deals it opens for bets at once, and ``events`` are told (the
        group's standing bets are placed)."""
        try:
            transition = await self._start(chat_id, actor, update_id)
        except AlreadyProcessed:
            return CommandResult(duplicate=True)
        except RoundAlreadyOpen:  # two starts raced; the unique index let one through
            raise RuleViolation("round_running") from None
        return await self.events.told(CommandResult(transition.round, transition.events))

    async def _start(
        self, chat_id: int, actor: Person | None, update_id: int | None
    ) -> Transition[Round]:
        """On the hot path (``Store.round_starts``) when it covers the start, else on the
        general path."""
        try:
            return await self._start_hot(chat_id, actor, update_id)
        except NotOnHotPath:
            pass  # decided from what the path read, before it wrote
        except (GameError, AlreadyProcessed, RoundAlreadyOpen):
            raise
        except Exception as error:
            if not is_transient(error):
                self.observer.command_failed("hot")
                error.add_note(f"a round start in chat {chat_id}")
            raise
        return await self._start_whole(chat_id, actor, update_id)

    async def _start_hot(
        self, chat_id: int, actor: Person | None, update_id: int | None
    ) -> Transition[Round]:
        def decide(read: StartRead, now: int) -> Transition[Round]:
            if not read.is_open:
                raise RuleViolation("table_closed")
            if read.open_round_id is not None:
                raise RuleViolation("round_running", round_id=read.open_round_id)
            settings = self.group_settings.from_changes(read.chat_settings)
            bank = _bank_for(settings, read.bank)
            ruleset = get_ruleset(settings.ruleset)
            if _shoe_spent(read.shoe, ruleset) or (ruleset.shoe_decks and read.shoe is None):
                raise NotOnHotPath("the group's shoe is replaced")
            if not read.house_account:
                raise NotOnHotPath("the house's account is created")
            return self._new_round(chat_id, settings, now, bank, read.shoe, None)

        user_row = self.people.user_row(actor)
        transition = await self.store.round_starts.run(
            chat_id, decide, clock=self.clock, update_id=update_id, user_row=user_row
        )
        self.people.remember(actor, user_row)
        return transition

    async def _start_whole(
        self, chat_id: int, actor: Person | None, update_id: int | None
    ) -> Transition[Round]:
        """The general path: a unit of work that also replaces the group's shoe and
        creates the house's account when the start needs them."""
        async with self.store.writing() as uow:
            now = self.clock()
            await uow.updates.claim(update_id, now)
            await self.people.touch(uow, [actor] if actor else [], now)
            chat = await uow.chats.get_or_create(chat_id, now)
            if not chat.is_open:
                raise RuleViolation("table_closed")
            running = await uow.rounds.open_round_id(chat_id)
            if running is not None:
                raise RuleViolation("round_running", round_id=running)
            return await self.insert_round(uow, chat, now)

    async def insert_round(self, uow: UnitOfWork, chat: ChatRecord, now: int) -> Transition[Round]:
        """Start the group's next round in ``uow`` (the general path's start, and a
        re-deal's in the transaction that ended the round before it)."""
        settings = self.group_settings.of(chat)
        bank = 0
        if settings.dealer == HOUSE_DEALER:
            bank = _bank_for(settings, await uow.ledger.account_balance(chat.id, BANK))
        shoe, retired = await self._shoe_for(uow, chat.id, get_ruleset(settings.ruleset), now)
        transition = self._new_round(chat.id, settings, now, bank, shoe, retired)
        stored = await uow.round_writer.start(transition.round, now)
        # The house takes the round's rake: its account exists before the round settles.
        await uow.ledger.account_ids(chat.id, [HOUSE])
        return dataclasses.replace(transition, round=stored)

    def _new_round(
        self,
        chat_id: int,
        settings: Settings,
        now: int,
        bank: int,
        shoe: ShoeRecord | None,
        retired: RetiredShoe | None,
    ) -> Transition[Round]:
        """The engine's new round (id 0 until stored), dealt from ``shoe`` if its game
        has one."""
        ref = None if shoe is None else ShoeRef(shoe.id, shoe.seed, shoe.dealt, shoe.client_seeds)
        return engine.start_round(
            round_id=0,
            chat_id=chat_id,
            settings=settings,
            seed=self.seed_source(),
            now_ms=now,
            bank=bank,
            shoe=ref,
            retired_shoe=retired,
            # A shoe round deals by its shoe's derivation (an older shoe's stays 1).
            derivation=self.seed_derivation if shoe is None else shoe.fairness,
        )

    async def _shoe_for(
        self, uow: UnitOfWork, chat_id: int, ruleset: Ruleset[Any], now: int
    ) -> tuple[ShoeRecord | None, RetiredShoe | None]:
        """The shoe the group's next round deals from (``None`` for a game without one),
        and the shoe retired for it, whose seed is revealed: a spent shoe is replaced, and
        a table that moved to another game retires its shoe, so that the rounds dealt from
        it can be verified. (The round being started is the chat's only open round, so
        none is still to be dealt from a retired shoe.)"""
        shoe = await uow.shoes.current(chat_id)
        retired = None
        if _shoe_spent(shoe, ruleset):
            assert shoe is not None
            await uow.shoes.retire(shoe.id, now)
            retired = RetiredShoe(shoe.id, shoe.seed)
            shoe = None
        if not ruleset.shoe_decks:
            return None, retired
        if shoe is None:
            seed = self.seed_source()
            shoe = await uow.shoes.create(
                chat_id,
                decks=ruleset.shoe_decks,
                seed=seed,
                commitment=commitment(seed),
                now_ms=now,
                fairness=self.seed_derivation,
            )
        return shoe, retired

    async def start_due_round(self, chat_id: int) -> CommandResult:
        """Start the round of a table whose pause is over; if it cannot start (closed, a
        round already runs, the bank is empty), forget the pending start instead. The
        result's ``refused`` names why, when the group should be told (the empty bank)."""
        try:
            return await self.start_round(chat_id)
        except RuleViolation as error:
            async with self.store.writing() as uow:
                await uow.chats.change(chat_id, next_round_at_ms=None)
            return CommandResult(refused=error if error.key == "bank_empty" else None)

"""Chip use cases: admins credit, debit and fund; players look at their chips."""

from __future__ import annotations

from collections.abc import Callable

from bot.engine.errors import RuleViolation
from bot.engine.round import BANK, HOUSE, MINT, Posting, available
from bot.service.core import StoredPeople, admin_command
from bot.service.records import MAX_USER_ID, Balance, Person, StatementLine, is_user_id
from bot.store.unit_of_work import Store, UnitOfWork


def _check_user_id(user_id: int) -> None:
    """Refuse an id no Telegram user has before it reaches the database (0 is the bot's
    own accounts'; the shell checks what admins type, this guards every other caller)."""
    if not is_user_id(user_id):
        raise RuleViolation("bad_user_id", who=user_id, maximum_id=MAX_USER_ID)


class ChipUseCases:
    """Chips: moved by admins, shown to players. The player an admin names must have a
    Telegram user id (``bad_user_id`` otherwise)."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Callable[[], int],
        people: StoredPeople,
        changed: Callable[[int, int], None],
    ) -> None:
        self.store = store
        self.clock = clock
        self.people = people
        #: Told ``(chat_id, user_id)`` once a player's chips changed (committed): the Mini
        #: App's live feed shows them (``RoundChanges.chips_changed``).
        self.changed = changed

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
        _check_user_id(user_id)
        if amount <= 0:
            raise RuleViolation("amount_not_positive")
        action = "credit" if credit else "debit"

        async def body(uow: UnitOfWork, now: int) -> Balance:
            await self.people.touch(uow, [actor], now)
            await uow.chats.get_or_create(chat_id, now)
            if not credit:
                free = (await uow.ledger.balance(chat_id, user_id)).available
                if free < amount:
                    raise RuleViolation("debit_too_large", amount=amount, available=free)
            signed = amount if credit else -amount
            await uow.ledger.post(
                chat_id=chat_id,
                kind=action,
                now_ms=now,
                actor_id=actor.id,
                postings=[Posting(MINT, -signed), Posting(available(user_id), signed)],
                memo=f"{action} by {actor.id}",
            )
            details = {"user_id": user_id, "amount": amount}
            await uow.audit.append(chat_id, actor.id, action, now, details)
            return await uow.ledger.balance(chat_id, user_id)

        balance = await admin_command(self.store, self.clock, update_id, body)
        if balance is not None:
            self.changed(chat_id, user_id)
        return balance

    async def fund(
        self, chat_id: int, actor: Person, amount: int, *, update_id: int | None = None
    ) -> int | None:
        """An admin moves chips from the group's mint into its bank, which deals when the
        house is the dealer; the bank's new balance, or ``None`` for an update processed
        before."""
        if amount <= 0:
            raise RuleViolation("amount_not_positive")

        async def body(uow: UnitOfWork, now: int) -> int:
            await self.people.touch(uow, [actor], now)
            await uow.chats.get_or_create(chat_id, now)
            await uow.ledger.post(
                chat_id=chat_id,
                kind="fund",
                now_ms=now,
                actor_id=actor.id,
                postings=[Posting(MINT, -amount), Posting(BANK, amount)],
                memo=f"fund by {actor.id}",
            )
            await uow.audit.append(chat_id, actor.id, "fund", now, {"amount": amount})
            return await uow.ledger.account_balance(chat_id, BANK)

        return await admin_command(self.store, self.clock, update_id, body)

    async def balance(self, chat_id: int, user_id: int) -> Balance:
        """A player's chips in a group."""
        async with self.store.reading() as uow:
            return await uow.ledger.balance(chat_id, user_id)

    async def bank_balance(self, chat_id: int) -> int:
        """The group's bank: what the house deals with when it is the dealer."""
        async with self.store.reading() as uow:
            return await uow.ledger.account_balance(chat_id, BANK)

    async def house_balance(self, chat_id: int) -> int:
        """The group's house account: rake and fees taken less rebates paid."""
        async with self.store.reading() as uow:
            return await uow.ledger.account_balance(chat_id, HOUSE)

    async def balances_everywhere(self, user_id: int) -> list[tuple[int, str, Balance]]:
        """A player's chips in every group: (chat id, title, balance)."""
        async with self.store.reading() as uow:
            return await uow.queries.balances_everywhere(user_id)

    async def statement(self, chat_id: int, user_id: int, limit: int = 10) -> list[StatementLine]:
        """The latest ledger transactions that changed a player's chips, newest first
        (holds, which move chips between the player's own accounts, are left out)."""
        _check_user_id(user_id)
        async with self.store.reading() as uow:
            return await uow.queries.statement(chat_id, user_id, limit)

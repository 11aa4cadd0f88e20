"""Client seeds: what each player mixes into the deals they take part in (``/seed``)."""

from __future__ import annotations

from collections.abc import Callable

from bot.engine.errors import RuleViolation
from bot.rules import fairness as fair
from bot.service.core import StoredPeople
from bot.service.records import Person
from bot.store.errors import AlreadyProcessed
from bot.store.unit_of_work import Store


class SeedUseCases:
    """A player's client seed: set and shown. One per player, for every group: set once,
    it protects every deal they take part in."""

    def __init__(self, store: Store, *, clock: Callable[[], int], people: StoredPeople) -> None:
        self.store = store
        self.clock = clock
        self.people = people

    async def client_seed(self, user_id: int) -> str | None:
        """The player's client seed, if they set one."""
        async with self.store.reading() as uow:
            return await uow.client_seeds.get(user_id)

    async def set_client_seed(
        self, actor: Person, text: str, *, update_id: int | None = None
    ) -> str | None:
        """Set the player's client seed from what they typed; returns it (``None`` for an
        update already handled). ``RuleViolation("bad_client_seed")`` unless it is 1-64 of
        ``A-Z a-z 0-9 _ . -``: then nothing changes."""
        try:
            seed = fair.parse_client_seed(text)
        except ValueError:
            raise RuleViolation(
                "bad_client_seed", most=fair.CLIENT_SEED_MAX, alphabet=fair.CLIENT_SEED_ALPHABET
            ) from None
        try:
            async with self.store.writing() as uow:
                now = self.clock()
                await uow.updates.claim(update_id, now)
                await self.people.touch(uow, [actor], now)
                await uow.client_seeds.set(actor.id, seed, now)
        except AlreadyProcessed:
            return None
        return seed

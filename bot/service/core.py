"""What every family of use cases shares: the store, the clock, the seed source, the
group defaults, and the people this process has stored already."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import Any, Protocol, TypeVar

from cachetools import TTLCache

from bot.engine.settings import Settings
from bot.rules import fairness as fair
from bot.service.records import Person, random_seed, wall_clock_ms
from bot.store.chats import ChatRecord
from bot.store.db import Database
from bot.store.errors import AlreadyProcessed
from bot.store.unit_of_work import Store, UnitOfWork

_T = TypeVar("_T")

#: Users remembered as stored (to write a user only when they changed); beyond that the
#: least recently seen are forgotten, and written again when next seen.
PEOPLE_REMEMBERED = 50_000
#: How long a user is remembered as stored: one who keeps playing is written again at
#: most this often, and the memory of those who went quiet is given back.
PEOPLE_REMEMBERED_SECONDS = 120.0


class ServiceObserver(Protocol):
    """Told of what the service does that an operator watches (metrics), without the
    service knowing who listens."""

    def database_retried(self) -> None:
        """A round command's transaction runs again: the round changed under it (its
        version moved on)."""

    def command_failed(self, path: str) -> None:
        """A round command failed other than by the rules or the database's
        unavailability (a bug, or a row the database refused), on the ``hot`` or the
        ``general`` path: nothing it asked was changed (a round whose step failed is
        voided)."""


class _Unobserved:
    def database_retried(self) -> None:
        pass

    def command_failed(self, path: str) -> None:
        pass


class ServiceCore:
    """The state the use cases share; each family (``bot.service.rounds``, ``tables``,
    ``chips``, ``deliveries``, ``reading``) adds its use cases to it."""

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
    ) -> None:
        self.db = db
        self.observer: ServiceObserver = observer or _Unobserved()
        #: Processed updates are recorded per bot (the token's numeric prefix).
        self.store = Store(db, bot_id=bot_id)
        self.defaults = defaults or Settings()
        self.clock = clock
        self.seed_source = seed_source
        #: How new rounds and shoes derive their deal seed (``bot.rules.fairness``).
        self.seed_derivation = seed_derivation
        self._people_stored: TTLCache[int, Person] = TTLCache(
            PEOPLE_REMEMBERED, PEOPLE_REMEMBERED_SECONDS
        )

    @property
    def people_remembered(self) -> int:
        """Users this process remembers having stored as they are (it writes them again
        only when they change), at most ``PEOPLE_REMEMBERED``."""
        return len(self._people_stored)

    def forget_quiet(self) -> None:
        """Forget the users whose time as stored ran out (their memory given back even
        when nothing else touches the cache)."""
        self._people_stored.expire()

    async def _touch_people(self, uow: UnitOfWork, people: Sequence[Person], now: int) -> None:
        """Store or update users, unless this process stored them as they are already
        (remembered once the unit of work commits)."""
        for person in people:
            if self._people_stored.get(person.id) == person:
                continue
            await uow.users.store(person.id, person.columns(now))
            uow.after_commit.append(partial(self._people_stored.__setitem__, person.id, person))

    def _user_row(self, actor: Person | None) -> dict[str, Any] | None:
        """The ``users`` row a hot-path command stores with its write: ``None`` when
        this process stored the actor as they are already."""
        if actor is None or self._people_stored.get(actor.id) == actor:
            return None
        return {"id": actor.id, **actor.columns(self.clock())}

    def _remember_stored(self, actor: Person | None, user_row: Mapping[str, Any] | None) -> None:
        """After a hot-path commit: remembered once written, as ``_touch_people`` does (a
        regular is written again when their time as stored runs out)."""
        if actor is not None and user_row is not None:
            self._people_stored[actor.id] = actor

    def _settings_of(self, chat: ChatRecord | None) -> Settings:
        return self._settings_from(chat.settings if chat is not None else {})

    def _settings_from(self, changes: Mapping[str, Any]) -> Settings:
        """A group's settings: the changes its admins made over the configured defaults."""
        if not changes:
            return self.defaults
        return Settings.from_dict(dict(changes), base=self.defaults)

    async def _admin_command(
        self, update_id: int | None, body: Callable[[UnitOfWork, int], Awaitable[_T]]
    ) -> _T | None:
        """Run ``body`` in a unit of work that records ``update_id``; ``None`` when that
        update was processed before (by this worker or, racing, by another)."""
        try:
            async with self.store.writing() as uow:
                now = self.clock()
                await uow.updates.claim(update_id, now)
                return await body(uow, now)
        except AlreadyProcessed:
            return None

"""What the use cases share, each part given to those that need it: the observer that
hears of failures, the people this process has stored already, the groups' settings over
the configured defaults, and the admin command run once per update."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import Any, Protocol, TypeVar

from cachetools import TTLCache

from bot.engine.settings import Settings
from bot.service.records import Person
from bot.store.chats import ChatRecord
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


class Unobserved:
    """The observer when nobody listens."""

    def database_retried(self) -> None:
        pass

    def command_failed(self, path: str) -> None:
        pass


class StoredPeople:
    """The users this process has stored as they are, so that a user is written only when
    they changed (or when their time as stored runs out)."""

    def __init__(self, clock: Callable[[], int]) -> None:
        self.clock = clock
        self._stored: TTLCache[int, Person] = TTLCache(PEOPLE_REMEMBERED, PEOPLE_REMEMBERED_SECONDS)

    @property
    def remembered(self) -> int:
        """Users this process remembers having stored as they are (it writes them again
        only when they change), at most ``PEOPLE_REMEMBERED``."""
        return len(self._stored)

    def forget_quiet(self) -> None:
        """Forget the users whose time as stored ran out (their memory given back even
        when nothing else touches the cache)."""
        self._stored.expire()

    def all_stored(self, people: Sequence[Person]) -> bool:
        """Whether this process stored every one of ``people`` as they are."""
        return all(self._stored.get(person.id) == person for person in people)

    async def touch(self, uow: UnitOfWork, people: Sequence[Person], now: int) -> None:
        """Store or update users, unless this process stored them as they are already
        (remembered once the unit of work commits)."""
        for person in people:
            if self._stored.get(person.id) == person:
                continue
            await uow.users.store(person.id, person.columns(now))
            uow.after_commit.append(partial(self._stored.__setitem__, person.id, person))

    def user_row(self, actor: Person | None) -> dict[str, Any] | None:
        """The ``users`` row a hot-path command stores with its write: ``None`` when
        this process stored the actor as they are already."""
        if actor is None or self._stored.get(actor.id) == actor:
            return None
        return {"id": actor.id, **actor.columns(self.clock())}

    def remember(self, actor: Person | None, user_row: Mapping[str, Any] | None) -> None:
        """After a hot-path commit: remembered once written, as ``touch`` does (a regular
        is written again when their time as stored runs out)."""
        if actor is not None and user_row is not None:
            self._stored[actor.id] = actor


class GroupSettings:
    """A group's settings: the changes its admins made over the configured defaults."""

    def __init__(self, defaults: Settings) -> None:
        self.defaults = defaults

    def of(self, chat: ChatRecord | None) -> Settings:
        """The settings of ``chat`` (the defaults for a chat not stored yet)."""
        return self.from_changes(chat.settings if chat is not None else {})

    def from_changes(self, changes: Mapping[str, Any]) -> Settings:
        """The settings that ``changes`` make of the defaults."""
        if not changes:
            return self.defaults
        return Settings.from_dict(dict(changes), base=self.defaults)


async def admin_command(
    store: Store,
    clock: Callable[[], int],
    update_id: int | None,
    body: Callable[[UnitOfWork, int], Awaitable[_T]],
) -> _T | None:
    """Run ``body`` in a unit of work that records ``update_id``; ``None`` when that
    update was processed before (by this worker or, racing, by another)."""
    try:
        async with store.writing() as uow:
            now = clock()
            await uow.updates.claim(update_id, now)
            return await body(uow, now)
    except AlreadyProcessed:
        return None

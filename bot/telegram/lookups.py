"""What the shell looks up again and again, kept briefly and bounded: a group's settings
(and the texts and views they imply) and people's names."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any

from cachetools import LRUCache, TTLCache
from telegram import Chat as TelegramChat
from telegram import User as TelegramUser
from telegram.constants import ChatType

from bot.engine.settings import Settings
from bot.service.game import Person
from bot.telegram.i18n import language_for, translate
from bot.telegram.service_needs import NamesSource, SettingsSource
from bot.telegram.views import Views

#: How long a group's settings are reused before they are read again (a change made by
#: another worker shows after at most this long; rounds use their own snapshot anyway).
SETTINGS_CACHE_SECONDS = 10.0
#: Groups whose settings are kept at once: the busy ones; a quiet group's are read again.
SETTINGS_CACHED = 4096
#: Groups whose language is remembered past their settings' time, to answer in it when
#: the database cannot be asked: a few bytes each, so many more than the settings kept.
LANGUAGES_REMEMBERED = 100_000
#: Names kept at once: those of the people playing now (boards and results name them).
NAMES_CACHED = 50_000
#: How long a name is kept: a quiet user's is read from the database again when needed,
#: and the memory of those who went quiet is given back.
NAMES_CACHE_SECONDS = 120.0


def person_of(user: TelegramUser) -> Person:
    """The service's view of a Telegram user."""
    return Person(user.id, user.first_name or "", user.username, user.last_name)


class ChatSettings:
    """Each group's settings, cached briefly: every render and reply needs them; a change
    made through this process is seen at once (``forget``). Those who ask while the
    settings are being read wait for that one read: a busy group's command, its board
    edit and its answers all ask at once when the cached settings run out."""

    def __init__(self, service: SettingsSource, *, seconds: float = SETTINGS_CACHE_SECONDS) -> None:
        self.service = service
        self._cache: TTLCache[int, Settings] = TTLCache(SETTINGS_CACHED, seconds)
        self._reading: dict[int, asyncio.Future[Settings]] = {}
        #: Each group's language as last read, kept however old (see ``text_offline``).
        self._languages: LRUCache[int, str] = LRUCache(LANGUAGES_REMEMBERED)

    def __len__(self) -> int:
        return len(self._cache)

    async def get(self, chat_id: int) -> Settings:
        """The group's settings."""
        found = self._cache.get(chat_id)
        if found is not None:
            return found
        reading = self._reading.get(chat_id)
        if reading is None:
            reading = asyncio.ensure_future(self._read(chat_id))
            self._reading[chat_id] = reading
        # Shielded: one asker giving up does not cancel the read the others wait for.
        return await asyncio.shield(reading)

    async def _read(self, chat_id: int) -> Settings:
        this = asyncio.current_task()
        try:
            settings = await self.service.settings(chat_id)
        finally:
            current = self._reading.get(chat_id) is this
            if current:
                del self._reading[chat_id]
        if current:  # not forgotten meanwhile (a change this read may have missed)
            self._cache[chat_id] = settings
        self._languages[chat_id] = settings.language
        return settings

    def forget(self, chat_id: int) -> None:
        """Read the group's settings again next time (they changed)."""
        self._cache.pop(chat_id, None)
        self._reading.pop(chat_id, None)

    def forget_quiet(self) -> None:
        """Forget the settings whose time ran out."""
        self._cache.expire()

    def text_offline(
        self, chat: TelegramChat, user: TelegramUser | None, key: str, **params: Any
    ) -> str:
        """A catalogue message for ``chat`` without asking the database (which may be
        what failed): in the group's language as last read, else (and in a private chat)
        in that of the user's Telegram app; money, if any, without a currency."""
        language = None if chat.type == ChatType.PRIVATE else self._languages.get(chat.id)
        if language is None:
            language = language_for(user.language_code if user is not None else None)
        return translate(language, key, **params)

    async def views(self, chat_id: int) -> Views:
        """Renderers in the group's language and currency."""
        return Views(await self.get(chat_id))

    async def text(self, chat_id: int, key: str, **params: Any) -> str:
        """A catalogue message in the group's language, money in its currency."""
        settings = await self.get(chat_id)
        return translate(settings.language, key, settings.currency, **params)


class People:
    """Names of users: those this process saw lately, else the database's."""

    def __init__(
        self,
        service: NamesSource,
        *,
        size: int = NAMES_CACHED,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        self.service = service
        self._cache: TTLCache[int, Person] = TTLCache(size, NAMES_CACHE_SECONDS, timer=timer)

    def __len__(self) -> int:
        return len(self._cache)

    def forget_quiet(self) -> None:
        """Forget the names whose time ran out."""
        self._cache.expire()

    def saw(self, person: Person) -> None:
        """Remember a name as Telegram just showed it."""
        self._cache[person.id] = person

    async def names(self, user_ids: Iterable[int]) -> dict[int, Person]:
        """Names of users (those the database does not know are left out)."""
        wanted = list(dict.fromkeys(user_ids))
        missing = [user_id for user_id in wanted if user_id not in self._cache]
        if missing:
            for user_id, person in (await self.service.names(missing)).items():
                self._cache[user_id] = person
        found = ((user_id, self._cache.get(user_id)) for user_id in wanted)
        return {user_id: person for user_id, person in found if person is not None}

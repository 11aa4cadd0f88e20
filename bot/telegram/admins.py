"""Who may run admin commands in a group: its creator and administrators (asked of
Telegram, cached briefly) and the operators named in the configuration."""

from __future__ import annotations

import logging
from collections.abc import Callable

from cachetools import TTLCache
from telegram import ChatMember, Update
from telegram.error import TelegramError

from bot.engine.errors import GameError
from bot.service.game import Person
from bot.telegram.lookups import person_of
from bot.telegram.messenger import Messenger
from bot.telegram.service_needs import ChatNotes

log = logging.getLogger(__name__)

#: Answers of Telegram kept at once; beyond that the oldest are asked again.
ADMIN_ANSWERS_CACHED = 50_000
#: Group titles remembered (to store a title only when it changed).
TITLES_CACHED = 20_000
#: How long a title is remembered: a quiet group's is stored again at its next admin
#: command, and the memory of quiet groups is given back.
TITLES_CACHE_SECONDS = 120.0


class AdminCheck:
    """Checks that the sender of an admin command is an admin of the group."""

    def __init__(
        self,
        service: ChatNotes,
        messenger: Messenger,
        operators: frozenset[int],
        *,
        cache_seconds: float,
    ) -> None:
        self.service = service
        self.operators = operators
        self._answers = MemberAnswers(messenger, cache_seconds)
        self._titles: TTLCache[int, str] = TTLCache(TITLES_CACHED, TITLES_CACHE_SECONDS)

    def sizes(self) -> dict[str, int]:
        """Entries cached now: Telegram's answers (per chat and user) and group titles."""
        return {"answers": self._answers.size(), "titles": len(self._titles)}

    def forget_quiet(self) -> None:
        """Forget the answers and titles whose time ran out."""
        self._answers.forget_quiet()
        self._titles.expire()

    async def is_admin(self, chat_id: int, user_id: int) -> bool:
        """Group creators and administrators (asked of Telegram, cached) and operators;
        ``False`` when Telegram cannot say (logged)."""
        if user_id in self.operators:
            return True
        return await self._answers.ask(chat_id, user_id, _administers)

    async def require(self, update: Update) -> tuple[int, Person]:
        """The group and the admin who sent ``update``; ``GameError("not_admin")`` for
        anyone else. Notes the group's title (admins' statements name it)."""
        chat, user = update.effective_chat, update.effective_user
        assert chat is not None and user is not None
        if not await self.is_admin(chat.id, user.id):
            raise GameError("not_admin")
        title = chat.title or ""
        if self._titles.get(chat.id) != title:
            await self.service.note_chat(chat.id, title)
            self._titles[chat.id] = title
        return chat.id, person_of(user)


#: Member statuses of someone no longer in the group (``getChatMember``).
GONE = frozenset({ChatMember.LEFT, ChatMember.BANNED})


class MemberCheck:
    """Whether a user is in a group (anything but left or banned: a restricted member
    still in it sees the table), asked of Telegram and cached as ``AdminCheck`` caches: the
    Mini App shows a group only to its members."""

    def __init__(self, messenger: Messenger, *, cache_seconds: float) -> None:
        self._answers = MemberAnswers(messenger, cache_seconds)

    def sizes(self) -> dict[str, int]:
        """Entries cached now: Telegram's answers (per chat and user)."""
        return {"answers": self._answers.size()}

    def forget_quiet(self) -> None:
        """Forget the answers whose time ran out."""
        self._answers.forget_quiet()

    async def is_member(self, chat_id: int, user_id: int) -> bool:
        """Whether Telegram says the user is in the group (cached); ``False`` when it
        cannot say (logged), and not cached then: the next look asks again."""
        return await self._answers.ask(chat_id, user_id, _inside)


def _administers(member: ChatMember) -> bool:
    return member.status in (ChatMember.OWNER, ChatMember.ADMINISTRATOR)


def _inside(member: ChatMember) -> bool:
    # A restricted user may have left the group too: Telegram says so in is_member.
    return member.status not in GONE and getattr(member, "is_member", True) is not False


class MemberAnswers:
    """What Telegram's ``getChatMember`` says of a user in a group, judged and cached per
    chat and user for ``cache_seconds``; ``False`` when Telegram cannot say (logged, and
    not cached: the next look asks again)."""

    def __init__(self, messenger: Messenger, cache_seconds: float) -> None:
        self.messenger = messenger
        self._answers: TTLCache[tuple[int, int], bool] = TTLCache(
            ADMIN_ANSWERS_CACHED, cache_seconds
        )

    def size(self) -> int:
        """Answers cached now."""
        return len(self._answers)

    def forget_quiet(self) -> None:
        """Forget the answers whose time ran out."""
        self._answers.expire()

    async def ask(self, chat_id: int, user_id: int, judge: Callable[[ChatMember], bool]) -> bool:
        """``judge``'s answer on the user's membership, cached (one judge per cache)."""
        found = self._answers.get((chat_id, user_id))
        if found is not None:
            return found
        try:
            member = await self.messenger.bot.get_chat_member(chat_id, user_id)
        except TelegramError as error:
            log.warning("getChatMember(%s, %s) failed: %s", chat_id, user_id, error)
            return False
        answer = judge(member)
        self._answers[(chat_id, user_id)] = answer
        return answer

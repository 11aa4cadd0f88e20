"""What the Mini App asks of the bot's shell: whether someone is in a group (asked of
Telegram) and the moves a player makes from the page, played as the group's commands are
(in the chat's turn, through the same service call, shown on the group's board)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from bot.service.game import Person

#: Whether the user is in the group: ``is_member(chat_id, user_id)`` (the shell's
#: ``MemberCheck``, which caches Telegram's ``getChatMember``).
IsMember = Callable[[int, int], Awaitable[bool]]


@dataclass(frozen=True, slots=True)
class MoveAnswer:
    """What a move got: whether it was taken, and the text the bot answers a command
    with (the same catalogue message, as plain text)."""

    taken: bool
    text: str


class Moves(Protocol):
    """The moves the page offers. A move naming a round (``round_id``) is refused, as an
    old round's board button is, once that round is not the group's open one."""

    async def bid(self, chat_id: int, player: Person, amount: str, round_id: int) -> MoveAnswer:
        """Bid ``amount`` as typed, as ``/bid`` does."""
        ...

    async def bet(
        self, chat_id: int, player: Person, amount: str, round_id: int | None = None
    ) -> MoveAnswer:
        """Bet ``amount`` as typed (again to change it, ``0`` cancels), as ``/bet`` does."""
        ...

    async def grab(self, chat_id: int, player: Person, round_id: int) -> MoveAnswer:
        """Grab, as the board's Grab button does."""
        ...

    async def autobet(self, chat_id: int, player: Person, amount: str) -> MoveAnswer:
        """Set the standing bet (``off`` or ``0`` stops it), as ``/autobet`` does."""
        ...

    async def same_again(self, chat_id: int, player: Person, round_id: int) -> MoveAnswer:
        """The results' "same again" for settled round ``round_id``."""
        ...


@dataclass(frozen=True, slots=True)
class MiniAppBot:
    """A bot whose pages the Mini App serves: its token (which signs their ``initData``),
    whether someone is in a group (asked of this bot), and its shell's moves."""

    token: str = field(repr=False)
    is_member: IsMember
    moves: Moves

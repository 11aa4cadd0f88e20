"""The Mini App's moves, played as the group's commands are: in the chat's turn (after the
commands already waiting, as a message would be), through the same service call, the
outcome published to the group by the same ``RoundProgress`` (its board shows the bet),
and answered with the catalogue's texts: only to the player, in the page, never in the
group. A move naming a round (``round_id``) is refused once that round is not the
group's open one, as a board button of an old round is (``stale_button``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot.engine.errors import GameError
from bot.service.game import CommandResult, Person
from bot.telegram.handlers.base import ShellParts
from bot.telegram.handlers.play import autobet_answer, bet_amount, confirmation
from bot.telegram.messenger import plain_text
from bot.telegram.ordering import ChatLocks
from bot.telegram.parsing import parse_typed_amount
from bot.web.miniapp.moves import MoveAnswer


class MiniAppMoves:
    """``bot.web.miniapp.moves.Moves`` over the shell's collaborators."""

    def __init__(self, parts: ShellParts, locks: ChatLocks) -> None:
        self.parts = parts
        self.locks = locks

    async def bid(self, chat_id: int, player: Person, amount: str, round_id: int) -> MoveAnswer:
        """Bid ``amount`` as typed in round ``round_id``, as ``/bid`` does."""

        async def play() -> CommandResult:
            cents = parse_typed_amount(amount)
            return await self.parts.service.bid(chat_id, player, cents, round_id=round_id)

        return await self._round_move(chat_id, player, play)

    async def bet(
        self, chat_id: int, player: Person, amount: str, round_id: int | None = None
    ) -> MoveAnswer:
        """Bet ``amount`` as typed (``0`` cancels), as ``/bet`` does; in round
        ``round_id`` only, if given."""

        async def play() -> CommandResult:
            cents = await bet_amount(self.parts, chat_id, amount)
            return await self.parts.service.bet(chat_id, player, cents, round_id=round_id)

        return await self._round_move(chat_id, player, play)

    async def grab(self, chat_id: int, player: Person, round_id: int) -> MoveAnswer:
        """Grab the next share of round ``round_id``'s envelope, as its Grab button does."""

        async def play() -> CommandResult:
            return await self.parts.service.grab(chat_id, player, round_id=round_id)

        return await self._round_move(chat_id, player, play)

    async def autobet(self, chat_id: int, player: Person, amount: str) -> MoveAnswer:
        """Set the standing bet to ``amount`` as typed, or stop it (``off`` or ``0``), as
        ``/autobet`` does."""
        parts = self.parts
        parts.people.saw(player)
        try:
            off = amount.strip().casefold() == "off"
            cents = 0 if off else await bet_amount(parts, chat_id, amount)
            async with self.locks.turn(chat_id):
                change = await parts.service.set_autobet(chat_id, player, cents)
                assert change is not None  # None only for an update handled before
                if change.placed is not None:
                    parts.progress.publish(chat_id, change.placed)
        except GameError as error:
            return await self._refused(chat_id, error)
        text = await autobet_answer(parts.chats, chat_id, player.id, change)
        return MoveAnswer(True, plain_text(text))

    async def same_again(self, chat_id: int, player: Person, round_id: int) -> MoveAnswer:
        """The results' "same again" for settled round ``round_id``: the player's bet of
        that round, now if the round takes bets, else kept for the next betting."""
        parts = self.parts
        parts.people.saw(player)
        try:
            async with self.locks.turn(chat_id):
                again = await parts.service.same_again(chat_id, player, round_id)
                assert again is not None  # None only for an update handled before
                if again.placed is not None:
                    parts.progress.publish(chat_id, again.placed)
        except GameError as error:
            return await self._refused(chat_id, error)
        if again.placed is not None:
            text = await confirmation(parts.chats, chat_id, again.placed)
        else:
            text = await parts.chats.text(chat_id, "answer.same_again_next", amount=again.amount)
        return MoveAnswer(True, plain_text(text or ""))

    async def _round_move(
        self, chat_id: int, player: Person, play: Callable[[], Awaitable[CommandResult]]
    ) -> MoveAnswer:
        """Run a round command in the chat's turn, tell the group, and answer the player
        with what the command confirms (or refuses) in the group's words."""
        parts = self.parts
        parts.people.saw(player)
        try:
            async with self.locks.turn(chat_id):
                result = await play()
                parts.progress.publish(chat_id, result)
        except GameError as error:
            return await self._refused(chat_id, error)
        text = await confirmation(parts.chats, chat_id, result)
        return MoveAnswer(True, plain_text(text or ""))

    async def _refused(self, chat_id: int, error: GameError) -> MoveAnswer:
        return MoveAnswer(False, plain_text(await self.parts.replies.error_text(chat_id, error)))

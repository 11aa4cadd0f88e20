"""The Mini App's moves, played as the group's commands are: in the chat's turn (after the
commands already waiting, as a message would be), through the same service call, the
outcome published to the group by the same ``RoundProgress`` (its board shows the bet),
and answered with the catalogue's texts: only to the player, in the page, never in the
group."""

from __future__ import annotations

from bot.engine.errors import GameError
from bot.service.game import Person
from bot.telegram.handlers.base import ShellParts
from bot.telegram.handlers.play import bet_amount, confirmation
from bot.telegram.messenger import plain_text
from bot.telegram.ordering import ChatLocks
from bot.web.miniapp.moves import MoveAnswer


class MiniAppMoves:
    """``bot.web.miniapp.moves.Moves`` over the shell's collaborators."""

    def __init__(self, parts: ShellParts, locks: ChatLocks) -> None:
        self.parts = parts
        self.locks = locks

    async def bet(self, chat_id: int, player: Person, amount: str) -> MoveAnswer:
        """Bet ``amount`` as typed (``0`` cancels), as ``/bet`` does."""
        parts = self.parts
        parts.people.saw(player)
        try:
            cents = await bet_amount(parts, chat_id, amount)
            async with self.locks.turn(chat_id):
                result = await parts.service.bet(chat_id, player, cents)
                parts.progress.publish(chat_id, result)
        except GameError as error:
            return MoveAnswer(False, plain_text(await parts.replies.error_text(chat_id, error)))
        text = await confirmation(parts.chats, chat_id, result)
        return MoveAnswer(True, plain_text(text or ""))

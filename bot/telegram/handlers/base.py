"""What every handler uses: the collaborators, and reading who sent what."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from telegram import Update

from bot.engine.errors import GameError
from bot.service.game import GameService, Person
from bot.telegram.admins import AdminCheck
from bot.telegram.lookups import ChatSettings, People, person_of
from bot.telegram.parsing import parse_typed_amount
from bot.telegram.progress import RoundProgress
from bot.telegram.replies import Replies


@dataclass(frozen=True, slots=True)
class ShellParts:
    """The collaborators handlers work with."""

    service: GameService
    replies: Replies
    chats: ChatSettings
    people: People
    admins: AdminCheck
    progress: RoundProgress


def amount_argument(context: Any, example: str) -> int:
    """The amount a command was given (its first argument)."""
    args: list[str] = context.args or []
    if not args:
        raise GameError("amount_missing", example=example)
    return parse_typed_amount(args[0])


def sender(update: Update) -> tuple[int, Person, int]:
    """The chat, the person and the update id of a command."""
    assert update.effective_chat is not None and update.effective_user is not None
    return update.effective_chat.id, person_of(update.effective_user), update.update_id


def already_done(parts: ShellParts, update: Update) -> None:
    """Answer an update Telegram sent again, handled before ("Already done."): it comes
    again only when the first handling was not confirmed to Telegram (the worker died, or
    the confirmation was lost), and that answer may not have gone out."""
    chat = update.effective_chat
    if chat is not None:
        text = parts.chats.text_offline(chat, update.effective_user, "answer.duplicate")
        parts.replies.reply(update, text)

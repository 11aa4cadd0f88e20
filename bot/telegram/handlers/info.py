"""What anyone may ask: /balance, /history, /rules, /bank, /help, /start."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from telegram import Update
from telegram.constants import ChatType

from bot.engine.errors import GameError
from bot.engine.round import Phase
from bot.money import format_signed
from bot.telegram.handlers.base import ShellParts, sender
from bot.telegram.i18n import language_for, translate
from bot.telegram.views import display_name

#: Rounds ``/history`` lists.
HISTORY_ROUNDS = 10


def private_language(update: Update) -> str:
    """The language of a private chat: that of the user's Telegram app."""
    user = update.effective_user
    return language_for(user.language_code if user is not None else None)


class InfoHandlers:
    """Answers about chips, past rounds, the table's rules and the commands."""

    def __init__(
        self,
        parts: ShellParts,
        *,
        group_help: Callable[[str], str],
        private_help: Callable[[str], str],
    ) -> None:
        self.parts = parts
        self.service = parts.service
        self.group_help = group_help
        self.private_help = private_help

    async def balance(self, update: Update, context: Any) -> None:
        """``/balance`` in a group: your chips here."""
        chat_id, person, _ = sender(update)
        balance = await self.service.balance(chat_id, person.id)
        text = await self.parts.chats.text(
            chat_id,
            "balance.group",
            name=display_name(person.id, {person.id: person}),
            available=balance.available,
            held=balance.held,
        )
        self.parts.replies.reply(update, text)

    async def balance_private(self, update: Update, context: Any) -> None:
        """``/balance`` in private: your chips in every group."""
        _, person, _ = sender(update)
        language = private_language(update)
        found = await self.service.balances_everywhere(person.id)
        if not found:
            self.parts.replies.reply(update, translate(language, "balance.private_none"))
            return
        lines = [translate(language, "balance.private_header")]
        for group_id, title, balance in found:
            settings = await self.parts.chats.get(group_id)
            lines.append(
                translate(
                    language,
                    "balance.private_line",
                    settings.currency,
                    title=html.escape(title or str(group_id)),
                    available=balance.available,
                    held=balance.held,
                )
            )
        self.parts.replies.reply(update, "\n".join(lines))

    async def history(self, update: Update, context: Any) -> None:
        """``/history``: the group's last rounds."""
        chat_id, _, _ = sender(update)
        rounds = await self.service.history(chat_id, limit=HISTORY_ROUNDS)
        views = await self.parts.chats.views(chat_id)
        if not rounds:
            self.parts.replies.reply(update, views.t("history.none"))
            return
        people = await self.parts.people.names(
            r.dealer_id for r in rounds if r.dealer_id is not None
        )
        lines = [views.t("history.header")]
        for summary in rounds:
            if summary.phase is Phase.SETTLED:
                if summary.dealer_id is None:
                    name = views.t("results.house_name")
                else:
                    name = display_name(summary.dealer_id, people)
                lines.append(
                    views.t(
                        "history.settled",
                        round_id=summary.id,
                        name=name,
                        pool=summary.pool,
                        net=format_signed(summary.dealer_net or 0, views.currency),
                    )
                )
            elif summary.phase is Phase.VOID:
                lines.append(
                    views.t("history.void", round_id=summary.id, reason=summary.void_reason or "")
                )
            else:
                lines.append(
                    views.t("history.open", round_id=summary.id, phase=summary.phase.value)
                )
        self.parts.replies.reply(update, "\n".join(lines))

    async def rules(self, update: Update, context: Any) -> None:
        """``/rules``: the rules and multipliers of this table."""
        assert update.effective_chat is not None
        views = await self.parts.chats.views(update.effective_chat.id)
        self.parts.replies.reply(update, views.rules())

    async def bank(self, update: Update, context: Any) -> None:
        """``/bank``: the group's bank balance."""
        chat_id, _, _ = sender(update)
        balance = await self.service.bank_balance(chat_id)
        text = await self.parts.chats.text(chat_id, "bank.balance", balance=balance)
        self.parts.replies.reply(update, text)

    async def help(self, update: Update, context: Any) -> None:
        """``/help``: the commands that work here."""
        chat = update.effective_chat
        assert chat is not None
        if chat.type == ChatType.PRIVATE:
            self.parts.replies.reply(update, self.private_help(private_language(update)))
            return
        settings = await self.parts.chats.get(chat.id)
        self.parts.replies.reply(update, self.group_help(settings.language))

    async def start(self, update: Update, context: Any) -> None:
        """``/start`` in private: how to add the bot to a group."""
        self.parts.replies.reply(update, translate(private_language(update), "private.start"))

    async def group_only(self, update: Update, context: Any) -> None:
        """A group command sent in private."""
        raise GameError("group_only")

"""``/table`` in a private chat: the Mini App opened with a ``web_app`` button (those work
in private chats only; a group's board links to the app instead, ``MiniAppLinks``), one
for each group the player has chips in."""

from __future__ import annotations

import html
from typing import Any

from telegram import InlineKeyboardMarkup, Update

from bot.telegram.handlers.base import ShellParts, sender
from bot.telegram.handlers.info import private_language
from bot.telegram.i18n import translate
from bot.telegram.messenger import Messenger
from bot.telegram.miniapp_links import MiniAppLinks

#: Groups ``/table`` offers buttons for: a private chat's keyboard stays short.
TABLE_GROUPS = 10


class TableHandlers:
    """``/table`` in a private chat."""

    def __init__(self, parts: ShellParts, links: MiniAppLinks, messenger: Messenger) -> None:
        self.parts = parts
        self.links = links
        self.messenger = messenger

    async def private(self, update: Update, context: Any) -> None:
        """``/table``: a button opening the app for each of the sender's groups, or where
        to open it from."""
        chat_id, person, _ = sender(update)
        language = private_language(update)
        if not self.links.on:
            self.parts.replies.reply(update, translate(language, "table.off"))
            return
        found = await self.parts.service.balances_everywhere(person.id)
        if not found:
            self.parts.replies.reply(update, translate(language, "table.private_none"))
            return
        buttons = [
            [self.links.private_button(title or str(group_id), group_id)]
            for group_id, title, _ in found[:TABLE_GROUPS]
        ]
        names = ", ".join(html.escape(title or str(group_id)) for group_id, title, _ in found)
        text = translate(language, "table.private", groups=names)
        # Replies send text alone; a keyboard goes straight through the messenger (a
        # private chat has no group's rate to share).
        message = update.effective_message
        reply_to = message.message_id if message is not None else None
        await self.messenger.send(chat_id, text, InlineKeyboardMarkup(buttons), reply_to)

"""``/console``: a one-time sign-in link to the web console, sent in a private chat (a
link posted in a group would sign in whoever clicks it first). The link is signed with a
key derived from the bot's token (``bot.web.signing``), valid for five minutes
and used once (the console records its nonce)."""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from typing import Any

from telegram import Update

from bot.engine.errors import GameError
from bot.telegram.handlers.base import ShellParts, sender
from bot.telegram.handlers.info import private_language
from bot.telegram.i18n import translate
from bot.web.console import LinkSigner


class ConsoleHandlers:
    """``/console`` in a private chat, and its answer in a group."""

    def __init__(
        self,
        parts: ShellParts,
        *,
        bot_token: str,
        public_url: str | None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.parts = parts
        self.links = LinkSigner(bot_token)
        #: Where the console is served (``[web] public_url``); ``None``: no console.
        self.public_url = public_url
        self.clock = clock

    def link_for(self, user_id: int) -> str | None:
        """A fresh sign-in link for ``user_id``; ``None`` when the console is off."""
        if not self.public_url:
            return None
        token = self.links.issue(user_id, int(self.clock()))
        return f"{self.public_url.rstrip('/')}/console/login?token={token}"

    async def private(self, update: Update, context: Any) -> None:
        """``/console`` in private: the sender's sign-in link."""
        _, person, _ = sender(update)
        language = private_language(update)
        url = self.link_for(person.id)
        if url is None:
            self.parts.replies.reply(update, translate(language, "console.off"))
            return
        self.parts.replies.reply(update, translate(language, "console.link", url=html.escape(url)))

    async def in_group(self, update: Update, context: Any) -> None:
        """``/console`` in a group: it works in private only."""
        raise GameError("console_private")

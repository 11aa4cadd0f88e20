"""Where the bot's buttons open the Mini App (docs/miniapp.md).

In a group, a ``web_app`` button is refused by Telegram (those work in private chats
only): the board links to the bot's Main Mini App by its direct link,
``https://t.me/BOT?startapp=GROUP``, and Telegram hands ``GROUP`` to the app as the signed
``start_param``. In a private chat, ``/table`` opens the app with a ``web_app`` button.
"""

from __future__ import annotations

from collections.abc import Callable

from telegram import InlineKeyboardButton, WebAppInfo

from bot.web.miniapp.start_param import encode_group


class MiniAppLinks:
    """The Mini App's links, if it is on with a public address (``[web] miniapp`` and
    ``public_url``); every link ``None`` otherwise."""

    def __init__(self, app_url: str | None, username: Callable[[], str]) -> None:
        #: The app's public address (``WebConfig.miniapp_url``).
        self.app_url = app_url
        #: The bot's @username, "" until it is known (asked of Telegram at start-up).
        self.username = username

    @property
    def on(self) -> bool:
        """Whether the bot offers the app at all."""
        return self.app_url is not None

    def group_link(self, chat_id: int) -> str | None:
        """The direct link opening the app for a group; ``None`` when off, or before the
        bot knows its own @username."""
        username = self.username() if self.on else ""
        if not username:
            return None
        return f"https://t.me/{username}?startapp={encode_group(chat_id)}"

    def group_button(self, chat_id: int, label: str) -> InlineKeyboardButton | None:
        """A button of a group's message opening the app for that group."""
        link = self.group_link(chat_id)
        return InlineKeyboardButton(label, url=link) if link is not None else None

    def private_button(self, label: str, chat_id: int | None = None) -> InlineKeyboardButton:
        """A private chat's ``web_app`` button opening the app, for a group if one is
        given (``?chat=``, checked by the app as any request is)."""
        assert self.app_url is not None, "the app is off"
        url = self.app_url if chat_id is None else f"{self.app_url}?chat={chat_id}"
        return InlineKeyboardButton(label, web_app=WebAppInfo(url))


def no_links() -> MiniAppLinks:
    """Links of a bot without the app."""
    return MiniAppLinks(None, str)

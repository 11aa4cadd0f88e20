"""The Bot API methods that write in a chat: send (text, photo, animation), edit, delete,
and the chat action ("typing" …) that comes before a message."""

from __future__ import annotations

import time
from typing import Any

from bot.fakegram.chats import Chat, Chats, Message
from bot.fakegram.content import formatted_text, inline_markup, reply_target
from bot.fakegram.flood import FloodControl
from bot.fakegram.holds import SendHolds
from bot.fakegram.media import store_file, uploaded_bytes
from bot.fakegram.params import RequestParams, bad_request

JsonDict = dict[str, Any]

_NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are exactly "
    "the same as a current content and reply markup of the message"
)
_CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)


class MessageMethods:
    """``sendMessage``, ``sendPhoto``, ``sendAnimation``, ``editMessageText``,
    ``editMessageReplyMarkup``, ``deleteMessage`` and ``sendChatAction``."""

    def __init__(self, chats: Chats, flood: FloodControl, holds: SendHolds) -> None:
        self._chats = chats
        self._flood = flood
        self._holds = holds

    async def send_message(self, params: RequestParams) -> JsonDict:
        return await self._send(params, "text")

    async def send_photo(self, params: RequestParams) -> JsonDict:
        return await self._send(params, "caption", "photo")

    async def send_animation(self, params: RequestParams) -> JsonDict:
        return await self._send(params, "caption", "animation")

    async def _send(
        self, params: RequestParams, text_field: str, media_kind: str | None = None
    ) -> JsonDict:
        """A new message of the bot's: its text (or a media's caption) from ``text_field``,
        and the photo or animation ``media_kind`` names, if any (an upload, or a file sent
        before)."""
        chat_id = params.chat_id()
        source, formatted, parse_mode = formatted_text(params, text_field, self._chats.user)
        media = None
        if media_kind is not None:
            files = self._chats.files
            media = store_file(media_kind, uploaded_bytes(params, media_kind, files), files)
        markup = inline_markup(params)
        chat = self._chats.chat(chat_id)
        reply_to = reply_target(params, chat)
        await self._holds.wait_at(formatted.text, delivered=False)
        self._flood.check(chat_id)
        message = Message(
            message_id=chat.take_message_id(),
            sender=dict(self._chats.bot_user),
            date=int(time.time()),
            content=formatted,
            source_text=source,
            parse_mode=parse_mode,
            sent_by_bot=True,
            reply_markup=markup,
            reply_to_message_id=reply_to,
            media=media,
        )
        chat.messages[message.message_id] = message
        self._chats.record_action(chat, "send", message)
        await self._holds.wait_at(formatted.text, delivered=True)
        return self._chats.message_json(chat, message)

    async def edit_message_text(self, params: RequestParams) -> JsonDict:
        chat, message = self._editable_message(params)
        if message.media is not None:
            raise bad_request("there is no text in the message to edit")
        source, formatted, parse_mode = formatted_text(params, "text", self._chats.user)
        # As in Telegram, an edit without reply_markup removes the inline keyboard.
        markup = inline_markup(params)
        if formatted == message.content and markup == message.reply_markup:
            raise bad_request(_NOT_MODIFIED)
        message.content = formatted
        message.source_text = source
        message.parse_mode = parse_mode
        message.reply_markup = markup
        message.edit_date = int(time.time())
        self._chats.record_action(chat, "edit", message)
        return self._chats.message_json(chat, message)

    async def edit_message_reply_markup(self, params: RequestParams) -> JsonDict:
        chat, message = self._editable_message(params)
        markup = inline_markup(params)
        if markup == message.reply_markup:
            raise bad_request(_NOT_MODIFIED)
        message.reply_markup = markup
        message.edit_date = int(time.time())
        self._chats.record_action(chat, "edit", message)
        return self._chats.message_json(chat, message)

    async def delete_message(self, params: RequestParams) -> bool:
        chat_id = params.chat_id()
        message_id = params.required_int("message_id", "message identifier is not specified")
        chat = self._chats.get(chat_id)
        message = chat.messages.get(message_id) if chat else None
        if chat is None or message is None:
            raise bad_request("message to delete not found")
        bot_status = self._chats.member_status(chat_id, self._chats.bot_user["id"])
        if (
            not message.sent_by_bot
            and chat_id < 0
            and bot_status not in ("creator", "administrator")
        ):
            raise bad_request("message can't be deleted")
        del chat.messages[message_id]
        self._chats.record_action(chat, "delete", message)
        return True

    async def send_chat_action(self, params: RequestParams) -> bool:
        params.chat_id()
        if params.optional_str("action") not in _CHAT_ACTIONS:
            raise bad_request("wrong parameter action in request")
        return True

    def _editable_message(self, params: RequestParams) -> tuple[Chat, Message]:
        if params.optional_str("inline_message_id") is not None:
            raise bad_request("inline messages are not supported by the fake")
        chat_id = params.chat_id()
        message_id = params.required_int("message_id", "message identifier is not specified")
        chat = self._chats.get(chat_id)
        if chat is None:
            raise bad_request("chat not found")
        message = chat.messages.get(message_id)
        if message is None:
            raise bad_request("message to edit not found")
        if not message.sent_by_bot:
            raise bad_request("message can't be edited")
        return chat, message

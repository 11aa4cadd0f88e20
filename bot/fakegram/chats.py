"""Chat state: the users and chats the fake knows, their messages, the files the bot sent,
and each chat's transcript of what the bot did in it.

The Bot API methods (``bot.fakegram.messages`` and the rest) change this state; the
in-process API reads it (``transcript``, ``messages``, ``file_bytes``).
"""

from __future__ import annotations

import copy
import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.fakegram.formatting import FormattedText, find_bot_commands
from bot.fakegram.media import StoredFile, media_json

JsonDict = dict[str, Any]


@dataclass
class Message:
    """A message in a chat, the bot's or a user's."""

    message_id: int
    sender: JsonDict
    date: int
    content: FormattedText
    source_text: str
    parse_mode: str | None
    sent_by_bot: bool
    reply_markup: JsonDict | None = None
    reply_to_message_id: int | None = None
    edit_date: int | None = None
    #: A photo's or an animation's file; ``content`` is then its caption.
    media: StoredFile | None = None


@dataclass
class Chat:
    """A chat: what ``chat`` looks like in the Bot API, its messages and its transcript."""

    info: JsonDict
    chat_instance: str
    next_message_id: int = 1
    messages: dict[int, Message] = field(default_factory=dict)
    transcript: list[JsonDict] = field(default_factory=list)
    member_status: dict[int, str] = field(default_factory=dict)

    def take_message_id(self) -> int:
        message_id = self.next_message_id
        self.next_message_id += 1
        return message_id


def _chat_instance(chat_id: int) -> str:
    """A stable opaque id per chat, shaped like Telegram's (a signed 64-bit number)."""
    digest = hashlib.sha256(str(chat_id).encode()).digest()
    return str(int.from_bytes(digest[:8], "big", signed=True))


class Chats:
    """The users, chats, messages and sent files of one fake server."""

    def __init__(self, bot_user: JsonDict) -> None:
        self.bot_user = bot_user
        self.files: dict[str, StoredFile] = {}
        self._chats: dict[int, Chat] = {}
        self._users: dict[int, JsonDict] = {}

    # -------------------------------------------------------------- users and chats

    def register_user(self, user: Mapping[str, Any]) -> JsonDict:
        """Remember a user as Telegram shows it; returns a copy."""
        if "id" not in user or "first_name" not in user:
            raise ValueError("a user needs at least 'id' and 'first_name'")
        registered: JsonDict = {
            "id": int(user["id"]),
            "is_bot": bool(user.get("is_bot", False)),
            "first_name": str(user["first_name"]),
        }
        for optional in ("last_name", "username", "language_code"):
            if user.get(optional):
                registered[optional] = str(user[optional])
        self._users[registered["id"]] = registered
        return copy.deepcopy(registered)

    def user(self, user_id: int) -> JsonDict:
        """The user as Telegram shows it (the bot, a known user, or a made-up one)."""
        if user_id == self.bot_user["id"]:
            return dict(self.bot_user)
        known = self._users.get(user_id)
        if known is not None:
            return dict(known)
        return {"id": user_id, "is_bot": False, "first_name": f"User {user_id}"}

    def get(self, chat_id: int) -> Chat | None:
        """The chat, if anyone wrote in it or set something of it."""
        return self._chats.get(chat_id)

    def chat(self, chat_id: int, info: JsonDict | None = None) -> Chat:
        """The chat, made on first use; ``info`` (from a user's message) replaces its info."""
        chat = self._chats.get(chat_id)
        if chat is None:
            chat = Chat(
                info=info or self._guess_chat_info(chat_id), chat_instance=_chat_instance(chat_id)
            )
            self._chats[chat_id] = chat
        elif info is not None:
            chat.info = info
        return chat

    def _guess_chat_info(self, chat_id: int) -> JsonDict:
        """Chat info for a chat the bot writes to before any user did."""
        if chat_id < 0:
            chat_type = "supergroup" if str(chat_id).startswith("-100") else "group"
            return {"id": chat_id, "type": chat_type, "title": "Test group"}
        user = self._users.get(chat_id, {"first_name": f"User {chat_id}"})
        info = {"id": chat_id, "type": "private", "first_name": user["first_name"]}
        info.update({key: user[key] for key in ("last_name", "username") if key in user})
        return info

    def member_status(self, chat_id: int, user_id: int) -> str:
        """What ``getChatMember`` says of the user in the chat ("member" unless set)."""
        chat = self._chats.get(chat_id)
        return chat.member_status.get(user_id, "member") if chat else "member"

    # ------------------------------------------------------------------ messages

    def add_user_message(
        self,
        chat_id: int,
        user: Mapping[str, Any],
        text: str,
        *,
        chat_type: str,
        chat_title: str,
        reply_to_message_id: int | None,
    ) -> JsonDict:
        """Have ``user`` write ``text`` in a chat; returns the message as the Bot API shows it."""
        if not text:
            raise ValueError("a user message needs text")
        sender = self.register_user(user)
        chat = self.chat(chat_id, _user_chat_info(chat_id, sender, chat_type, chat_title))
        if reply_to_message_id is not None and reply_to_message_id not in chat.messages:
            raise ValueError(f"chat {chat_id} has no message {reply_to_message_id} to reply to")
        message = Message(
            message_id=chat.take_message_id(),
            sender=sender,
            date=int(time.time()),
            content=FormattedText(text, find_bot_commands(text)),
            source_text=text,
            parse_mode=None,
            sent_by_bot=False,
            reply_to_message_id=reply_to_message_id,
        )
        chat.messages[message.message_id] = message
        return self.message_json(chat, message)

    def message_json(self, chat: Chat, message: Message, *, with_reply: bool = True) -> JsonDict:
        """The message as the Bot API shows it (with the message it replies to)."""
        result: JsonDict = {
            "message_id": message.message_id,
            "from": dict(message.sender),
            "chat": dict(chat.info),
            "date": message.date,
        }
        if message.edit_date is not None:
            result["edit_date"] = message.edit_date
        replied = chat.messages.get(message.reply_to_message_id or 0)
        if with_reply and replied is not None:
            result["reply_to_message"] = self.message_json(chat, replied, with_reply=False)
        if message.media is not None:
            result.update(media_json(message.media))
            if message.content.text:
                result["caption"] = message.content.text
            if message.content.entities:
                result["caption_entities"] = copy.deepcopy(message.content.entities)
        else:
            result["text"] = message.content.text
            if message.content.entities:
                result["entities"] = copy.deepcopy(message.content.entities)
        if message.reply_markup is not None:
            result["reply_markup"] = copy.deepcopy(message.reply_markup)
        return result

    # ------------------------------------------------------------------ transcripts

    def record_action(self, chat: Chat, kind: str, message: Message) -> None:
        """Add a bot action ("send", "edit" or "delete") to the chat's transcript."""
        entry: JsonDict = {"kind": kind, "message_id": message.message_id, "time": time.time()}
        if kind == "delete":
            entry.update(
                text=None,
                plain_text=None,
                entities=[],
                reply_markup=None,
                parse_mode=None,
                reply_to_message_id=None,
                media=None,
            )
        else:
            entry.update(_message_state(message))
        chat.transcript.append(entry)

    def transcript(self, chat_id: int) -> list[JsonDict]:
        """Every bot action in the chat, in order (see ``FakeTelegram.transcript``)."""
        chat = self._chats.get(chat_id)
        return copy.deepcopy(chat.transcript) if chat else []

    def messages(self, chat_id: int) -> dict[int, JsonDict]:
        """The bot's messages in the chat as they are now (deleted ones are gone)."""
        chat = self._chats.get(chat_id)
        if chat is None:
            return {}
        return {
            message_id: _message_state(message)
            for message_id, message in chat.messages.items()
            if message.sent_by_bot
        }

    def file_bytes(self, file_id: str) -> bytes:
        """The bytes of a photo or an animation the bot sent."""
        stored = self.files.get(file_id)
        if stored is None:
            raise ValueError(f"no file {file_id!r} was ever sent")
        return stored.data


def _user_chat_info(chat_id: int, user: JsonDict, chat_type: str, chat_title: str) -> JsonDict:
    if chat_type == "private":
        if chat_id != user["id"]:
            raise ValueError("a private chat's id is the user's id")
        info = {"id": chat_id, "type": "private", "first_name": user["first_name"]}
        info.update({key: user[key] for key in ("last_name", "username") if key in user})
        return info
    if chat_type not in ("group", "supergroup"):
        raise ValueError(f"chat_type must be private, group or supergroup; got {chat_type!r}")
    if chat_id >= 0:
        raise ValueError("group chats have negative ids")
    return {"id": chat_id, "type": chat_type, "title": chat_title}


def _message_state(message: Message) -> JsonDict:
    return {
        "text": message.source_text,
        "plain_text": message.content.text,
        "entities": copy.deepcopy(message.content.entities),
        "reply_markup": copy.deepcopy(message.reply_markup),
        "parse_mode": message.parse_mode,
        "reply_to_message_id": message.reply_to_message_id,
        "media": None
        if message.media is None
        else {
            "kind": message.media.kind,
            "file_id": message.media.file_id,
            "width": message.media.width,
            "height": message.media.height,
        },
    }

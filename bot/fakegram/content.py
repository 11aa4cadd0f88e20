"""What a bot's send or edit carries, read and checked as Telegram does: the text (or
caption) with its formatting, the inline keyboard and the message it replies to."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.fakegram.chats import Chat
from bot.fakegram.formatting import EntityParseError, FormattedText, parse_html, strip_formatted
from bot.fakegram.params import RequestParams, bad_request

JsonDict = dict[str, Any]

_MAX_TEXT_LENGTH = 4096
_MAX_CAPTION_LENGTH = 1024
_MAX_CALLBACK_DATA_BYTES = 64
_INLINE_BUTTON_ACTIONS = frozenset(
    {
        "callback_data",
        "url",
        "web_app",
        "login_url",
        "switch_inline_query",
        "switch_inline_query_current_chat",
        "switch_inline_query_chosen_chat",
        "copy_text",
        "callback_game",
        "pay",
    }
)


def formatted_text(
    params: RequestParams, field: str, user: Callable[[int], JsonDict]
) -> tuple[str, FormattedText, str | None]:
    """The ``text`` of a send/edit (or a ``caption``, which may be empty) as Telegram
    stores it, validated the same way; ``user`` fills in a ``text_mention``'s user."""
    source = params.optional_str(field) or ""
    parse_mode = params.optional_str("parse_mode")
    explicit_entities = params.optional_json("entities" if field == "text" else f"{field}_entities")
    if explicit_entities is not None:
        if not isinstance(explicit_entities, list):
            raise bad_request("can't parse entities JSON object")
        formatted = FormattedText(source, explicit_entities)
    elif parse_mode is None or parse_mode.lower() in ("markdown", "markdownv2"):
        formatted = FormattedText(source)
    elif parse_mode.lower() == "html":
        try:
            formatted = parse_html(source)
        except EntityParseError as error:
            raise bad_request(f"can't parse entities: {error}") from None
    else:
        raise bad_request("unsupported parse_mode")
    formatted = strip_formatted(formatted)
    if field == "caption":
        if len(formatted.text) > _MAX_CAPTION_LENGTH:
            raise bad_request("message caption is too long")
    elif not formatted.text:
        raise bad_request("message text is empty")
    elif len(formatted.text) > _MAX_TEXT_LENGTH:
        raise bad_request("message is too long")
    for entity in formatted.entities:
        if entity.get("type") == "text_mention":
            entity["user"] = user(int(entity["user"]["id"]))
    return source, formatted, parse_mode


def inline_markup(params: RequestParams) -> JsonDict | None:
    """The inline keyboard of a send/edit; other keyboards are not part of a message."""
    markup = params.optional_json("reply_markup", "can't parse reply keyboard markup JSON object")
    if markup is None:
        return None
    if not isinstance(markup, dict):
        raise bad_request("can't parse reply keyboard markup JSON object")
    if "inline_keyboard" not in markup:
        return None
    rows = markup["inline_keyboard"]
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise bad_request("can't parse inline keyboard markup JSON object")
    for row in rows:
        for button in row:
            _check_inline_button(button)
    kept_rows = [row for row in rows if row]
    return {"inline_keyboard": kept_rows} if kept_rows else None


def reply_target(params: RequestParams, chat: Chat) -> int | None:
    """The message a send replies to, if any (``reply_parameters`` or the older fields)."""
    reply_parameters = params.optional_json("reply_parameters")
    if isinstance(reply_parameters, dict):
        nested = RequestParams(reply_parameters)
        target = nested.required_int("message_id", "message to be replied not found")
        allow_missing = nested.flag("allow_sending_without_reply")
    else:
        target_or_none = params.optional_int("reply_to_message_id")
        if target_or_none is None:
            return None
        target = target_or_none
        allow_missing = params.flag("allow_sending_without_reply")
    if target in chat.messages:
        return target
    if allow_missing:
        return None
    raise bad_request("message to be replied not found")


def _check_inline_button(button: object) -> None:
    """Reject inline buttons Telegram would reject (no action, oversized callback_data)."""
    if not isinstance(button, dict) or not isinstance(button.get("text"), str):
        raise bad_request(
            'can\'t parse inline keyboard button: Field "text" must be of type String'
        )
    if not _INLINE_BUTTON_ACTIONS & button.keys():
        raise bad_request(
            "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"
        )
    if "callback_data" in button:
        data = button["callback_data"]
        if not isinstance(data, str) or not 1 <= len(data.encode()) <= _MAX_CALLBACK_DATA_BYTES:
            raise bad_request("BUTTON_DATA_INVALID")

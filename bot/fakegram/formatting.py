"""Message text the way Telegram sees it: HTML parse mode, bot commands, UTF-16 offsets.

The HTML rules follow Telegram's own parser (tdlib ``parse_html``): the same tag set, the
same error wording and UTF-8 byte offsets in errors, entity offsets in UTF-16 code units.
The one deliberate difference: Telegram keeps a bare ``&`` literally, while this parser
rejects it, because a stray ``&`` in a test means some text was not ``html.escape``-d and
would break on the first ``<`` in production.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

JsonDict = dict[str, Any]

_SPACES = " \t\r\n\v\f"

_ENTITY_TYPE_BY_TAG = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "code": "code",
    "pre": "pre",
    "a": "text_link",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
}

_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}

_MENTION_LINK = re.compile(r"tg://user\?id=(\d+)")

# Telegram recognises "/command" and "/command@bot_username" anywhere a word may start.
_BOT_COMMAND = re.compile(
    r"(?<![A-Za-z0-9_/@])/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?(?![A-Za-z0-9_/@])"
)


class EntityParseError(ValueError):
    """The text is not valid for its parse mode; ``str(error)`` is Telegram's wording."""


@dataclass
class FormattedText:
    """Text as Telegram stores it: plain characters plus entities (UTF-16 offsets)."""

    text: str
    entities: list[JsonDict] = field(default_factory=list)


def utf16_length(text: str) -> int:
    """Length of ``text`` in UTF-16 code units, the unit of Telegram entity offsets."""
    return len(text.encode("utf-16-le")) // 2


def find_bot_commands(text: str) -> list[JsonDict]:
    """``bot_command`` entities for every command in ``text``, as Telegram attaches them."""
    return [
        {
            "type": "bot_command",
            "offset": utf16_length(text[: match.start()]),
            "length": utf16_length(match.group()),
        }
        for match in _BOT_COMMAND.finditer(text)
    ]


def strip_formatted(formatted: FormattedText) -> FormattedText:
    """Drop leading/trailing whitespace the way Telegram does, clipping entities to match."""
    text = formatted.text
    stripped = text.strip()
    if stripped == text:
        return formatted
    start = utf16_length(text[: len(text) - len(text.lstrip())])
    end = start + utf16_length(stripped)
    entities = []
    for entity in formatted.entities:
        entity_start = max(entity["offset"], start)
        entity_end = min(entity["offset"] + entity["length"], end)
        if entity_end > entity_start:
            entities.append(
                {**entity, "offset": entity_start - start, "length": entity_end - entity_start}
            )
    return FormattedText(stripped, entities)


@dataclass
class _OpenTag:
    name: str
    argument: str
    utf16_offset: int
    text_index: int


class _HtmlParser:
    """One pass over the source, mirroring tdlib's state machine."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.pos = 0
        self.plain: list[str] = []
        self.utf16_offset = 0
        self.open_tags: list[_OpenTag] = []
        self.entities: list[JsonDict] = []
        # A code language only survives as <pre><code class="language-x">, so it is kept
        # aside until the enclosing <pre> closes.
        self.code_languages: dict[int, str] = {}

    def byte_offset(self, index: int) -> int:
        return len(self.source[:index].encode("utf-8"))

    def char(self, index: int) -> str:
        """The character at ``index``, or "" past the end (tdlib's NUL terminator)."""
        return self.source[index] if index < len(self.source) else ""

    def emit(self, text: str) -> None:
        self.plain.append(text)
        self.utf16_offset += utf16_length(text)

    def parse(self) -> FormattedText:
        while self.pos < len(self.source):
            current = self.source[self.pos]
            if current == "&":
                decoded = _decode_entity(self.source, self.pos)
                if decoded is None:
                    raise EntityParseError(
                        f'Character "&" at byte offset {self.byte_offset(self.pos)} '
                        'must be escaped as "&amp;"'
                    )
                character, self.pos = decoded
                self.emit(character)
            elif current != "<":
                self.emit(current)
                self.pos += 1
            elif self.char(self.pos + 1) == "/":
                self.parse_end_tag()
            else:
                self.parse_start_tag()
        if self.open_tags:
            raise EntityParseError(
                f'Can\'t find end tag corresponding to start tag "{self.open_tags[-1].name}"'
            )
        entities = sorted(self.entities, key=lambda entity: (entity["offset"], -entity["length"]))
        return FormattedText("".join(self.plain), entities)

    def parse_start_tag(self) -> None:
        begin = self.pos
        end = begin + 1
        while self.char(end) and self.char(end) not in _SPACES and self.char(end) != ">":
            end += 1
        if not self.char(end):
            raise EntityParseError(f"Unclosed start tag at byte offset {self.byte_offset(begin)}")
        tag_name = self.source[begin + 1 : end].lower()
        if tag_name not in _ENTITY_TYPE_BY_TAG:
            raise EntityParseError(
                f'Unsupported start tag "{tag_name}" at byte offset {self.byte_offset(begin)}'
            )
        self.pos = end
        argument = self.parse_attributes(tag_name, begin)
        if tag_name == "span" and argument != "spoiler":
            raise EntityParseError(
                f'Tag "span" must have class "tg-spoiler" at byte offset {self.byte_offset(begin)}'
            )
        self.pos += 1  # the closing ">"
        self.open_tags.append(_OpenTag(tag_name, argument, self.utf16_offset, len(self.plain)))

    def parse_attributes(self, tag_name: str, begin: int) -> str:
        """Consume attributes up to ``>``; return the one that matters for ``tag_name``."""
        argument = ""
        while self.char(self.pos) != ">":
            while self.char(self.pos) and self.char(self.pos) in _SPACES:
                self.pos += 1
            if self.char(self.pos) == ">":
                break
            if not self.char(self.pos):
                raise EntityParseError(
                    f"Unclosed start tag at byte offset {self.byte_offset(begin)}"
                )
            name_start = self.pos
            while (
                self.char(self.pos)
                and self.char(self.pos) not in _SPACES
                and self.char(self.pos) not in "=>"
            ):
                self.pos += 1
            attribute_name = self.source[name_start : self.pos]
            if not attribute_name:
                raise EntityParseError(
                    f'Empty attribute name in the tag "{tag_name}" at byte offset '
                    f"{self.byte_offset(begin)}"
                )
            while self.char(self.pos) and self.char(self.pos) in _SPACES:
                self.pos += 1
            if self.char(self.pos) != "=":
                if tag_name == "blockquote" and attribute_name == "expandable":
                    argument = "expandable"
                    continue
                raise EntityParseError(
                    "Expected equal sign in declaration of an attribute of the tag "
                    f'"{tag_name}" at byte offset {self.byte_offset(begin)}'
                )
            self.pos += 1
            while self.char(self.pos) and self.char(self.pos) in _SPACES:
                self.pos += 1
            value = self.parse_attribute_value(begin)
            argument = _tag_argument(tag_name, attribute_name, value) or argument
        return argument

    def parse_attribute_value(self, begin: int) -> str:
        quote = self.char(self.pos)
        if quote not in ("'", '"'):
            token_start = self.pos
            while self.char(self.pos) and (
                (self.char(self.pos).isascii() and self.char(self.pos).isalnum())
                or self.char(self.pos) in ".-"
            ):
                self.pos += 1
            if not self.char(self.pos):
                raise EntityParseError(
                    f"Unclosed start tag at byte offset {self.byte_offset(begin)}"
                )
            if self.char(self.pos) not in _SPACES and self.char(self.pos) != ">":
                raise EntityParseError(
                    f"Unexpected end of name token at byte offset {self.byte_offset(token_start)}"
                )
            return self.source[token_start : self.pos].lower()
        self.pos += 1
        value: list[str] = []
        while self.char(self.pos) and self.char(self.pos) != quote:
            # Inside attribute values Telegram's leniency is kept: URLs carry bare "&".
            decoded = _decode_entity(self.source, self.pos)
            if decoded is None:
                value.append(self.source[self.pos])
                self.pos += 1
            else:
                character, self.pos = decoded
                value.append(character)
        if not self.char(self.pos):
            raise EntityParseError(f"Unclosed start tag at byte offset {self.byte_offset(begin)}")
        self.pos += 1
        return "".join(value)

    def parse_end_tag(self) -> None:
        begin = self.pos
        if not self.open_tags:
            raise EntityParseError(f"Unexpected end tag at byte offset {self.byte_offset(begin)}")
        end = begin + 2
        while self.char(end) and self.char(end) not in _SPACES and self.char(end) != ">":
            end += 1
        end_tag_name = self.source[begin + 2 : end].lower()
        while self.char(end) and self.char(end) in _SPACES:
            end += 1
        if self.char(end) != ">":
            raise EntityParseError(f"Unclosed end tag at byte offset {self.byte_offset(begin)}")
        open_tag = self.open_tags[-1]
        if end_tag_name and end_tag_name != open_tag.name:
            raise EntityParseError(
                f"Unmatched end tag at byte offset {self.byte_offset(begin)}, "
                f'expected "</{open_tag.name}>", found "</{end_tag_name}>"'
            )
        self.pos = end + 1
        self.open_tags.pop()
        self.close_entity(open_tag)

    def close_entity(self, tag: _OpenTag) -> None:
        length = self.utf16_offset - tag.utf16_offset
        if length == 0:
            return  # Telegram drops empty entities silently
        entity: JsonDict = {
            "type": _ENTITY_TYPE_BY_TAG[tag.name],
            "offset": tag.utf16_offset,
            "length": length,
        }
        if tag.name == "a":
            url = tag.argument or "".join(self.plain[tag.text_index :])
            mention = _MENTION_LINK.fullmatch(url)
            if mention:
                entity = {**entity, "type": "text_mention", "user": {"id": int(mention[1])}}
            else:
                entity["url"] = url
        elif tag.name == "blockquote" and tag.argument == "expandable":
            entity["type"] = "expandable_blockquote"
        elif tag.name == "tg-emoji":
            if not tag.argument.isdigit():
                raise EntityParseError("Invalid custom emoji identifier specified")
            entity["custom_emoji_id"] = tag.argument
        elif tag.name == "code" and tag.argument:
            self.code_languages[id(entity)] = tag.argument
        elif tag.name == "pre":
            entity = self.merge_pre_code(entity)
        self.entities.append(entity)

    def merge_pre_code(self, pre: JsonDict) -> JsonDict:
        """``<pre><code class="language-x">…</code></pre>`` is one pre entity with a language."""
        inner = self.entities[-1] if self.entities else None
        if (
            inner is not None
            and inner["type"] == "code"
            and inner["offset"] == pre["offset"]
            and inner["length"] == pre["length"]
        ):
            self.entities.pop()
            language = self.code_languages.get(id(inner))
            if language:
                return {**pre, "language": language}
        return pre


def _tag_argument(tag_name: str, attribute_name: str, value: str) -> str:
    if tag_name == "a" and attribute_name == "href":
        return value
    if tag_name == "code" and attribute_name == "class" and value.startswith("language-"):
        return value.removeprefix("language-")
    if tag_name == "span" and attribute_name == "class" and value.startswith("tg-"):
        return value.removeprefix("tg-")
    if tag_name == "tg-emoji" and attribute_name == "emoji-id":
        return value
    return ""


def _decode_entity(source: str, pos: int) -> tuple[str, int] | None:
    """Decode the character reference at ``source[pos] == "&"`` like tdlib does.

    Returns the character and the index after the reference (the ``;`` is optional, as in
    Telegram), or None when there is no valid reference there.
    """
    end = pos + 1
    if source.startswith("#", end):
        end += 1
        hexadecimal = source.startswith("x", end)
        if hexadecimal:
            end += 1
        digits = "0123456789abcdefABCDEF" if hexadecimal else "0123456789"
        digits_start = end
        while end < len(source) and source[end] in digits:
            end += 1
        if end == digits_start or end - digits_start > 8:
            return None
        code_point = int(source[digits_start:end], 16 if hexadecimal else 10)
        if code_point == 0 or code_point >= 0x10FFFF or 0xD800 <= code_point <= 0xDFFF:
            return None
        character = chr(code_point)
    else:
        while end < len(source) and source[end].isascii() and source[end].isalpha():
            end += 1
        named = _NAMED_ENTITIES.get(source[pos + 1 : end])
        if named is None:
            return None
        character = named
    if source.startswith(";", end):
        end += 1
    return character, end


def parse_html(source: str) -> FormattedText:
    """Parse ``source`` in Telegram's HTML parse mode.

    Raises:
        EntityParseError: with Telegram's description of the first problem.
    """
    return _HtmlParser(source).parse()

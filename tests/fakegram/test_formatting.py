"""Telegram's HTML parse mode and command detection, without a server."""

import pytest

from bot.fakegram.formatting import (
    EntityParseError,
    FormattedText,
    find_bot_commands,
    parse_html,
    strip_formatted,
)


def test_all_supported_tags_become_entities() -> None:
    parsed = parse_html(
        "<b>b</b><strong>b</strong><i>i</i><em>i</em><u>u</u><ins>u</ins><s>s</s>"
        "<strike>s</strike><del>s</del><code>c</code><pre>p</pre><blockquote>q</blockquote>"
        '<tg-spoiler>x</tg-spoiler><span class="tg-spoiler">x</span>'
        '<a href="https://t.me">l</a><tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>'
    )

    assert [entity["type"] for entity in parsed.entities] == [
        "bold", "bold", "italic", "italic", "underline", "underline",
        "strikethrough", "strikethrough", "strikethrough", "code", "pre", "blockquote",
        "spoiler", "spoiler", "text_link", "custom_emoji",
    ]  # fmt: skip
    assert parsed.text == "bbiiuussscpqxxl👍"


def test_offsets_are_utf16_and_errors_count_utf8_bytes() -> None:
    parsed = parse_html("🧧 <b>红包</b>")

    assert parsed.entities == [{"type": "bold", "offset": 3, "length": 2}]
    with pytest.raises(EntityParseError, match='"x" at byte offset 5'):
        parse_html("🧧 <x>")


def test_character_references() -> None:
    parsed = parse_html("&lt;&gt;&amp;&quot;&#39;&#x1F9E7;&amp")

    assert parsed.text == "<>&\"'🧧&"


@pytest.mark.parametrize("text", ["a & b", "AT&T", "&nbsp;", "&#0;", "&#xD800;"])
def test_a_bare_ampersand_is_rejected(text: str) -> None:
    with pytest.raises(EntityParseError, match='Character "&"'):
        parse_html(text)


def test_a_bare_ampersand_inside_an_href_is_kept() -> None:
    parsed = parse_html('<a href="https://example.com/?a=1&b=2">link</a>')

    assert parsed.entities[0]["url"] == "https://example.com/?a=1&b=2"


def test_pre_with_code_language_is_one_entity() -> None:
    parsed = parse_html('<pre><code class="language-python">x = 1</code></pre>')

    assert parsed.entities == [{"type": "pre", "offset": 0, "length": 5, "language": "python"}]


def test_user_links_become_text_mentions() -> None:
    parsed = parse_html('<a href="tg://user?id=1001">Alice</a>')

    assert parsed.entities == [
        {"type": "text_mention", "offset": 0, "length": 5, "user": {"id": 1001}}
    ]


def test_expandable_blockquote() -> None:
    parsed = parse_html("<blockquote expandable>long</blockquote>")

    assert parsed.entities[0]["type"] == "expandable_blockquote"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<b", "Unclosed start tag at byte offset 0"),
        ("</b>", "Unexpected end tag at byte offset 0"),
        ("<b>x</b", "Unclosed end tag at byte offset 4"),
        ("<span>x</span>", 'Tag "span" must have class "tg-spoiler" at byte offset 0'),
        ('<a href="x>y</a>', "Unclosed start tag at byte offset 0"),
        ("<a href>y</a>", 'Expected equal sign in declaration of an attribute of the tag "a"'),
    ],
)
def test_malformed_tags(text: str, message: str) -> None:
    with pytest.raises(EntityParseError, match=message):
        parse_html(text)


def test_tags_are_case_insensitive_and_empty_entities_dropped() -> None:
    assert parse_html("<B>x</b><i></i>") == FormattedText(
        "x", [{"type": "bold", "offset": 0, "length": 1}]
    )


def test_strip_trims_whitespace_and_clips_entities() -> None:
    stripped = strip_formatted(parse_html("\n <b> hi </b> \n"))

    assert stripped == FormattedText("hi", [{"type": "bold", "offset": 0, "length": 2}])


def test_bot_commands_are_found_where_telegram_finds_them() -> None:
    commands = find_bot_commands("/grab@niuniu_test_bot 10 then /rules, not a/b or /x/y")

    assert [(entity["offset"], entity["length"]) for entity in commands] == [(0, 21), (30, 6)]

"""Why a typed amount or a setting is refused, said in the group's language.

The parsers and the settings give a reason code and what the reason shows (``typed``,
``name``, bounds); the shell renders each reason as a message of its own, through the
same ``Replies.reply_error`` that answers every refused command. In English the message
says what the group read before the reasons had codes (``Not an amount: `` and the
parser's English); in Chinese it has no English words but what the admin typed, the
names of settings and the ``bps`` of a rate.
"""

from __future__ import annotations

import re

import pytest

from bot.engine.errors import GameError
from bot.engine.settings import ALIASES, ALL_SETTING_REASONS, SETTING_NAMES, SettingError, Settings
from bot.fakegram.formatting import parse_html, strip_formatted
from bot.money import AMOUNT_REASONS, TOO_LARGE
from bot.telegram.parsing import parse_typed_amount
from tests.helpers.refusals import AMOUNT_REFUSALS, SETTING_REFUSALS
from tests.helpers.telegram import GROUP, message_update, person
from tests.helpers.telegram_shells import RepliesShell

ANN = person(11, "Ann")

#: Typed text with HTML in it: quoted as typed, escaped on its way into the message.
HTML_AMOUNTS = [("<b>&", "'<b>&' is not an amount; write e.g. 20 or 12.50")]
HTML_SETTINGS = [
    ("<i>", "1", "unknown setting '<i>'"),
    ("quick_bets", "5,<b>", "quick_bets: '<b>' is not an amount; write e.g. 20 or 12.50"),
]


def amount_refused(text: str) -> GameError:
    with pytest.raises(GameError) as refused:
        parse_typed_amount(text)
    return refused.value


def setting_refused(error: SettingError) -> GameError:
    """The error the service raises for ``error`` (tests/service check that it does)."""
    return GameError(f"bad_setting.{error.reason}", **error.params)


def setting_error(key: str, value: str) -> SettingError:
    with pytest.raises(SettingError) as refused:
        Settings().changed(key, value)
    return refused.value


def repeated_quick_bets() -> SettingError:
    """The one reason ``/set`` never gives (its parser finds a repeated amount first)."""
    with pytest.raises(SettingError) as refused:
        Settings(quick_bets=(500, 500)).validate()
    return refused.value


def refusals() -> list[tuple[GameError, str]]:
    """Each refusal as the shell is handed it, and the English the group read for it
    before: ``Not an amount: `` or ``Not changed: `` and the parser's text."""
    cases = [
        (amount_refused(text), f"Not an amount: {message}.")
        for text, reason, _, message in AMOUNT_REFUSALS
        if reason != TOO_LARGE  # the shell's own amount_too_large, or the table's limit
    ]
    cases += [
        (amount_refused(text), f"Not an amount: {message}.") for text, message in HTML_AMOUNTS
    ]
    errors = [setting_error(key, value) for key, value, *_ in SETTING_REFUSALS]
    errors += [setting_error(key, value) for key, value, _ in HTML_SETTINGS]
    errors.append(repeated_quick_bets())
    cases += [(setting_refused(error), f"Not changed: {error}.") for error in errors]
    return cases


REFUSALS = refusals()
KEYS = [error.key for error, _ in REFUSALS]


async def said(language: str, error: GameError) -> tuple[str, str]:
    """What a group in ``language`` is told for ``error``: the HTML, and its plain text
    as Telegram parses it (invalid HTML fails here as it would there)."""
    shell = RepliesShell(per_minute=100)
    shell.service.chat_settings[GROUP] = Settings(language=language)
    await shell.replies.reply_error(message_update(GROUP, ANN, "/set x y"), error)
    await shell.settle()
    [sent] = shell.bot.texts
    return sent, strip_formatted(parse_html(sent)).text


def test_every_reason_is_rendered_here() -> None:
    keys = {error.key for error, _ in REFUSALS}
    assert keys == {f"bad_amount.{reason}" for reason in AMOUNT_REASONS} | {
        f"bad_setting.{reason}" for reason in ALL_SETTING_REASONS
    }


@pytest.mark.parametrize(("error", "before"), REFUSALS, ids=KEYS)
async def test_english_says_what_it_said_before(error: GameError, before: str) -> None:
    sent, text = await said("en", error)
    assert text == before
    for value in error.params.values():
        if "<" in value:
            assert value not in sent  # escaped: Telegram shows it as typed


#: Words a Chinese message may show in ASCII letters besides its parameters: the names of
#: settings (``max_bet`` in ``max_below_min``) and the unit of a rate typed in bps.
ASCII_WORDS = {*SETTING_NAMES, *ALIASES, "bps"}


def english_words(text: str, params: dict[str, str]) -> list[str]:
    """Runs of 3 or more ASCII letters in ``text`` (plain text) that are not in
    :data:`ASCII_WORDS`, once each parameter's value (what was typed, a setting's name, a
    list of choices) is taken out."""
    for value in sorted(params.values(), key=len, reverse=True):
        if value:
            text = text.replace(value, " ")
    words = re.findall(r"[A-Za-z_]+", text)
    return [
        word for word in words if sum(c.isalpha() for c in word) >= 3 and word not in ASCII_WORDS
    ]


@pytest.mark.parametrize(("error", "before"), REFUSALS, ids=KEYS)
async def test_chinese_has_no_english_words(error: GameError, before: str) -> None:
    _, english = await said("en", error)
    _, chinese = await said("zh", error)
    assert english_words(english, error.params)  # the check finds English where it is
    assert english_words(chinese, error.params) == [], chinese
    for value in error.params.values():
        assert value in chinese, (value, chinese)  # the same details, in Chinese

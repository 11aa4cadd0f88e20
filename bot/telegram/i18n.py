"""The messages users see, in English and Simplified Chinese: gettext catalogues.

Each language has one catalogue, ``locale/<language>/LC_MESSAGES/messages.po`` next to
this module, managed with Babel (docs/translations.md: extract, update, check). A
message's msgid is its key (``error.not_betting``); the text is the msgstr, English in
``en`` as in any other language. Texts are ``str.format`` templates in Telegram HTML.
Parameters that are amounts of money are given in cents and formatted here with the
group's currency; everything that comes from users (names, settings typed by admins) is
escaped by the caller.

A message whose words change with a number it shows ("1 deck", "6 decks") has plural
forms (``msgid_plural`` repeats the key, as gettext wants one): :func:`translate_plural`
picks the form for the number by the language's ``Plural-Forms`` (English has two forms,
Chinese one).

The catalogues are compiled when this module is imported, in memory: Babel reads each
``.po`` and writes it as a ``.mo`` into a buffer that the standard library's
``GNUTranslations`` loads (a few milliseconds for both). Compiling in the build instead
would need a build hook, and a step to remember after every edit in an editable install,
for ``.mo`` files that could go stale; this way the ``.po`` files are the only form of
the catalogues, in the repository and in the wheel alike (they are package data, found
through ``importlib.resources``), and a broken catalogue stops the bot at start-up.
"""

from __future__ import annotations

import gettext
import io
from collections.abc import Mapping
from importlib import resources
from typing import Any

from babel import Locale
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from bot.engine.settings import LANGUAGES
from bot.money import format_amount

#: The gettext domain: the catalogues' file name.
DOMAIN = "messages"
#: The language of a private chat whose user's app names no language we have, and the
#: one every catalogue falls back to.
DEFAULT_LANGUAGE = "en"

#: Parameters that hold cents; ``translate`` formats them with the currency.
MONEY_PARAMS = frozenset(
    {
        "amount",
        "needed",
        "available",
        "minimum",
        "maximum",
        "pool",
        "held",
        "total",
        "bid",
        "stake",
        "share",
        "fees",
        "rake",
        "rebate",
        "balance",
    }
)


def read_catalogue(language: str) -> Catalog:
    """The catalogue of ``language`` as Babel reads it from its ``.po`` file."""
    po = resources.files(__package__).joinpath("locale", language, "LC_MESSAGES", f"{DOMAIN}.po")
    with po.open("rb") as file:
        return read_po(file, locale=language, domain=DOMAIN, abort_invalid=True)


def compile_catalogue(catalogue: Catalog) -> gettext.GNUTranslations:
    """A catalogue compiled in memory, as gettext reads it from a ``.mo`` file.

    Fuzzy and untranslated messages are left out (so a language falls back to English
    for them, as gettext does).
    """
    compiled = io.BytesIO()
    write_mo(compiled, catalogue)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


class _NoMessage(gettext.NullTranslations):
    """The end of every fallback chain: a key that no catalogue has is a bug in the code,
    to be raised (and caught by the tests), not shown to users as if it were text."""

    def gettext(self, message: str) -> str:
        raise KeyError(message)

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        raise KeyError(msgid1)


def _load_catalogues() -> dict[str, gettext.GNUTranslations]:
    """Every language's compiled catalogue; each falls back to English, and English to
    :class:`_NoMessage`."""
    catalogues = {language: compile_catalogue(read_catalogue(language)) for language in LANGUAGES}
    english = catalogues[DEFAULT_LANGUAGE]
    english.add_fallback(_NoMessage())
    for language, catalogue in catalogues.items():
        if language != DEFAULT_LANGUAGE:
            catalogue.add_fallback(english)
    return catalogues


#: The compiled catalogue of each language a group can choose (``/set language``).
CATALOGUES = _load_catalogues()


def translate(language: str, key: str, currency: str = "", **params: Any) -> str:
    """The message ``key`` in ``language`` (English if missing), with money params formatted."""
    template = CATALOGUES.get(language, CATALOGUES[DEFAULT_LANGUAGE]).gettext(key)
    return template.format(**format_params(params, currency))


def translate_plural(
    language: str, key: str, number: int, currency: str = "", **params: Any
) -> str:
    """The message ``key`` in ``language``, in its plural form for ``number`` (which is not
    a parameter itself: pass it by the name the message shows it under too)."""
    catalogue = CATALOGUES.get(language, CATALOGUES[DEFAULT_LANGUAGE])
    template = catalogue.ngettext(key, key, number)
    return template.format(**format_params(params, currency))


def language_for(language_code: str | None) -> str:
    """The catalogue for a Telegram user's ``language_code`` (an IETF tag such as ``zh``,
    ``zh-hans``, ``zh-CN`` or ``en-US``): the best match among the catalogues, else
    English."""
    if not language_code:
        return DEFAULT_LANGUAGE
    # Babel matches the tag, then its language alone, against the catalogues' names; it
    # only parses a name it matched, so no tag a client sends can make it raise.
    match = Locale.negotiate([language_code], LANGUAGES, sep="-")
    return DEFAULT_LANGUAGE if match is None else str(match)


def format_params(params: Mapping[str, Any], currency: str) -> dict[str, Any]:
    """Format the money parameters (ints in cents) with the currency; others unchanged."""
    return {
        name: format_amount(value, currency)
        if name in MONEY_PARAMS and isinstance(value, int) and not isinstance(value, bool)
        else value
        for name, value in params.items()
    }

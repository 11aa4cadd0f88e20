"""The messages users see, in each language of ``LANGUAGES``: gettext catalogues.

Each language has one catalogue, ``locale/<locale>/LC_MESSAGES/messages.po`` next to
this module (the locale is the language's tag as gettext and Babel write it: ``zh_Hant``
for ``zh-Hant``), managed with Babel (docs/translations.md: extract, update, check). A
message's msgid is its key (``error.not_betting``); the text is the msgstr, English in
``en`` as in any other language. Texts are ``str.format`` templates in Telegram HTML.
Parameters that are amounts of money are given in cents and formatted here with the
group's currency; everything that comes from users (names, settings typed by admins) is
escaped by the caller.

A message whose words change with a number it shows ("1 deck", "6 decks") has plural
forms (``msgid_plural`` repeats the key, as gettext wants one): :func:`translate_plural`
picks the form for the number by the language's ``Plural-Forms`` (English has two forms;
Chinese, Vietnamese and Malay one).

The catalogues are compiled when this module is imported, in memory: Babel reads each
``.po`` and writes it as a ``.mo`` into a buffer that the standard library's
``GNUTranslations`` loads (a few milliseconds each). Compiling in the build instead
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

from babel import Locale, UnknownLocaleError
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


def locale_name(language: str) -> str:
    """A language's tag as gettext and Babel name its catalogue: ``zh_Hant`` for ``zh-Hant``."""
    return language.replace("-", "_")


def read_catalogue(language: str) -> Catalog:
    """The catalogue of ``language`` as Babel reads it from its ``.po`` file."""
    locale = locale_name(language)
    po = resources.files(__package__).joinpath("locale", locale, "LC_MESSAGES", f"{DOMAIN}.po")
    with po.open("rb") as file:
        return read_po(file, locale=locale, domain=DOMAIN, abort_invalid=True)


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
    ``zh-hans``, ``zh-TW``, ``vi`` or ``en-US``): the language in the tag's script, else
    the language alone, else English. Chinese in Traditional script (``zh-Hant``, and
    ``zh-TW``, ``zh-HK``, ``zh-MO``, whose script Babel infers) reads ``zh-Hant``; any
    other Chinese reads ``zh``, Simplified."""
    if not language_code:
        return DEFAULT_LANGUAGE
    tag = language_code.replace("_", "-")
    parts = tag.split("-")
    script = next((part for part in parts[1:] if len(part) == 4 and part.isalpha()), None)
    candidates = [parts[0]]
    if script or (script := _likely_script(tag)):
        candidates.insert(0, f"{parts[0]}-{script}")
    known = {code.casefold(): code for code in LANGUAGES}
    return next(
        (known[tag.casefold()] for tag in candidates if tag.casefold() in known),
        DEFAULT_LANGUAGE,
    )


def _likely_script(language_code: str) -> str | None:
    """The script a tag that names none is written in, as Babel's data says (``Hant`` for
    ``zh-TW``); None when Babel cannot read the tag or knows no script for it."""
    try:
        script = Locale.parse(language_code, sep="-").script
    except (UnknownLocaleError, ValueError, TypeError):
        return None
    return script or None


def format_params(params: Mapping[str, Any], currency: str) -> dict[str, Any]:
    """Format the money parameters (ints in cents) with the currency; others unchanged."""
    return {
        name: format_amount(value, currency)
        if name in MONEY_PARAMS and isinstance(value, int) and not isinstance(value, bool)
        else value
        for name, value in params.items()
    }

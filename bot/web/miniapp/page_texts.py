"""The words of the Mini App's page, in the user's language: every text the page shows
is a message of the bot's catalogues (docs/translations.md), sent to the page as it
starts (``GET /miniapp/api/texts``).

The page names a message by its key, quoted, in its own files (``static/*.js`` and
``*.html``): ``t("miniapp.no_bets")`` in JS, ``data-t="miniapp.bets"`` (and
``data-t-placeholder``, ``data-t-label``, ``data-t-title``) in HTML. The keys are
``miniapp.*``, the page's own, and ``game.*``, the games as the bot names them. One
pattern (:data:`PAGE_KEY`) finds them for everyone: the server, which sends exactly
those; Babel's extraction (:func:`extract`, in ``babel.cfg``), which puts them in every
catalogue; and the tests. So a new text is one use in the page and one catalogue entry.

Which language: the user's app's (``language_code`` of ``initData``), read through the
catalogues' ``language_for``, as the bot's private chats are. This layer reads no
catalogue itself (the shell, above it, owns them): it is given :class:`Catalogues`.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Protocol

STATIC = Path(__file__).parent / "static"
#: A message key as the page's files write it: quoted, ``miniapp.`` or ``game.``, dotted.
PAGE_KEY = re.compile(r"""["']((?:miniapp|game)(?:\.[a-z0-9_]+)+)["']""")
#: The page's files that may name keys.
PAGE_FILES = ("*.js", "*.html")


class Catalogues(Protocol):
    """The bot's catalogues, as the page reads them (the shell's ``MiniAppCatalogues``)."""

    def language_for(self, language_code: str | None) -> str:
        """The catalogue's language for a Telegram ``language_code`` (English if none fits)."""
        ...

    def message(self, language: str, key: str) -> str:
        """The text of ``key`` in ``language`` (its ``{name}`` placeholders unfilled)."""
        ...


def keys_in(text: str) -> Iterator[tuple[int, str]]:
    """The message keys a page file names, with their line numbers."""
    for number, line in enumerate(text.splitlines(), start=1):
        for match in PAGE_KEY.finditer(line):
            yield number, match[1]


def page_keys(static: Path = STATIC) -> frozenset[str]:
    """Every key the page's files name."""
    files = sorted(path for pattern in PAGE_FILES for path in static.glob(pattern))
    return frozenset(key for path in files for _, key in keys_in(path.read_text("utf-8")))


def extract(
    fileobj: IO[bytes],
    keywords: Collection[str],
    comment_tags: Collection[str],
    options: Mapping[str, Any],
) -> Iterator[tuple[int, str, str, list[str]]]:
    """Babel's extraction method for the page's files (``babel.cfg``)."""
    for number, key in keys_in(fileobj.read().decode("utf-8")):
        yield number, "gettext", key, []


class PageTexts:
    """The page's texts in each language, read once per language; the default one's at
    once, so that a key no catalogue has stops the app as it is built (``KeyError``)."""

    def __init__(self, catalogues: Catalogues, keys: Iterable[str]) -> None:
        self._catalogues = catalogues
        self._keys = sorted(keys)
        self._texts: dict[str, dict[str, str]] = {}
        self.of(None)

    def of(self, language_code: str | None) -> tuple[str, dict[str, str]]:
        """The language for ``language_code`` and the page's texts in it."""
        language = self._catalogues.language_for(language_code)
        texts = self._texts.get(language)
        if texts is None:
            message = self._catalogues.message
            texts = self._texts[language] = {key: message(language, key) for key in self._keys}
        return language, texts

"""The Mini App's page speaks the user's language: every text it shows is a message of
the bot's catalogues (``bot.web.miniapp.page_texts``), in every language, sent by
``GET /miniapp/api/texts`` for the ``language_code`` of the user's app."""

from __future__ import annotations

import string
from collections.abc import AsyncIterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.engine.settings import LANGUAGES
from bot.service.game import GameService
from bot.store.db import Database
from bot.telegram.i18n import CATALOGUES, locale_name, read_catalogue
from bot.telegram.miniapp_catalogues import MiniAppCatalogues
from bot.web.miniapp import build_miniapp
from bot.web.miniapp.app import SIGN_IN_REFUSALS
from bot.web.miniapp.moves import MiniAppBot
from bot.web.miniapp.page_texts import PAGE_FILES, STATIC, PageTexts, keys_in, page_keys
from tests.helpers.miniapp import TOKEN
from tests.helpers.telegram_shells import GameShell

PAGE_KEYS = page_keys()


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_the_page_names_its_texts_in_its_script_and_its_html() -> None:
    script = {key for _, key in keys_in((STATIC / "app.js").read_text("utf-8"))}
    html = {key for _, key in keys_in((STATIC / "index.html").read_text("utf-8"))}
    assert "miniapp.phase.betting" in script and "game.envelope68" in script
    assert "miniapp.dealer" in html and "miniapp.play.bet_field" in html
    every_file = {
        key
        for pattern in PAGE_FILES
        for path in STATIC.glob(pattern)
        for _, key in keys_in(path.read_text("utf-8"))
    }
    assert script | html <= every_file == PAGE_KEYS
    # What is no key is not taken for one: a dotted word that is not quoted, another prefix.
    assert [key for _, key in keys_in('round.game; "miniapp"; "board.title"; `miniapp.x`')] == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_key_the_page_uses_is_in_every_catalogue_with_englishs_placeholders(
    language: str,
) -> None:
    english = {message.id: message.string for message in read_catalogue("en") if message.id}
    catalogue = read_catalogue(language)
    for key in sorted(PAGE_KEYS):
        message = catalogue.get(key)
        assert message is not None, f"{locale_name(language)} lacks {key}"
        assert message.string and not message.fuzzy, f"{language}: {key} is not translated"
        assert isinstance(message.string, str), f"{key} is a plural message: the page has none"
        assert placeholders(message.string) == placeholders(str(english[key])), (language, key)


class VisibleText(HTMLParser):
    """The words index.html shows by itself: text outside scripts, and the attributes a
    person reads."""

    def __init__(self) -> None:
        super().__init__()
        self.words: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._skip += tag in ("script", "style")
        for name, value in attrs:
            if name in ("placeholder", "aria-label", "title", "alt") and value:
                self.words.append(value)

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self._skip and data.strip():
            self.words.append(data.strip())


def test_the_page_has_no_words_of_its_own_outside_the_catalogues() -> None:
    shown = VisibleText()
    shown.feed((STATIC / "index.html").read_text("utf-8"))
    assert set(shown.words) <= {"–"}, shown.words  # a dash stands for "nothing yet"


def test_a_key_no_catalogue_has_stops_the_app_as_it_is_built() -> None:
    with pytest.raises(KeyError, match=r"miniapp\.no_such_text"):
        PageTexts(MiniAppCatalogues(), [*PAGE_KEYS, "miniapp.no_such_text"])


def test_every_sign_in_refusal_has_words_in_the_page() -> None:
    assert {f"miniapp.refused.{reason}" for reason in SIGN_IN_REFUSALS} <= PAGE_KEYS


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    service = GameService(Database.from_url(f"sqlite+aiosqlite:///{tmp_path / 'unused.db'}"))
    shell = GameShell(service)
    root = web.Application()
    root.add_subapp(
        "/miniapp/",
        build_miniapp(
            service=service,
            bots=[MiniAppBot(TOKEN, shell.game.members.is_member, shell.game.miniapp_moves)],
            round_texts=shell.game.miniapp_rounds,
            clock=lambda: 0.0,
            catalogues=MiniAppCatalogues(),
            member_seconds=60.0,
        ),
    )
    test_client = TestClient(TestServer(root))
    await test_client.start_server()
    try:
        yield test_client
    finally:
        await test_client.close()


@pytest.mark.parametrize(
    ("language_code", "language"),
    [
        ("zh-hans", "zh"),
        ("zh-TW", "zh-Hant"),
        ("vi", "vi"),
        ("ms-MY", "ms"),
        ("en-US", "en"),
        ("pt-BR", "en"),  # a language the bot does not speak: English
        ("", "en"),
    ],
)
async def test_the_page_gets_its_texts_in_the_language_of_the_users_app(
    client: TestClient[web.Request, web.Application], language_code: str, language: str
) -> None:
    response = await client.get("/miniapp/api/texts", params={"language_code": language_code})
    assert response.status == 200
    answer = await response.json()
    assert answer["language"] == language
    assert set(answer["texts"]) == PAGE_KEYS
    catalogue = CATALOGUES[language]
    assert answer["texts"] == {key: catalogue.gettext(key) for key in PAGE_KEYS}
    if language != "en":  # in the language itself, not English
        english = CATALOGUES["en"]
        assert answer["texts"]["miniapp.chips"] != english.gettext("miniapp.chips")

"""The bot's catalogues as the Mini App's page reads them (``bot.web.miniapp.page_texts``):
the page speaks the language of the user's app, as the bot does in a private chat."""

from __future__ import annotations

from bot.telegram.i18n import CATALOGUES, DEFAULT_LANGUAGE, language_for


class MiniAppCatalogues:
    """``bot.web.miniapp.page_texts.Catalogues`` over ``bot.telegram.i18n``."""

    def language_for(self, language_code: str | None) -> str:
        return language_for(language_code)

    def message(self, language: str, key: str) -> str:
        """The text of ``key`` (English where ``language`` lacks it; ``KeyError`` where
        no catalogue has it), its placeholders left for the page to fill."""
        return CATALOGUES.get(language, CATALOGUES[DEFAULT_LANGUAGE]).gettext(key)

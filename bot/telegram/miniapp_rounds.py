"""The bot's texts the Mini App shows besides the live round, made as the group's are:
a finished round's results (the same text, the same picture and the same dealer's cards
turning over as the group gets, ``RoundPictures``), and the answers to ``/stats``,
``/rules``, ``/odds`` and ``/verify`` by the same functions as the commands, in the
group's language, as plain text (the page shows no markup)."""

from __future__ import annotations

import logging

from bot.engine.round import Round, RoundSettled, RoundVoided
from bot.engine.settlement import Result
from bot.engine.verification import Mismatch, NothingDealt, ShoeSecret, Verified
from bot.rules.ruleset import LEGACY_NAMES, RULESETS
from bot.service.game import Person
from bot.telegram.handlers.base import ShellParts
from bot.telegram.handlers.stats import odds_text, stats_text
from bot.telegram.handlers.verify import recompute
from bot.telegram.messenger import plain_text
from bot.telegram.pictures import RoundPictures
from bot.telegram.views import Views
from bot.web.miniapp.past_rounds import Checked, GroupWords, RoundResults

log = logging.getLogger(__name__)

#: What each answer of ``/verify`` is, as the page tells them apart.
VERIFICATION_KINDS = {
    Verified: "verified",
    Mismatch: "mismatch",
    NothingDealt: "nothing_dealt",
    ShoeSecret: "shoe_secret",
}


class MiniAppRounds:
    """``bot.web.miniapp.past_rounds.RoundTexts`` over the shell's collaborators."""

    def __init__(self, parts: ShellParts) -> None:
        self.parts = parts

    async def results(self, state: Round, ended: RoundSettled | RoundVoided) -> RoundResults:
        """The results as the group got them (``ResultsMessage``): the text, and for a
        settled round the picture and the dealer's cards; a picture that cannot be drawn
        leaves the text alone, as in the group."""
        people = await self.parts.people.names(state.participants)
        text = plain_text(Views(state.settings).results(state, ended, people))
        if not isinstance(ended, RoundSettled):
            return RoundResults(text, False, None, None)
        pictures = RoundPictures(state, ended, people)
        try:
            picture: bytes | None = await pictures.render_results()
        except Exception:  # a picture is a nicety; the results are not
            log.exception("round %s: drawing its results for the Mini App failed", state.id)
            picture = None
        return RoundResults(text, True, picture, pictures.reveal())

    async def stats(self, chat_id: int, player: Person) -> str:
        """``/stats`` of ``player``."""
        return plain_text(await stats_text(self.parts, chat_id, player))

    async def rules(self, chat_id: int) -> tuple[str, str]:
        """``/rules`` and ``/odds`` of the group's table."""
        views = await self.parts.chats.views(chat_id)
        return plain_text(views.rules()), plain_text(await odds_text(views))

    async def verify(self, state: Round) -> Checked:
        """``/verify`` of a finished round."""
        result = await recompute(self.parts.service, state)
        people = await self.parts.people.names(state.participants)
        views = await self.parts.chats.views(state.chat_id)
        text = views.verification(result, people)
        kind = VERIFICATION_KINDS[type(result)]
        return Checked(isinstance(result, Verified), kind, plain_text(text))

    async def words(self, chat_id: int) -> GroupWords:
        """Each result's and each game's name, and the dealer's role, as the group says
        them."""
        views = await self.parts.chats.views(chat_id)
        return GroupWords(
            results={result: plain_text(views.t(f"result.{result}")) for result in Result},
            games={name: plain_text(views.game(name)) for name in (*RULESETS, *LEGACY_NAMES)},
            dealer=plain_text(views.t("picture.dealer")),
        )

"""A round's results message: the text, or a picture with the text as its caption,
after the dealer's cards turning over on a card table. The pictures are a nicety that
never holds the results back."""

from __future__ import annotations

import asyncio
import html
import logging
from functools import partial

from bot.engine.round import Round, RoundSettled, RoundVoided
from bot.pictures.model import DealerReveal
from bot.service.game import Person
from bot.telegram.budget import ROOM_KEPT_FOR_ROUNDS, Priority
from bot.telegram.messenger import MAX_CAPTION_LENGTH, Messenger, plain_text
from bot.telegram.pictures import DRAWING, PICTURES_ON, RoundPictures
from bot.telegram.retries import ONCE
from bot.telegram.views import Views

log = logging.getLogger(__name__)

#: How long the results' picture may take to draw before the text goes alone.
DRAW_SECONDS = 10.0
#: How long the dealer's turning cards may take, drawn and sent, before the results go.
REVEAL_SECONDS = 10.0
#: How long the results' picture may wait for the drawing process to start it (the
#: pictures of other groups' rounds that ended together drawn first) before the text goes
#: alone.
PICTURE_WAIT_SECONDS = 0.2


def caption_length(text: str) -> int:
    """How long Telegram counts an HTML text as users see it: in UTF-16 code units (an
    emoji counts 2), as its 1024 characters of a caption are counted."""
    return len(plain_text(text).encode("utf-16-le")) // 2


class ResultsMessage:
    """Sends a round's results through the messenger (see ``send``)."""

    def __init__(self, messenger: Messenger) -> None:
        self.messenger = messenger

    async def send(
        self, state: Round, ended: RoundSettled | RoundVoided, people: dict[int, Person]
    ) -> None:
        """The results as text, or (``pictures on``, a settled round) as a picture with the
        text as its caption, after the dealer's cards turning over on a card table.

        A caption holds at most ``MAX_CAPTION_LENGTH`` characters: longer results (many
        players) go out as the picture with the title as its caption, then the whole text
        as before. The pictures are a nicety and never hold the results back: none is
        drawn while the drawing process is ``PICTURE_WAIT_SECONDS`` behind; a picture
        that cannot be drawn in ``DRAW_SECONDS`` or does not go out (refused, or failing
        on the way for as long as the messenger tries) leaves the text alone; the turning
        cards are tried once, for ``REVEAL_SECONDS`` at most. The results count as
        delivered once the text went out (the lease around this): a text that never
        reached Telegram fails the whole, which is sent again once the lease ran out (a
        crash in between repeats what had gone out, the animation too)."""
        views = Views(state.settings)
        text = views.results(state, ended, people)
        # "Same again" goes on the message that ends the results: the text, or the
        # picture when the text is its caption.
        markup = views.results_keyboard(state, ended)
        chat_id = state.chat_id
        send_text = partial(
            self.messenger.send, chat_id, text, markup, priority=Priority.RESULTS, round_id=state.id
        )
        if isinstance(ended, RoundVoided) or state.settings.pictures != PICTURES_ON:
            await send_text()
            return
        if DRAWING.wait_seconds > PICTURE_WAIT_SECONDS:
            # Many rounds ended together: the results are not held back for a picture.
            await send_text()
            return
        pictures = RoundPictures(state, ended, people)
        # The turning cards are a show: only when the group's minute has room for them
        # besides the results and the next round's board, and the bot's rate is not tight
        # (they would go before other groups' results and boards).
        room = (
            self.messenger.group_sends.room(chat_id) > ROOM_KEPT_FOR_ROUNDS
            and not self.messenger.rate.tight
        )
        reveal = pictures.reveal() if room else None
        if reveal is not None:
            await self._show_reveal(state, pictures, reveal)
        try:
            picture = await asyncio.wait_for(pictures.render_results(), DRAW_SECONDS)
        except Exception:  # a picture is a nicety; the results are not
            log.exception("round %s: drawing its results failed", state.id)
            await send_text()
            return
        fits = caption_length(text) <= MAX_CAPTION_LENGTH
        caption = text if fits else views.t("picture.caption_short", round_id=state.id)
        sent = await self.messenger.send_media(
            chat_id,
            "photo",
            picture,
            "results.png",
            caption,
            markup if fits else None,
            priority=Priority.RESULTS,
            round_id=state.id,
        )
        if sent is None or not fits:
            await send_text()

    async def _show_reveal(
        self, state: Round, pictures: RoundPictures, reveal: DealerReveal
    ) -> None:
        """The dealer's cards turning over: drawn and sent in ``REVEAL_SECONDS`` at most,
        tried once; whatever goes wrong, the results follow."""

        async def show() -> None:
            animation = await pictures.render_reveal(reveal)
            await self.messenger.send_media(
                state.chat_id,
                "animation",
                animation,
                "dealer.gif",
                html.escape(reveal.caption),
                priority=Priority.RESULTS,
                round_id=state.id,
                retrying=ONCE,
            )

        try:
            await asyncio.wait_for(show(), REVEAL_SECONDS)
        except TimeoutError:
            log.warning("round %s: the dealer's cards took too long; results without", state.id)
        except Exception:
            log.exception("round %s: drawing the dealer's cards failed", state.id)

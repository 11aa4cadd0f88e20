"""``/verify N``: recompute a finished round's envelope split or card deal from its
revealed seed and the client seeds mixed into it, so that anyone can check the bot dealt
what it had committed to. The computation is the engine's (``verify_round``), shared with
the command line. ``/seed``: a player's own client seed, mixed into every deal they take
part in (``bot.rules.fairness``)."""

from __future__ import annotations

from typing import Any

from telegram import Update
from telegram.constants import ChatType

from bot.engine.errors import GameError
from bot.engine.round import Round
from bot.engine.verification import RevealedShoe, Verification, verify_round
from bot.rules.fairness import CLIENT_SEED_MAX
from bot.service.game import GameService
from bot.telegram.handlers.base import ShellParts, already_done, sender
from bot.telegram.handlers.info import private_language
from bot.telegram.i18n import translate
from bot.telegram.parsing import MAX_ROUND_ID, ascii_number


async def recompute(service: GameService, state: Round) -> Verification:
    """A finished round's deal recomputed from its revealed seed, or its shoe's once the
    shoe is replaced (``/verify``; the Mini App's too)."""
    assert not state.phase.is_open, "an open round's seed is secret"
    revealed = None
    if state.shoe is not None:
        shoe = await service.shoe(state.shoe.id)
        assert shoe is not None
        if shoe.seed is not None:
            revealed = RevealedShoe(shoe.seed, shoe.decks)
    return verify_round(state, revealed)


class VerifyHandlers:
    """``/verify`` and ``/seed``."""

    def __init__(self, parts: ShellParts) -> None:
        self.parts = parts
        self.service = parts.service

    async def verify(self, update: Update, context: Any) -> None:
        """``/verify N``: recompute round N's deal from its revealed seed (or its shoe's)."""
        chat_id, _, _ = sender(update)
        args: list[str] = context.args or []
        round_id = ascii_number(args[0].lstrip("#"), MAX_ROUND_ID) if args else None
        if round_id is None:
            raise GameError("bad_round_number")
        state = await self.service.round(round_id)
        if state is None or state.chat_id != chat_id:
            raise GameError("round_not_found", round_id=round_id)
        if state.phase.is_open:
            raise GameError("round_not_finished", round_id=round_id)
        result = await recompute(self.service, state)
        people = await self.parts.people.names(state.participants)
        views = await self.parts.chats.views(chat_id)
        self.parts.replies.reply(update, views.verification(result, people))

    async def seed(self, update: Update, context: Any) -> None:
        """``/seed TEXT``: set your client seed (one for every group); ``/seed`` alone shows
        it. Refused with the rule (nothing changes) unless TEXT is 1-64 of A-Z a-z 0-9 _ . -."""
        chat_id, person, update_id = sender(update)
        args: list[str] = context.args or []
        params: dict[str, Any] = {"most": CLIENT_SEED_MAX}
        if args:
            seed = await self.service.set_client_seed(person, " ".join(args), update_id=update_id)
            if seed is None:
                already_done(self.parts, update)
                return
            key = "seed.set"
            params["seed"] = seed
        else:
            current = await self.service.client_seed(person.id)
            key = "seed.none"
            if current is not None:
                key = "seed.current"
                params["seed"] = current
        chat = update.effective_chat
        if chat is not None and chat.type == ChatType.PRIVATE:
            text = translate(private_language(update), key, **params)
        else:
            text = await self.parts.chats.text(chat_id, key, **params)
        self.parts.replies.reply(update, text)

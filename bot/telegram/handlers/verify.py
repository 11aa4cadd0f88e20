"""``/verify N``: recompute a finished round's envelope split or card deal from its
revealed seed, so that anyone can check the bot dealt what it had committed to."""

from __future__ import annotations

from typing import Any

from telegram import Update

from bot.engine.errors import GameError
from bot.engine.round import Round
from bot.money import format_amount
from bot.rules.split import commitment
from bot.telegram.handlers.base import ShellParts, sender
from bot.telegram.parsing import MAX_ROUND_ID, ascii_number
from bot.telegram.views import Views, display_name


class VerifyHandlers:
    """``/verify``."""

    def __init__(self, parts: ShellParts) -> None:
        self.parts = parts
        self.service = parts.service

    async def verify(self, update: Update, context: Any) -> None:
        """``/verify N``: recompute round N's split from its revealed seed."""
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
        views = await self.parts.chats.views(chat_id)
        reply = self.parts.replies.reply
        seed = state.seed.hex()
        if not state.shares:
            if state.shoe is not None:  # nothing was dealt; the shoe's seed stays secret
                reply(update, views.t("verify.no_deal_shoe", round_id=round_id))
            else:
                reply(update, views.t("verify.no_split", round_id=round_id, seed=seed))
            return
        if not state.ruleset.uses_grabs:
            await self._verify_cards(update, state, views)
            return
        count, total = len(state.shares), sum(state.shares)
        dealt = state.ruleset.deal(state.seed, count, mean_share=state.settings.envelope_mean_share)
        matches = commitment(state.seed) == state.commitment and state.shares == dealt
        if not matches:
            reply(update, views.t("verify.mismatch", round_id=round_id))
            return
        people = await self.parts.people.names(state.participants)
        # One participant a line: a long round's message can then be split between lines.
        grabbed = "".join(
            f"\n• {display_name(g.user_id, people)} {views.money(g.amount)}" for g in state.grabs
        )
        reply(
            update,
            views.t_plural(
                "verify.ok",
                count,
                round_id=round_id,
                seed=seed,
                count=count,
                total=total,
                total_plain=format_amount(total),
                grabbed=grabbed,
                shares=" ".join(views.money(share) for share in state.shares),
            ),
        )

    async def _verify_cards(self, update: Update, state: Round, views: Views) -> None:
        """Recompute a card round's deal from its seed, or its shoe's once revealed."""
        reply = self.parts.replies.reply
        count = len(state.shares)
        first, last = state.cards_dealt()
        offset = first - 1
        seed = state.seed
        decks = 1
        if state.shoe is not None:
            shoe = await self.service.shoe(state.shoe.id)
            assert shoe is not None
            if shoe.seed is None:
                reply(
                    update,
                    views.t(
                        "verify.shoe_secret",
                        round_id=state.id,
                        shoe_id=shoe.id,
                        commitment=shoe.commitment,
                        first=first,
                        last=last,
                    ),
                )
                return
            seed, decks = shoe.seed, shoe.decks
        dealt = state.ruleset.deal(
            seed, count, mean_share=state.settings.envelope_mean_share, offset=offset
        )
        if commitment(seed) != state.commitment or state.shares != dealt:
            reply(update, views.t("verify.mismatch", round_id=state.id))
            return
        people = await self.parts.people.names(state.participants)
        names = [display_name(bet.user_id, people) for bet in state.bets]
        if state.dealer_id is None:
            names.append(views.t("results.house_name"))
        else:
            names.append(display_name(state.dealer_id, people))
        hands = "".join(
            f"\n• {name}: {views.dealt(state.ruleset.evaluate(outcome))}"
            for name, outcome in zip(names, dealt, strict=True)
        )
        reply(
            update,
            views.t_plural(
                "verify.cards_ok",
                decks,
                round_id=state.id,
                seed=seed.hex(),
                decks=decks,
                first=first,
                last=last,
                hands=hands,
            ),
        )

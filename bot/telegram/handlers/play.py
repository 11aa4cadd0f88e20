"""Playing a round: /newround, /bid, /bet, /autobet, bare numbers, board and results
buttons."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from telegram import Update

from bot.engine.errors import GameError
from bot.engine.round import BetCancelled, BetPlaced, BidPlaced, Grabbed, Phase
from bot.money import parse_amount
from bot.service.game import AutobetChange, CommandResult
from bot.telegram.handlers.base import ShellParts, already_done, amount_argument, sender
from bot.telegram.lookups import ChatSettings, person_of
from bot.telegram.parsing import parse_typed_amount
from bot.telegram.views import ButtonPress

#: Refusals not worth a reply when someone merely typed a number in the chat.
QUIET_FOR_BARE_NUMBERS = frozenset({"no_round", "not_bidding", "not_betting", "window_closed"})


class PlayHandlers:
    """Round commands: each goes to the service, the outcome is published to the group,
    and the player gets a short confirmation (a toast for a button)."""

    def __init__(self, parts: ShellParts) -> None:
        self.parts = parts
        self.service = parts.service

    async def newround(self, update: Update, context: Any) -> None:
        """``/newround``: start a round in an open group."""
        chat_id, person, update_id = sender(update)
        result = await self.service.start_round(chat_id, actor=person, update_id=update_id)
        self.parts.progress.publish(chat_id, result)

    async def bid(self, update: Update, context: Any) -> None:
        """``/bid AMOUNT``: bid for dealer."""
        await self._play(update, self.service.bid, amount_argument(context, "/bid 500"))

    async def bet(self, update: Update, context: Any) -> None:
        """``/bet AMOUNT``: bet, change the bet, or cancel it with 0."""
        amount = await self._bet_amount(update, context, "/bet 20")
        await self._play(update, self.service.bet, amount)

    async def _bet_amount(self, update: Update, context: Any, example: str) -> int:
        """The amount of a bet a command was given (``/bet``, ``/autobet``)."""
        args: list[str] = context.args or []
        if not args:
            raise GameError("amount_missing", example=example)
        return await bet_amount(self.parts, sender(update)[0], args[0])

    async def autobet(self, update: Update, context: Any) -> None:
        """``/autobet AMOUNT``: keep a bet every round; ``/autobet off`` (or 0) stops it;
        ``/autobet`` alone shows it."""
        chat_id, person, update_id = sender(update)
        chats = self.parts.chats
        args: list[str] = context.args or []
        if not args:
            current = await self.service.autobet(chat_id, person.id)
            if current is None:
                text = await chats.text(chat_id, "answer.autobet_none")
            elif current.once:
                text = await chats.text(chat_id, "answer.autobet_once", amount=current.amount)
            else:
                text = await chats.text(chat_id, "answer.autobet_is", amount=current.amount)
            self.parts.replies.reply(update, text)
            return
        off = args[0].casefold() == "off"
        amount = 0 if off else await self._bet_amount(update, context, "/autobet 20")
        change = await self.service.set_autobet(chat_id, person, amount, update_id=update_id)
        if change is None:
            already_done(self.parts, update)
            return
        if change.placed is not None:
            self.parts.progress.publish(chat_id, change.placed)
        self.parts.replies.reply(update, await autobet_answer(chats, chat_id, person.id, change))

    async def bare_number(self, update: Update, context: Any) -> None:
        """A bare number is a bid during bidding and a bet during betting (as in the seed);
        at any other time it is just a number in the chat."""
        assert update.effective_message is not None and update.effective_chat is not None
        try:
            amount = parse_amount(update.effective_message.text or "")
        except ValueError:
            return
        # A cheap look first: most numbers in a chat are not stakes, and a command takes
        # the database's one writer.
        phase = await self.service.current_phase(update.effective_chat.id)
        if phase not in (Phase.BIDDING, Phase.BETTING):
            return
        try:
            await self._play(update, self.service.stake, amount, confirm=False)
        except GameError as error:
            if error.key not in QUIET_FOR_BARE_NUMBERS:
                raise

    async def text(self, update: Update, context: Any) -> None:
        """Other group text: remember the sender, so that admins can name them by
        @username (the service writes only users it has not stored as they are)."""
        if update.effective_user is not None:
            await self.service.note_people([person_of(update.effective_user)])

    async def button(self, update: Update, context: Any) -> None:
        """A press on a board button: bid, bet, cancel or grab, for the round it names."""
        query = update.callback_query
        assert query is not None
        press = ButtonPress.decode(query.data or "")
        if press is None or update.effective_chat is None:
            raise GameError("bad_button")
        round_id = press.round_id
        if query.message is not None and press.action != "again":
            # Before the command, which may refuse it (the round over): a message that is
            # not the round's board is taken down either way.
            self.parts.progress.board.pressed(round_id, query.message.message_id)
        if press.action == "bid":
            await self._play(update, self.service.bid, press.amount, round_id=round_id)
        elif press.action == "bet":
            await self._play(update, self.service.bet, press.amount, round_id=round_id)
        elif press.action == "cancel":
            await self._play(update, self.service.bet, 0, round_id=round_id)
        elif press.action == "again":
            await self._same_again(update, round_id)
        else:
            await self._play(update, self.service.grab, round_id=round_id)

    async def _same_again(self, update: Update, round_id: int) -> None:
        """The results' "same again": the presser's bet of that round, now if the round
        takes bets, else kept for the next round's betting."""
        chat_id, person, update_id = sender(update)
        chats = self.parts.chats
        again = await self.service.same_again(chat_id, person, round_id, update_id=update_id)
        if again is None:
            already_done(self.parts, update)
        elif again.placed is not None:
            self.parts.progress.publish(chat_id, again.placed)
            await self._confirm(update, chat_id, again.placed)
        else:
            text = await chats.text(chat_id, "answer.same_again_next", amount=again.amount)
            self.parts.replies.reply(update, text)

    async def _play(
        self,
        update: Update,
        command: Callable[..., Awaitable[CommandResult]],
        *args: Any,
        confirm: bool = True,
        **options: Any,
    ) -> None:
        """Run a player's round command, tell the group, and confirm it to the player
        (a bare number is confirmed by the board alone: the chat is typing numbers)."""
        chat_id, person, update_id = sender(update)
        result = await command(chat_id, person, *args, update_id=update_id, **options)
        self.parts.progress.publish(chat_id, result)
        if confirm or update.callback_query is not None:
            await self._confirm(update, chat_id, result)

    async def _confirm(self, update: Update, chat_id: int, result: CommandResult) -> None:
        chats = self.parts.chats
        if result.duplicate:
            already_done(self.parts, update)
            return
        # Asked first so that an unsent text is not written; ``confirm`` asks again,
        # as the text's lookup may have let another answer take the slot.
        if self.parts.replies.will_confirm(update):
            text = await confirmation(chats, chat_id, result)
            if text is not None:
                self.parts.replies.confirm(update, text)


async def bet_amount(parts: ShellParts, chat_id: int, text: str) -> int:
    """A bet's amount as typed, in cents; ``GameError`` as ``parse_typed_amount`` says,
    but for an amount beyond what anyone may type the table's largest bet, the limit that
    matters (``/bet``, ``/autobet``, the Mini App)."""
    try:
        return parse_typed_amount(text)
    except GameError as error:
        if error.key != "amount_too_large":
            raise
        state = await parts.service.current_round(chat_id)
        settings = state.settings if state is not None else await parts.chats.get(chat_id)
        raise GameError("bet_too_large", maximum=settings.max_bet) from None


async def confirmation(chats: ChatSettings, chat_id: int, result: CommandResult) -> str | None:
    """The message confirming a player's move to them (their bid, bet, cancelled bet or
    grab), in the group's language; ``None`` for a result with none of these."""
    for event in result.events:
        if isinstance(event, BidPlaced):
            key = "answer.bid_placed"
            values = {"amount": event.amount}
        elif isinstance(event, BetPlaced):
            key = "answer.bet_changed" if event.previous else "answer.bet_placed"
            values = {"amount": event.amount}
        elif isinstance(event, BetCancelled):
            key = "answer.bet_cancelled"
            values = {"amount": event.amount}
        elif isinstance(event, Grabbed) and not event.auto:
            key = "answer.grabbed"
            values = {"share": event.amount}
        else:
            continue
        return await chats.text(chat_id, key, **values)
    return None


async def autobet_answer(
    chats: ChatSettings, chat_id: int, user_id: int, change: AutobetChange
) -> str:
    """What ``/autobet AMOUNT`` or ``/autobet off`` tells the player it did."""
    if change.after is None:
        if change.before is None:
            return await chats.text(chat_id, "answer.autobet_none")
        return await chats.text(chat_id, "answer.autobet_off", amount=change.before.amount)
    if _placed_for(user_id, change.placed):
        return await chats.text(chat_id, "answer.autobet_on_now", amount=change.after.amount)
    return await chats.text(chat_id, "answer.autobet_on", amount=change.after.amount)


def _placed_for(user_id: int, result: CommandResult | None) -> bool:
    """Whether placing standing bets (``result``) placed this player's."""
    run = result.autobets if result is not None else None
    return run is not None and any(p.autobet.user_id == user_id for p in run.placed)

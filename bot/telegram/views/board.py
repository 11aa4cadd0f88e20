"""The live round board's text and its buttons, by phase."""

from __future__ import annotations

from collections.abc import Mapping

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.engine.round import Phase, Round, minimum_bid
from bot.rules.hand_view import HandView
from bot.service.game import Person
from bot.telegram.views.buttons import ButtonPress
from bot.telegram.views.phrasing import Phrasing, display_name

#: Bets listed on the board by name; the board is one message, edited, so it must stay
#: far below Telegram's 4096 characters whatever the number of bettors.
BOARD_BETS_SHOWN = 40


class BoardViews(Phrasing):
    """The live board of a round and its buttons."""

    def board(
        self,
        state: Round,
        people: Mapping[int, Person],
        now_ms: int,
        *,
        table_link: str | None = None,
    ) -> tuple[str, InlineKeyboardMarkup | None]:
        """The live board of a round and its buttons; ``table_link``, the Mini App's
        direct link for the group (``MiniAppLinks.group_link``), adds a button opening
        it below the others while the round is open."""
        seconds = max(0, (state.deadline_ms - now_ms + 999) // 1000)
        settings = state.settings
        lines = [
            self.t("board.title", round_id=state.id, game=self.game(settings.ruleset)),
            self.t(f"board.phase.{state.phase.value}", seconds=seconds),
        ]
        if state.shoe is not None:
            lines.append(
                self.t_plural(
                    "board.shoe",
                    state.shoe.offset,
                    shoe_id=state.shoe.id,
                    commitment=state.commitment,
                    offset=state.shoe.offset,
                )
            )
        else:
            lines.append(self.t("board.commitment", commitment=state.commitment))
        if state.phase is Phase.BIDDING:
            if state.high_bidder is None:
                lines.append(self.t("board.no_bid", minimum=minimum_bid(state)))
            else:
                lines.append(
                    self.t(
                        "board.high_bid",
                        bid=state.high_bid,
                        name=display_name(state.high_bidder, people),
                        minimum=minimum_bid(state),
                    )
                )
        if state.dealer_id is not None:
            lines.append(
                self.t("board.dealer", name=display_name(state.dealer_id, people), pool=state.pool)
            )
        elif state.house_deals:
            lines.append(self.t("board.house", pool=state.pool))
        if state.phase is Phase.BETTING and not state.bets:
            lines.append(
                self.t("board.no_bets", minimum=settings.min_bet, maximum=settings.max_bet)
            )
        # Once a card round is dealt, the board shows every hand, the dealer's last.
        ruleset = state.ruleset
        dealt = state.hands() if not ruleset.uses_grabs else {}
        hands = {user_id: ruleset.show(hand) for user_id, hand in dealt.items()}
        if state.bets:
            lines.append(self.t("board.bets_header", count=len(state.bets)))
            lines.extend(
                self.t(
                    "board.standing_bet_line" if bet.standing else "board.bet_line",
                    name=display_name(bet.user_id, people),
                    stake=bet.amount,
                )
                + (self._hand_text(hands[bet.user_id]) if bet.user_id in hands else "")
                for bet in state.bets[:BOARD_BETS_SHOWN]
            )
            if len(state.bets) > BOARD_BETS_SHOWN:
                lines.append(self.t("board.more_bets", count=len(state.bets) - BOARD_BETS_SHOWN))
        if state.phase is Phase.GRABBING:
            lines.append(
                self.t("board.grabbed", grabbed=len(state.grabs), count=len(state.participants))
            )
        dealer = state.dealer_hand() if hands else None
        if dealer is not None:
            lines.append(self.t("board.dealer_hand") + self._hand_text(ruleset.show(dealer)))
        keyboard = self.keyboard(state)
        if keyboard is not None and table_link is not None:
            table = InlineKeyboardButton(self.t("button.table"), url=table_link)
            keyboard = InlineKeyboardMarkup([*keyboard.inline_keyboard, [table]])
        return "\n".join(lines), keyboard

    def _hand_text(self, hand: HandView) -> str:
        return f" · {self.dealt(hand)} {self.kind(hand)}"

    def keyboard(self, state: Round) -> InlineKeyboardMarkup | None:
        """Quick bids, quick bets and cancel, or the Grab button, by phase."""
        settings = state.settings
        if state.phase is Phase.BIDDING:
            least = minimum_bid(state)
            presses = [
                ButtonPress(state.id, "bid", least),
                ButtonPress(state.id, "bid", least + settings.bid_increment),
            ]
            return InlineKeyboardMarkup([[self._button("button.bid", press) for press in presses]])
        if state.phase is Phase.BETTING:
            bets = [
                self._button("button.bet", ButtonPress(state.id, "bet", amount))
                for amount in settings.quick_bets
                if settings.min_bet <= amount <= settings.max_bet
            ]
            rows = [bets[i : i + 3] for i in range(0, len(bets), 3)]
            cancel = InlineKeyboardButton(
                self.t("button.cancel_bet"), callback_data=ButtonPress(state.id, "cancel").encode()
            )
            return InlineKeyboardMarkup([*rows, [cancel]])
        if state.phase is Phase.GRABBING:
            grab = InlineKeyboardButton(
                self.t("button.grab"), callback_data=ButtonPress(state.id, "grab").encode()
            )
            return InlineKeyboardMarkup([[grab]])
        return None

    def _button(self, key: str, press: ButtonPress) -> InlineKeyboardButton:
        return InlineKeyboardButton(self.t(key, amount=press.amount), callback_data=press.encode())

"""What the group sees: the live round board, its buttons, the results message and the
answer to ``/verify``.

Everything from users is HTML-escaped here; amounts are formatted with the group's
currency. Callback data carries the round id so that a button of an old round can be
told apart and refused.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.engine.round import HOUSE_DEALER, Phase, Round, RoundSettled, RoundVoided, minimum_bid
from bot.engine.settings import Settings
from bot.engine.verification import Mismatch, NothingDealt, ShoeSecret, Verification, Verified
from bot.money import MAX_AMOUNT_CENTS, format_amount, format_bps, format_signed
from bot.rules import fairness as fair
from bot.rules.hand_view import HandView
from bot.rules.ruleset import get_ruleset
from bot.service.game import Person
from bot.telegram.i18n import translate, translate_plural
from bot.telegram.parsing import MAX_ROUND_ID, ascii_number

#: Bets listed on the board by name; the board is one message, edited, so it must stay
#: far below Telegram's 4096 characters whatever the number of bettors.
BOARD_BETS_SHOWN = 40
#: Client seeds on one line of the results (at most 64 characters each).
SEEDS_A_LINE = 4


def display_name(user_id: int, people: Mapping[int, Person]) -> str:
    """A user's name for the chat, HTML-escaped: first name, else @username, else the id."""
    person = people.get(user_id)
    if person is None:
        return f"user {user_id}"
    name = person.first_name or (f"@{person.username}" if person.username else str(user_id))
    return html.escape(name[:64])


#: What a board's buttons do, and the results' "same again" (``again``: the round is the
#: settled one whose bet is repeated); a bid or a bet carries its amount, the others 0.
BUTTON_ACTIONS = ("bid", "bet", "cancel", "grab", "again")
_WITH_AMOUNT = ("bid", "bet")


@dataclass(frozen=True, slots=True)
class ButtonPress:
    """Parsed callback data: ``<round id>:<action>:<amount>``."""

    round_id: int
    action: str
    amount: int = 0

    def encode(self) -> str:
        """The callback data string (well under Telegram's 64 bytes)."""
        return f"{self.round_id}:{self.action}:{self.amount}"

    @classmethod
    def decode(cls, data: str) -> ButtonPress | None:
        """Parse callback data; ``None`` for anything ``encode`` does not make: ASCII
        digits only, no sign or leading zero, a round id that can be one, an amount for a
        bid or a bet (at most what anyone may type) and 0 for a cancel or a grab."""
        parts = data.split(":")
        if len(data) > 64 or len(parts) != 3 or parts[1] not in BUTTON_ACTIONS:
            return None
        round_id = ascii_number(parts[0], MAX_ROUND_ID)
        amount = ascii_number(parts[2], MAX_AMOUNT_CENTS)
        if round_id is None or amount is None or round_id < 1:
            return None
        if (amount > 0) != (parts[1] in _WITH_AMOUNT):
            return None
        press = cls(round_id, parts[1], amount)
        return press if press.encode() == data else None


class Views:
    """Renders for one group's language and currency."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.language = settings.language
        self.currency = settings.currency

    def t(self, key: str, **params: object) -> str:
        """A catalogue message in the group's language, money in its currency."""
        return translate(self.language, key, self.currency, **params)

    def t_plural(self, key: str, number: int, /, **params: object) -> str:
        """A catalogue message in its plural form for ``number``, as :meth:`t`."""
        return translate_plural(self.language, key, number, self.currency, **params)

    def money(self, cents: int) -> str:
        """An amount in the group's currency."""
        return format_amount(cents, self.currency)

    def kind(self, hand: HandView) -> str:
        """A hand's kind as shown in results, named as its ruleset says (``kind_key``)."""
        return self.t(
            f"kind.{hand.kind_key}",
            points=hand.points,
            english=hand.english,
            chinese=hand.chinese,
            name=hand.chinese if self.language == "zh" else hand.english,
        )

    def dealt(self, hand: HandView) -> str:
        """What a participant was dealt: an envelope's amount, or the cards with the bull
        (or left hand) first: ``K♠ Q♥ 3♦ | 9♣ 8♠``."""
        if hand.amount_cents is not None:
            return self.money(hand.amount_cents)
        return " | ".join(" ".join(group) for group in hand.groups)

    def game(self, ruleset: str) -> str:
        """The name of the game a table plays."""
        return self.t(f"game.{get_ruleset(ruleset).name}")

    # -- board ----------------------------------------------------------------------

    def board(
        self, state: Round, people: Mapping[int, Person], now_ms: int
    ) -> tuple[str, InlineKeyboardMarkup | None]:
        """The live board of a round and its buttons."""
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
        return "\n".join(lines), self.keyboard(state)

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

    # -- results --------------------------------------------------------------------

    def results_keyboard(
        self, state: Round, ended: RoundSettled | RoundVoided
    ) -> InlineKeyboardMarkup | None:
        """The results message's buttons, whatever form the message takes (text, or a
        picture's caption): "same again" for a settled round with bets, which bets each
        presser's stake of this round again (``again`` carries this round's id, so a
        press on older results is refused)."""
        if not isinstance(ended, RoundSettled) or not state.bets:
            return None
        again = InlineKeyboardButton(
            self.t("button.same_again"), callback_data=ButtonPress(state.id, "again").encode()
        )
        return InlineKeyboardMarkup([[again]])

    def results(
        self, state: Round, ended: RoundSettled | RoundVoided, people: Mapping[int, Person]
    ) -> str:
        """The one message that closes a round: every participant's line, or why it ended."""
        if isinstance(ended, RoundVoided):
            text = self.t(f"results.void.{ended.reason.value}", round_id=state.id)
            if state.shoe is not None:  # nothing was dealt; the shoe's seed stays secret
                return text
            # A round dealt and then voided (a re-deal) lists its client seeds too: with
            # the seed they are what recomputes its split.
            dealt = self._client_seeds(state.fairness, state.client_seeds) if state.shares else []
            seed_line = self.t("results.seed", seed=ended.seed.hex(), round_id=state.id)
            return "\n".join([text, *dealt, seed_line])
        ruleset = state.ruleset
        hands = state.hands()
        settlement = ended.settlement
        lines = [self.t("results.title", round_id=state.id, game=self.game(state.settings.ruleset))]
        dealer = state.dealer_hand()
        assert dealer is not None
        dealer_view = ruleset.show(dealer)
        lines.append(
            self.t(
                "results.dealer",
                name=self.participant(state.dealer_id, people),
                envelope=self.dealt(dealer_view),
                kind=self.kind(dealer_view),
                # What a loser pays against it (Niu-Niu Poker: always 1x).
                multiplier=ruleset.loss_multiplier(dealer),
                net=format_signed(settlement.dealer_net, self.currency),
            )
        )
        for placed in state.bets:
            hand = ruleset.show(hands[placed.user_id])
            outcome = settlement.outcomes[placed.user_id]
            lines.append(
                self.t(
                    "results.player",
                    name=display_name(placed.user_id, people),
                    envelope=self.dealt(hand),
                    kind=self.kind(hand),
                    multiplier=hand.multiplier,
                    result=self.t(f"result.{outcome.result.value}"),
                    net=format_signed(outcome.net, self.currency),
                )
            )
        lines.append(
            self.t(
                "results.totals",
                rake=settlement.rake_total,
                rebate=settlement.rebate_total,
                fees=0 if state.house_deals else state.settings.dealer_fees,
            )
        )
        # The client seeds, then where the seed is (the line that says how to check).
        lines += self._client_seeds(state.fairness, state.client_seeds)
        if state.shoe is not None:
            first, last = state.cards_dealt()
            lines.append(self.t("results.shoe", shoe_id=state.shoe.id, first=first, last=last))
        else:
            lines.append(self.t("results.seed", seed=ended.seed.hex(), round_id=state.id))
        return "\n".join(lines)

    def _client_seeds(self, derivation: int, seeds: Sequence[str]) -> list[str]:
        """The line naming the client seeds a deal was derived with (none for derivation 1,
        which had none). Client seeds are plain ASCII (``bot.rules.fairness``): safe HTML."""
        if derivation == fair.V1:
            return []
        if not seeds:
            return [self.t("results.client_seeds_none", version=derivation)]
        # A few to a line: a long message is cut between lines, and a table full of long
        # seeds on one line would be cut inside a tag.
        codes = [f"<code>{seed}</code>" for seed in seeds]
        listed = "\n".join(
            " ".join(codes[start : start + SEEDS_A_LINE])
            for start in range(0, len(codes), SEEDS_A_LINE)
        )
        return [self.t("results.client_seeds", version=derivation, seeds=listed)]

    def verification(self, result: Verification, people: Mapping[int, Person]) -> str:
        """The answer to ``/verify``: the recomputed deal and who got what, or why a round
        cannot be (or was not) verified. ``people`` names the participants."""
        if isinstance(result, NothingDealt):
            if result.seed is None:  # a shoe round: the shoe's seed stays secret
                return self.t("verify.no_deal_shoe", round_id=result.round_id)
            return self.t("verify.no_split", round_id=result.round_id, seed=result.seed.hex())
        if isinstance(result, ShoeSecret):
            return self.t(
                "verify.shoe_secret",
                round_id=result.round_id,
                shoe_id=result.shoe_id,
                commitment=result.commitment,
                first=result.first,
                last=result.last,
            )
        if isinstance(result, Mismatch):
            return self.t("verify.mismatch", round_id=result.round_id)
        return self._verified(result, people)

    def _verified(self, result: Verified, people: Mapping[int, Person]) -> str:
        text = self._verified_deal(result, people)
        derivation = result.derivation
        if derivation.version == fair.V1:
            return text
        lines = [text, *self._client_seeds(derivation.version, derivation.client_seeds)]
        lines.append(
            self.t(
                "verify.derivation",
                version=derivation.version,
                scope=derivation.scope.value,
                scope_id=derivation.scope_id,
                deal_seed=result.deal_seed.hex(),
            )
        )
        return "\n".join(lines)

    def _verified_deal(self, result: Verified, people: Mapping[int, Person]) -> str:
        seed = result.seed.hex()
        # One participant a line: a long round's message can then be split between lines.
        if result.cards is None:
            count, total = len(result.shares), sum(result.shares)
            # The list is of grabs: the house's share is the one nobody grabbed.
            grabbed = "".join(
                f"\n• {display_name(hand.user_id, people)} {self.dealt(hand.view)}"
                for hand in result.hands
                if hand.user_id is not None
            )
            return self.t_plural(
                "verify.ok",
                count,
                round_id=result.round_id,
                seed=seed,
                count=count,
                total=total,
                total_plain=format_amount(total),
                derivation=_cli_derivation(result),
                grabbed=grabbed,
                shares=" ".join(self.money(share) for share in result.shares),
            )
        hands = "".join(
            f"\n• {self.participant(hand.user_id, people)}: {self.dealt(hand.view)}"
            for hand in result.hands
        )
        return self.t_plural(
            "verify.cards_ok",
            result.cards.decks,
            round_id=result.round_id,
            seed=seed,
            decks=result.cards.decks,
            first=result.cards.first,
            last=result.cards.last,
            hands=hands,
        )

    def participant(self, user_id: int | None, people: Mapping[int, Person]) -> str:
        """A participant's name, HTML-escaped; the house's when ``user_id`` is None."""
        if user_id is None:
            return self.t("results.house_name")
        return display_name(user_id, people)

    def rules(self) -> str:
        """The rules of this table, with its limits and fees."""
        settings = self.settings
        game = get_ruleset(settings.ruleset).name
        dealer = self.t(f"rules.dealer.{settings.dealer}")
        return (
            self.t(f"rules.{game}", dealer=dealer)
            + "\n\n"
            + self.t(
                "rules.table_house" if settings.dealer == HOUSE_DEALER else "rules.table",
                min_bet=self.money(settings.min_bet),
                max_bet=self.money(settings.max_bet),
                min_bid=self.money(settings.min_bid),
                rake=format_bps(settings.rake_bps),
                rebate=format_bps(settings.rebate_bps),
                fees=self.money(settings.dealer_fees),
            )
        )


def _cli_derivation(result: Verified) -> str:
    """What ``niuniu-bot verify`` needs besides the seed to recompute a split: nothing for
    derivation 1, else the round and the client seeds."""
    derivation = result.derivation
    if derivation.version == fair.V1:
        return ""
    seeds = ",".join(derivation.client_seeds)
    return f" --{derivation.scope.value} {derivation.scope_id} --client-seeds='{seeds}'"

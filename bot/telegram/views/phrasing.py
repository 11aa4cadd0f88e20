"""What every view of a group's messages shares: catalogue messages in the group's
language, amounts in its currency, hands and names as the group sees them.

Everything from users is HTML-escaped here; amounts are formatted with the group's
currency.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from bot.engine.settings import Settings
from bot.money import format_amount
from bot.rules import fairness as fair
from bot.rules.hand_view import HandView
from bot.rules.ruleset import get_ruleset
from bot.service.game import Person
from bot.telegram.i18n import translate, translate_plural

#: The languages the rules name hands in themselves (``HandView.english``, ``chinese``).
RULES_LANGUAGES = ("en", "zh")
#: Client seeds on one line of the results (at most 64 characters each).
SEEDS_A_LINE = 4


def display_name(user_id: int, people: Mapping[int, Person]) -> str:
    """A user's name for the chat, HTML-escaped: first name, else @username, else the id."""
    person = people.get(user_id)
    if person is None:
        return f"user {user_id}"
    name = person.first_name or (f"@{person.username}" if person.username else str(user_id))
    return html.escape(name[:64])


class Phrasing:
    """Catalogue messages, amounts, hands and names for one group's language and
    currency."""

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
            name=self.hand_name(hand),
        )

    def hand_name(self, hand: HandView) -> str:
        """A hand's name in the table's language ("" for an ordinary envelope, named by its
        points alone). The rules name hands in English and Simplified Chinese (牛三, with
        Chinese numerals); other languages name each kind in their catalogue."""
        if hand.kind_key == "ordinary":
            return ""
        if self.language in RULES_LANGUAGES:
            return hand.english if self.language == "en" else hand.chinese
        return self.t(f"hand.{hand.kind}", points=hand.points)

    def dealt(self, hand: HandView) -> str:
        """What a participant was dealt: an envelope's amount, or the cards with the bull
        (or left hand) first: ``K♠ Q♥ 3♦ | 9♣ 8♠``."""
        if hand.amount_cents is not None:
            return self.money(hand.amount_cents)
        return " | ".join(" ".join(group) for group in hand.groups)

    def game(self, ruleset: str) -> str:
        """The name of the game a table plays."""
        return self.t(f"game.{get_ruleset(ruleset).name}")

    def participant(self, user_id: int | None, people: Mapping[int, Person]) -> str:
        """A participant's name, HTML-escaped; the house's when ``user_id`` is None."""
        if user_id is None:
            return self.t("results.house_name")
        return display_name(user_id, people)

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

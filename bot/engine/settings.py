"""A group's game settings: defaults, validation and parsing of what admins type.

Pure: every change is checked here so that the database never holds a setting the
engine cannot play with. Admins see and type settings by their names (``rake``,
``rebate``: ``label``); the fields and the stored keys keep their units (``rake_bps``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.money import (
    AMOUNT_REASONS,
    MAX_AMOUNT_CENTS,
    RATE_REASONS,
    TOO_LARGE,
    AmountError,
    format_amount,
    format_bps,
    parse_amount,
    parse_bps,
)
from bot.rules.envelope import MAX_AMOUNT as MAX_ENVELOPE
from bot.rules.ruleset import LEGACY_NAMES, RULESETS, Ruleset, get_ruleset, table_ruleset

#: The languages a group can choose (``/set language``), as BCP 47 tags: Simplified
#: Chinese is ``zh``, Traditional ``zh-Hant``. Each has a catalogue (bot/telegram/locale).
LANGUAGES = ("en", "zh", "zh-Hant", "vi", "ms")
#: Each language by its own name, for the refusal that lists them.
LANGUAGE_NAMES = {
    "en": "English",
    "zh": "简体中文",
    "zh-Hant": "繁體中文",
    "vi": "Tiếng Việt",
    "ms": "Bahasa Melayu",
}
#: Who deals: players bid for the seat (``docs/rules.md`` §1), or the group's bank deals.
DEALERS = ("bid", "house")
#: Whether a round's results come as a picture too (``on``) or as text alone (``off``).
PICTURES = ("on", "off")
#: What a Niu-Niu Poker loser pays by: the game's own rule (``player``: the stake, 1x) or the
#: dealer's pattern (``dealer``, as in Bull Bull); ``docs/rules.md`` §7. Other games always
#: charge a loss by the dealer's hand.
LOSS_PAYS = ("player", "dealer")
#: What a card table starts with when an admin switches to it (``docs/rules.md`` §7: no
#: commission, bets 1-500). Switching back to the envelope game restores the group's defaults.
CARD_TABLE_DEFAULTS: dict[str, int] = {
    "rake_bps": 0,
    "rebate_bps": 0,
    "dealer_fee": 0,
    "service_fee": 0,
    "envelope_fee": 0,
    "min_bet": 100,
    "max_bet": 50_000,
}
MAX_WINDOW_SECONDS = 3600
#: The longest currency label, and the most quick bets (buttons) a board offers.
MAX_CURRENCY_LENGTH = 8
MAX_QUICK_BETS = 6

#: Why a setting's name or value is refused (``SettingError.reason``): the checks of
#: this module, and a value's own reason when it is not an amount or a rate.
SETTING_REASONS = frozenset(
    {
        "unknown_setting",
        "out_of_range",
        "max_below_min",
        "currency_length",
        "currency_html",
        "not_one_of",
        "not_seconds",
        "quick_bets_count",
        "quick_bets_empty_item",
        "quick_bets_duplicate",
        "quick_bets_repeated",
    }
)
#: Every reason a ``SettingError`` may give.
ALL_SETTING_REASONS = SETTING_REASONS | AMOUNT_REASONS | {TOO_LARGE} | RATE_REASONS


class SettingError(ValueError):
    """A setting's name or value is not acceptable.

    ``str()`` says why in English, as the config file's errors show it; ``reason`` says
    why as a code (one of :data:`ALL_SETTING_REASONS`) and ``params`` what the English
    text shows, each as text as admins type it: ``name`` (the setting's name as admins
    see it, ``rake``), ``typed`` (what was typed, cut short), bounds ``minimum`` and
    ``maximum``, ``choices``, ``amount``. The shell renders a reason as a message of the
    group's language.
    """

    def __init__(self, message: str, reason: str, **params: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.params = params


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything an admin can configure for a group. Amounts in cents, rates in bps."""

    bid_seconds: int = 18
    bet_seconds: int = 40
    grab_seconds: int = 20
    pause_seconds: int = 15
    min_bid: int = 10_000
    bid_increment: int = 10_000
    min_bet: int = 100
    max_bet: int = 100_000
    rake_bps: int = 500
    rebate_bps: int = 70
    dealer_fee: int = 0
    service_fee: int = 0
    envelope_fee: int = 0
    envelope_mean_share: int = 500
    currency: str = "RM"
    language: str = "en"
    ruleset: str = "envelope68"
    dealer: str = "bid"
    quick_bets: tuple[int, ...] = field(default=(1_000, 2_000, 5_000, 10_000))
    pictures: str = "on"
    loss_pays: str = "player"

    @property
    def dealer_fees(self) -> int:
        """Dealer fee + service fee + envelope fee: what a dealer pays per settled round."""
        return self.dealer_fee + self.service_fee + self.envelope_fee

    def played_ruleset(self) -> Ruleset[Any]:
        """The ruleset as this table plays it: its game, with ``loss_pays`` applied."""
        return table_ruleset(self.ruleset, loss_by_dealer=self.loss_pays == "dealer")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe mapping of every setting (for the database)."""
        data = dataclasses.asdict(self)
        data["quick_bets"] = list(self.quick_bets)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base: Settings | None = None) -> Settings:
        """Settings from a stored mapping; unknown keys are ignored, missing ones come from
        ``base`` (or the defaults). Raises ``SettingError`` if the result is invalid."""
        values = (base or cls()).to_dict()
        values.update({key: value for key, value in data.items() if key in _FIELDS})
        values["ruleset"] = LEGACY_NAMES.get(values["ruleset"], values["ruleset"])
        values["quick_bets"] = tuple(values["quick_bets"])
        settings = cls(**values)
        settings.validate()
        return settings

    def validate(self) -> None:
        """Raise ``SettingError`` naming the first setting that is out of range."""
        for name in ("bid_seconds", "bet_seconds", "grab_seconds"):
            _check_range(name, getattr(self, name), 1, MAX_WINDOW_SECONDS)
        _check_range("pause_seconds", self.pause_seconds, 0, MAX_WINDOW_SECONDS)
        for name in ("min_bid", "bid_increment", "min_bet", "max_bet"):
            _check_range(name, getattr(self, name), 1, MAX_AMOUNT_CENTS, format_amount)
        if self.max_bet < self.min_bet:
            maximum, minimum = format_amount(self.max_bet), format_amount(self.min_bet)
            raise SettingError(
                f"max_bet ({maximum}) cannot be below min_bet ({minimum})",
                "max_below_min",
                minimum=minimum,
                maximum=maximum,
            )
        for name in ("rake_bps", "rebate_bps"):
            _check_range(name, getattr(self, name), 0, 10_000, format_bps)
        for name in ("dealer_fee", "service_fee", "envelope_fee"):
            _check_range(name, getattr(self, name), 0, MAX_AMOUNT_CENTS, format_amount)
        _check_range(
            "envelope_mean_share", self.envelope_mean_share, 1, MAX_ENVELOPE, format_amount
        )
        if not (1 <= len(self.currency) <= MAX_CURRENCY_LENGTH and self.currency.isprintable()):
            raise SettingError(
                f"currency is a label of 1 to {MAX_CURRENCY_LENGTH} printable characters",
                "currency_length",
                name="currency",
                maximum=str(MAX_CURRENCY_LENGTH),
            )
        if any(char in "<>&" for char in self.currency):
            raise SettingError(
                "currency cannot contain <, > or &", "currency_html", name="currency"
            )
        _check_choice(
            "language",
            self.language,
            LANGUAGES,
            [f"{code} ({LANGUAGE_NAMES[code]})" for code in LANGUAGES],
        )
        _check_choice("ruleset", self.ruleset, sorted(RULESETS))
        _check_choice("dealer", self.dealer, DEALERS)
        _check_choice("pictures", self.pictures, PICTURES)
        _check_choice("loss_pays", self.loss_pays, LOSS_PAYS)
        if not 1 <= len(self.quick_bets) <= MAX_QUICK_BETS:
            raise SettingError(
                f"quick_bets lists 1 to {MAX_QUICK_BETS} amounts",
                "quick_bets_count",
                name="quick_bets",
                maximum=str(MAX_QUICK_BETS),
            )
        for amount in self.quick_bets:
            _check_range("quick_bets", amount, 1, MAX_AMOUNT_CENTS, format_amount)
        if len(set(self.quick_bets)) != len(self.quick_bets):
            raise SettingError(
                "quick_bets lists each amount once", "quick_bets_repeated", name="quick_bets"
            )

    def changed(self, key: str, text: str) -> tuple[str, Settings]:
        """Parse an admin's ``/set KEY VALUE``: the field's name and the new settings.

        ``key`` is a name as admins type it (``rake``; see ``label``) or the field's own
        (``rake_bps``). Raises ``SettingError`` for an unknown key (``unknown_setting``)
        or a bad value: the reason of a value that is not an amount or a rate is the
        ``AmountError``'s, with the setting's ``name``.
        """
        name = field_name(key)
        parser = _PARSERS.get(name)
        if parser is None:
            typed = key.strip()[:40]
            raise SettingError(f"unknown setting {typed!r}", "unknown_setting", typed=typed)
        try:
            value = parser(text)
        except (AmountError, SettingError) as error:
            raise SettingError(
                f"{label(name)}: {error}", error.reason, name=label(name), **error.params
            ) from None
        settings = dataclasses.replace(self, **{name: value})
        settings.validate()
        return name, settings

    def with_table_defaults(self, base: Settings) -> Settings:
        """These settings with the table defaults of their ruleset: a card game's
        (``CARD_TABLE_DEFAULTS``), or for the envelope game those of ``base``."""
        if get_ruleset(self.ruleset).uses_grabs:
            values = {key: getattr(base, key) for key in CARD_TABLE_DEFAULTS}
        else:
            values = dict(CARD_TABLE_DEFAULTS)
        settings = dataclasses.replace(self, **values)
        settings.validate()
        return settings

    def display(self, name: str) -> str:
        """A setting's value as an admin would type it (``name`` as in ``changed``).

        Exact: two different values never display alike, so a change that displays as
        the old value changed nothing."""
        name = field_name(name)
        value = getattr(self, name)
        if name in _AMOUNT_KEYS:
            return format_amount(value)
        if name in ("rake_bps", "rebate_bps"):
            return format_bps(value)
        if name == "quick_bets":
            return ",".join(format_amount(amount) for amount in value)
        return str(value)


def label(name: str) -> str:
    """A setting's name as admins type it: ``rake`` for the field ``rake_bps``."""
    return LABELS.get(name, name)


def field_name(key: str) -> str:
    """The field a typed setting name stands for (``rake`` -> ``rake_bps``); an unknown
    name comes back as typed (lower case)."""
    typed = key.strip().lower()
    return ALIASES.get(typed, typed)


def _check_range(
    name: str, value: int, low: int, high: int, shown: Callable[[int], str] = str
) -> None:
    """Raise ``SettingError`` unless ``value`` is an int in ``low..high``; the message
    shows the bounds as admins type them (``shown``: amounts, rates or plain numbers)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        minimum, maximum = shown(low), shown(high)
        raise SettingError(
            f"{label(name)} must be between {minimum} and {maximum}",
            "out_of_range",
            name=label(name),
            minimum=minimum,
            maximum=maximum,
        )


def _check_choice(name: str, value: str, choices: Sequence[str], shown: Sequence[str] = ()) -> None:
    """Raise ``SettingError`` unless ``value`` is one of ``choices`` (listed as ``shown``,
    if given)."""
    if value not in choices:
        listed = ", ".join(shown or choices)
        raise SettingError(f"{name} is one of {listed}", "not_one_of", name=name, choices=listed)


# The parsers of typed values raise ``AmountError`` or a ``SettingError`` without the
# setting's name, which ``Settings.changed`` adds.


def _parse_seconds(text: str) -> int:
    stripped = text.strip().lower().removesuffix("s")
    if not stripped.isascii() or not stripped.isdigit():
        typed = text.strip()[:20]
        raise SettingError(
            f"{typed!r} is not a whole number of seconds", "not_seconds", typed=typed
        )
    return int(stripped)


def _parse_label(text: str) -> str:
    return text.strip()


def _parse_language(text: str) -> str:
    """A language as typed, in any case and with ``-`` or ``_`` (``zh_hant``), as its tag
    in ``LANGUAGES``; anything else as typed, for ``validate`` to refuse."""
    typed = text.strip()
    canonical = typed.replace("_", "-").casefold()
    return next((code for code in LANGUAGES if code.casefold() == canonical), typed)


def _parse_amount_list(text: str) -> tuple[int, ...]:
    """Amounts separated by commas (``5,10,20``): no empty item (``1,,2``, ``1,2,``), no
    amount twice (each is a button). Their number and range are checked by ``validate``."""
    parts = [part.strip() for part in text.split(",")]
    if any(not part for part in parts):
        typed = text.strip()[:40]
        raise SettingError(
            f"{typed!r} has an empty item; write e.g. 5,10,20", "quick_bets_empty_item", typed=typed
        )
    amounts = tuple(parse_amount(part) for part in parts)
    for index, amount in enumerate(amounts):
        if amount in amounts[:index]:
            shown = format_amount(amount)
            raise SettingError(f"{shown} is listed twice", "quick_bets_duplicate", amount=shown)
    return amounts


_FIELDS = {field.name for field in dataclasses.fields(Settings)}
_AMOUNT_KEYS = {
    "min_bid",
    "bid_increment",
    "min_bet",
    "max_bet",
    "dealer_fee",
    "service_fee",
    "envelope_fee",
    "envelope_mean_share",
}
_PARSERS: dict[str, Callable[[str], Any]] = {
    **{
        name: _parse_seconds
        for name in ("bid_seconds", "bet_seconds", "grab_seconds", "pause_seconds")
    },
    **{name: parse_amount for name in _AMOUNT_KEYS},
    "rake_bps": parse_bps,
    "rebate_bps": parse_bps,
    "currency": _parse_label,
    "language": _parse_language,
    "ruleset": lambda text: text.strip().lower(),
    "dealer": lambda text: text.strip().lower(),
    "pictures": lambda text: text.strip().lower(),
    "loss_pays": lambda text: text.strip().lower(),
    "quick_bets": _parse_amount_list,
}
#: Names admins may type in ``/set`` for a field of another name.
ALIASES = {
    "rake": "rake_bps",
    "rebate": "rebate_bps",
    "lang": "language",
    "envelope_share": "envelope_mean_share",
}
#: The names admins see (``/config``, replies, errors, the audit log) where a field's
#: name says its unit: rates are typed as percentages, so ``rake``, not ``rake_bps``.
LABELS = {"rake_bps": "rake", "rebate_bps": "rebate"}
#: Every setting, by the name admins see and type (``Settings.display`` takes these), in
#: the order of the fields (the order of the table in docs/admin.md).
SETTING_NAMES = tuple(label(field.name) for field in dataclasses.fields(Settings))

"""Money at the edges: parse what people type into integer cents, format cents for display.

Inside the bot every amount is an ``int`` number of minor units (cents). Floats never
touch money: parsing works on the digits of the text, formatting on integer division.
"""

from __future__ import annotations

import re

#: Largest amount anyone may type: 10,000,000.00. Well above any sane bet or credit,
#: low enough that stake x 18 and sums of many stakes stay far from any integer limit.
MAX_AMOUNT_CENTS = 1_000_000_000

_AMOUNT = re.compile(r"(?P<units>[0-9]+)(?:\.(?P<cents>[0-9]{1,2}))?")


#: Why typed text is not an amount (``AmountError.reason``), as ``parse_amount`` says.
AMOUNT_REASONS = frozenset(
    {"missing", "negative", "separators", "digits", "decimals", "not_amount"}
)
#: The reason of a well-formed amount above the most that may be typed (``AmountTooLarge``).
TOO_LARGE = "too_large"
#: Why typed text is not a rate, as ``parse_bps`` says.
RATE_REASONS = frozenset({"not_rate", "above_100"})


class AmountError(ValueError):
    """Typed text that is not an amount (or a rate): ``str()`` says why in English (the
    CLI and the config file print it), ``reason`` says why as a code (one of
    :data:`AMOUNT_REASONS`, :data:`TOO_LARGE` or :data:`RATE_REASONS`) and ``params``
    what the English text shows, as text: ``typed`` (what was typed, cut short, without
    quotes) and whatever else the reason names. The shell renders a reason as a message
    of the user's language."""

    def __init__(self, message: str, reason: str, typed: str, **params: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.params = {"typed": typed, **params}


class AmountTooLarge(AmountError):
    """A well-formed amount above the most that may be typed (``maximum``, in cents).

    Callers that know a tighter limit of their own (a table's largest bet) answer with
    that limit instead of this one."""

    def __init__(self, message: str, typed: str, maximum: int) -> None:
        super().__init__(message, TOO_LARGE, typed, maximum=format_amount(maximum))
        self.maximum = maximum


def parse_amount(text: str, *, max_cents: int = MAX_AMOUNT_CENTS) -> int:
    """Parse a typed amount such as ``12``, ``12.5``, ``12.50`` or ``0.01`` into cents.

    Only the ASCII digits 0-9 are digits: ``٣``, ``３`` or ``²`` are not amounts.
    Raises ``AmountError`` (a ``ValueError``) saying why for anything else: empty text
    (``missing``), a sign (``negative``), thousands separators (``separators``), digits
    of other scripts (``digits``), more than two decimals (``decimals``), words,
    exponents, ``nan``/``inf`` (``not_amount``); ``AmountTooLarge`` (``too_large``) for
    amounts above ``max_cents``. Zero is accepted; callers decide whether it means
    something (``/bet 0`` cancels a bet).
    """
    stripped = text.strip()
    typed = _cut(stripped)
    shown = repr(typed)
    if not stripped:
        raise AmountError("an amount is missing", "missing", typed)
    if stripped.startswith("-"):
        raise AmountError(f"{shown} is negative; amounts must be positive", "negative", typed)
    if "," in stripped or "_" in stripped or " " in stripped:
        raise AmountError(
            f"{shown}: write amounts without separators, e.g. 1200.50", "separators", typed
        )
    match = _AMOUNT.fullmatch(stripped)
    if match is None:
        if any(char.isdigit() and not char.isascii() for char in stripped):
            raise AmountError(f"{shown}: write amounts with the digits 0-9", "digits", typed)
        if re.fullmatch(r"[0-9]+\.[0-9]{3,}", stripped):
            raise AmountError(f"{shown} has more than two decimals", "decimals", typed)
        raise AmountError(f"{shown} is not an amount; write e.g. 20 or 12.50", "not_amount", typed)
    too_large = f"{shown} is too large; the most is {format_amount(max_cents)}"
    if len(match["units"].lstrip("0")) > len(str(max_cents // 100)):
        raise AmountTooLarge(too_large, typed, max_cents)
    units = int(match["units"])
    cents_text = match["cents"] or "0"
    cents = int(cents_text) * (10 if len(cents_text) == 1 else 1)
    total = units * 100 + cents
    if total > max_cents:
        raise AmountTooLarge(too_large, typed, max_cents)
    return total


def _cut(text: str, limit: int = 24) -> str:
    """User text as an error message quotes it: cut short, so that an error stays short."""
    return text if len(text) <= limit else text[:limit] + "…"


def format_amount(cents: int, currency: str = "") -> str:
    """Format cents for display: 1250 with "RM" is ``RM12.50``; negatives ``-RM12.50``."""
    sign = "-" if cents < 0 else ""
    units, rest = divmod(abs(cents), 100)
    return f"{sign}{currency}{units}.{rest:02d}"


def format_signed(cents: int, currency: str = "") -> str:
    """Format a change of balance with an explicit sign: ``+RM3.00``, ``-RM1.20``, ``RM0.00``."""
    if cents > 0:
        return "+" + format_amount(cents, currency)
    return format_amount(cents, currency)


_PERCENT = re.compile(r"(?P<whole>[0-9]{1,3})(?:\.(?P<frac>[0-9]{1,2}))?%")
_BPS = re.compile(r"(?P<bps>[0-9]{1,5}) *bps")


def parse_bps(text: str) -> int:
    """Parse a rate typed as a percentage (``5%``, ``0.7%``) or basis points (``70bps``),
    or ``0`` for none (a bare ``5`` could mean either, so it is refused).

    Returns basis points (1% = 100 bps) between 0 and 10,000; otherwise ``AmountError``
    with the reason ``not_rate`` or ``above_100`` (ASCII digits only, as for amounts).
    """
    stripped = text.strip().lower()
    if stripped == "0":  # none: the one rate that needs no unit to be unambiguous
        return 0
    if match := _PERCENT.fullmatch(stripped):
        frac = match["frac"] or "0"
        bps = int(match["whole"]) * 100 + int(frac) * (10 if len(frac) == 1 else 1)
    elif match := _BPS.fullmatch(stripped):
        bps = int(match["bps"])
    else:
        raise AmountError(
            f"{text.strip()!r} is not a rate; write e.g. 5% or 0.7% or 70bps",
            "not_rate",
            _cut(text.strip()),
        )
    if bps > 10_000:
        raise AmountError(f"{text.strip()!r} is above 100%", "above_100", _cut(text.strip()))
    return bps


def format_bps(bps: int) -> str:
    """Format basis points as a percentage: 500 -> ``5%``, 70 -> ``0.7%``, 5 -> ``0.05%``."""
    whole, frac = divmod(bps, 100)
    if frac == 0:
        return f"{whole}%"
    return f"{whole}.{frac:02d}".rstrip("0") + "%"

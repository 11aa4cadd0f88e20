"""What people type and press, checked before anything reaches the service.

Pure functions over text. Only the ASCII digits 0-9 are digits: ``str.isdigit`` also
accepts "²" (which ``int`` then refuses) and "٣" (which ``int`` reads as 3), so nothing
here calls ``int`` on text that ``ascii_number`` has not checked. Numbers are bounded
before they become ids, so nothing out of a column's range reaches the database. A
refusal is a ``GameError`` whose key names the message the user sees.
"""

from __future__ import annotations

from bot.engine.errors import GameError
from bot.money import AmountError, AmountTooLarge, parse_amount
from bot.service.game import MAX_USER_ID

#: Round ids are BIGINT row ids.
MAX_ROUND_ID = 2**63 - 1


def ascii_number(text: str, maximum: int) -> int | None:
    """``text`` as a whole number if it is one written in the ASCII digits 0-9 only (no
    sign, space, underscore or digit of another script) and at most ``maximum``; else
    ``None``. Leading zeros are allowed (``007`` is 7)."""
    if not (text.isascii() and text.isdecimal()):
        return None
    digits = text.lstrip("0") or "0"
    if len(digits) > len(str(maximum)):
        return None
    value = int(digits)
    return value if value <= maximum else None


def looks_like_number(text: str) -> bool:
    """Whether ``text`` is meant as a number: digits of any script (``isdigit``: "٣",
    "²" too), with or without a sign. Such text in the place of an id is refused as a bad
    id rather than read as something else."""
    body = text[1:] if text[:1] in ("+", "-") else text
    return body.isdigit()


def parse_user_id(text: str) -> int:
    """A Telegram user id an admin typed (``/credit 12345 100``): 1 to ``MAX_USER_ID`` in
    ASCII digits (0 is the bot's own accounts'), else ``GameError("bad_user_id")``."""
    value = ascii_number(text, MAX_USER_ID)
    if value is None or value < 1:
        raise GameError("bad_user_id", who=text[:24], maximum_id=MAX_USER_ID)
    return value


def parse_typed_amount(text: str) -> int:
    """An amount a user typed, in cents. ``GameError("bad_amount.<reason>")`` says what is
    wrong with one that is not an amount (``AmountError.reason``, one of
    ``AMOUNT_REASONS``; its params, ``typed``, are those of the message); one above what
    anyone may type is ``GameError("amount_too_large")``, unless the caller answers with a
    limit of its own (``/bet``: the table's largest bet)."""
    try:
        return parse_amount(text)
    except AmountTooLarge as error:
        raise GameError("amount_too_large", maximum=error.maximum) from None
    except AmountError as error:
        raise GameError(f"bad_amount.{error.reason}", **error.params) from None

"""The buttons' callback data: each carries the round id so that a button of an old
round can be told apart and refused."""

from __future__ import annotations

from dataclasses import dataclass

from bot.money import MAX_AMOUNT_CENTS
from bot.telegram.parsing import MAX_ROUND_ID, ascii_number

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

"""What the use cases take and return: people as the shell saw them, what a command did,
and the read side's lines (defined by the store, which builds them)."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import NamedTuple

from bot.engine.autobets import AutobetRun
from bot.engine.edge import EdgeWarning
from bot.engine.errors import GameError
from bot.engine.round import Event, Phase, Round, RoundOrSeat
from bot.engine.settings import Settings
from bot.rules.split import SEED_BYTES
from bot.store.ledger import Balance as Balance
from bot.store.queries import AuditLine as AuditLine
from bot.store.queries import ParticipantResult as ParticipantResult
from bot.store.queries import RoundSummary as RoundSummary
from bot.store.queries import StatementLine as StatementLine


def wall_clock_ms() -> int:
    """Milliseconds since the epoch (the service's default clock)."""
    return time.time_ns() // 1_000_000


def random_seed() -> bytes:
    """A fresh round seed from the operating system's CSPRNG."""
    return secrets.token_bytes(SEED_BYTES)


#: Telegram's user ids are positive and have at most 52 significant bits. The bot keeps
#: 0 for its own accounts (the house, the mint, the bank).
MAX_USER_ID = 2**52


def is_user_id(value: int) -> bool:
    """Whether ``value`` can be a Telegram user's id: 1 to ``MAX_USER_ID``."""
    return not isinstance(value, bool) and isinstance(value, int) and 0 < value <= MAX_USER_ID


@dataclass(frozen=True, slots=True)
class Person:
    """A Telegram user as the shell saw them."""

    id: int
    first_name: str = ""
    username: str | None = None
    last_name: str | None = None

    def columns(self, now_ms: int) -> dict[str, object]:
        """The ``users`` columns of this person, as stored when the bot sees them."""
        return {
            "username": self.username,
            "first_name": self.first_name[:256],
            "last_name": self.last_name,
            "seen_at_ms": now_ms,
        }


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a use case did.

    ``round`` is the round after the command (``None`` if none was involved), ``events``
    what happened to it, ``started`` a round that began as a consequence (after a
    re-deal) and ``started_events`` what its start did, ``duplicate`` is true when the
    update had been processed before, ``refused`` is why a round due to start by
    itself could not, ``autobets`` what placing the standing bets did when the
    command opened betting (``bot.service.autobets``), and ``next_round_at_ms`` when
    the table's next round starts by itself, if the command ended the round.
    """

    round: RoundOrSeat | None = None
    events: tuple[Event, ...] = ()
    started: Round | None = None
    duplicate: bool = False
    refused: GameError | None = None
    started_events: tuple[Event, ...] = ()
    autobets: AutobetRun | None = None
    next_round_at_ms: int | None = None


@dataclass(frozen=True, slots=True)
class VitalSigns:
    """What the database says of the bot's state right now: open rounds by phase and game
    (ruleset name), and the chips held for bids and bets in every group, in cents."""

    open_rounds: dict[tuple[Phase, str], int]
    chips_held_cents: int


class SettingChange(NamedTuple):
    """A setting an admin set: its name as admins type it, its old and new value as
    displayed. ``old == new`` when it already had that value (then nothing was written)."""

    name: str
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class UnconfirmedChange:
    """A setting change not made: it must be confirmed first, for ``warning``'s reason.
    ``name`` as admins type it, ``value`` as displayed, ``settings`` what the group's
    settings would be."""

    name: str
    value: str
    settings: Settings
    warning: EdgeWarning


@dataclass(frozen=True, slots=True)
class ShoeInfo:
    """A group's shoe; ``seed`` is ``None`` while it is still being dealt from."""

    id: int
    chat_id: int
    decks: int
    commitment: str
    dealt: int
    seed: bytes | None

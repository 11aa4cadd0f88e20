"""What the Mini App shows of a group's past rounds and of its table, besides the live
round: a round's results as the group got them (the picture, the dealer's cards turning
over, the text), the player's own history and ``/stats``, the table's rules and odds, and
``/verify`` of a past round.

- ``GET /api/results?chat=ID&round=N``: round N's results (``results``).
- ``GET /api/history?chat=ID[&before=N]``: the player's own settled rounds (``history``).
- ``GET /api/stats?chat=ID``: the player's ``/stats`` (``stats``).
- ``GET /api/rules?chat=ID``: the table's ``/rules`` and ``/odds`` (``rules``).
- ``GET /api/verify?chat=ID&round=N``: ``/verify N`` (``verify``).

The app checks who asks (signed in, a member of the group) before any of these runs. A
round is shown only if it is the group's and it has ended: an open round's seed is
secret (docs/rules.md §6), so an open round is refused before anything of it is read
further, and none of these answers carries a seed of a round still open. The texts are
the bot's own, in the group's language, made by the shell (``RoundTexts``): this layer
reads, checks and caches, and knows no catalogue.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from cachetools import LRUCache

from bot.engine.round import Round, RoundSettled, RoundVoided
from bot.money import format_amount, format_signed
from bot.pictures.model import DealerReveal
from bot.service.game import GameService, Person

#: Rounds the app's history shows at a time (the page asks for more with ``before``).
HISTORY_PAGE = 10
#: Settled rounds whose results are kept drawn: a round's results never change, and a
#: group's players open the same last round at once.
RESULTS_KEPT = 64


@dataclass(frozen=True, slots=True)
class RoundResults:
    """A finished round's results as the group got them: the text (plain), and for a
    settled round the picture (PNG; None if it could not be drawn) and, at a card table,
    the dealer's cards turning over (``reveal``: the caption and the cards, in the order
    they turn)."""

    text: str
    settled: bool
    picture: bytes | None
    reveal: DealerReveal | None


@dataclass(frozen=True, slots=True)
class Checked:
    """``/verify`` of a round: whether the deal recomputed is the one dealt (``verified``;
    False for a mismatch, and for a deal that cannot be checked yet: a shoe still dealt
    from), what kind of answer it is, and its text (plain)."""

    verified: bool
    kind: str
    text: str


@dataclass(frozen=True, slots=True)
class GroupWords:
    """Words of the group's language the page's history needs: each result
    (``result.win`` ...) and each game's name, by their codes, and the dealer's role."""

    results: Mapping[str, str]
    games: Mapping[str, str]
    dealer: str


class RoundTexts(Protocol):
    """The bot's own texts for the app, in the group's language (the shell's
    ``MiniAppRounds``)."""

    async def results(self, state: Round, ended: RoundSettled | RoundVoided) -> RoundResults:
        """The results of a finished round, as its group got them."""
        ...

    async def stats(self, chat_id: int, player: Person) -> str:
        """The answer to ``/stats``."""
        ...

    async def rules(self, chat_id: int) -> tuple[str, str]:
        """The answers to ``/rules`` and ``/odds``."""
        ...

    async def verify(self, state: Round) -> Checked:
        """The answer to ``/verify`` of a finished round."""
        ...

    async def words(self, chat_id: int) -> GroupWords:
        """The words the history needs."""
        ...


class NotShown(Exception):
    """What was asked is not shown: answered ``{"error": text}`` with ``status``."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


@dataclass(frozen=True, slots=True)
class Asked:
    """A request of the app, checked: who asks (a member of the group), and the round
    it names (``round``, ``before``), read by the app."""

    service: GameService
    texts: RoundTexts
    chat_id: int
    player: Person
    round_id: int | None
    before_id: int | None


class PastRounds:
    """The answers of ``/api/results``, ``history``, ``stats``, ``rules`` and ``verify``;
    it keeps settled rounds' results drawn (``RESULTS_KEPT``)."""

    def __init__(self) -> None:
        self._results: LRUCache[int, RoundResults] = LRUCache(RESULTS_KEPT)

    async def ended_round(self, asked: Asked) -> Round:
        """The finished round of the group that ``asked`` names; ``NotShown`` otherwise."""
        if asked.round_id is None:
            raise NotShown(400, "round is missing: the number of a round, like 412.")
        state = await asked.service.round(asked.round_id)
        if state is None or state.chat_id != asked.chat_id:
            # Another group's round reads as none: its existence is not this group's.
            raise NotShown(404, f"There is no round {asked.round_id} in this group.")
        if state.phase.is_open:
            raise NotShown(
                400, f"Round {asked.round_id} is still being played: it is shown once it ends."
            )
        return state

    async def results(self, asked: Asked) -> dict[str, Any]:
        """A finished round's results: the text, and for a settled round the picture (a
        ``data:`` URL, the page's policy allows no other source) and the dealer's cards."""
        state = await self.ended_round(asked)
        found = self._results.get(state.id)
        if found is None:
            ended = await asked.service.ending(state)
            found = await asked.texts.results(state, ended)
            if found.picture is not None or not found.settled:  # a picture not drawn is tried again
                self._results[state.id] = found
        picture = None
        if found.picture is not None:
            picture = "data:image/png;base64," + base64.b64encode(found.picture).decode()
        reveal = None
        if found.reveal is not None:
            cards = found.reveal.cards
            reveal = {"caption": found.reveal.caption, "bull": cards.bull, "rest": cards.rest}
        return {
            "round": state.id,
            "settled": found.settled,
            "text": found.text,
            "picture": picture,
            "reveal": reveal,
        }

    async def history(self, asked: Asked) -> dict[str, Any]:
        """The player's own settled rounds in the group, newest first, a page at a time;
        ``more`` is what to ask for next (``before``), None after the last."""
        service = asked.service
        rounds = await service.player_rounds(
            asked.chat_id, asked.player.id, before_id=asked.before_id, limit=HISTORY_PAGE
        )
        currency = (await service.settings(asked.chat_id)).currency
        words = await asked.texts.words(asked.chat_id)
        lines = []
        for entry in rounds:
            line, shown = entry.line, entry.round
            dealer = line.role != "player"
            lines.append(
                {
                    "round": shown.id,
                    "ended_at_ms": shown.ended_at_ms,
                    "game": words.games.get(shown.ruleset, shown.ruleset),
                    "role": "dealer" if dealer else "player",
                    "role_text": words.dealer if dealer else "",
                    "stake": {"cents": line.stake, "text": format_amount(line.stake, currency)},
                    "pool": {"cents": shown.pool, "text": format_amount(shown.pool, currency)},
                    "multiplier": line.multiplier,
                    "result": line.result,
                    "result_text": words.results.get(line.result, line.result),
                    "net": {"cents": line.net, "text": format_signed(line.net, currency)},
                }
            )
        more = rounds[-1].round.id if len(rounds) == HISTORY_PAGE else None
        return {"rounds": lines, "more": more}

    async def stats(self, asked: Asked) -> dict[str, Any]:
        """The player's ``/stats`` in the group, as the command answers it."""
        return {"text": await asked.texts.stats(asked.chat_id, asked.player)}

    async def rules(self, asked: Asked) -> dict[str, Any]:
        """The table's ``/rules`` and ``/odds``."""
        rules, odds = await asked.texts.rules(asked.chat_id)
        return {"rules": rules, "odds": odds}

    async def verify(self, asked: Asked) -> dict[str, Any]:
        """``/verify`` of a finished round of the group."""
        state = await self.ended_round(asked)
        checked = await asked.texts.verify(state)
        return {
            "round": state.id,
            "verified": checked.verified,
            "kind": checked.kind,
            "text": checked.text,
        }

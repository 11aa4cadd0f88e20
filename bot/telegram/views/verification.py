"""The answer to ``/verify``: the recomputed deal and who got what, or why a round cannot
be (or was not) verified."""

from __future__ import annotations

from collections.abc import Mapping

from bot.engine.verification import Mismatch, NothingDealt, ShoeSecret, Verification, Verified
from bot.money import format_amount
from bot.rules import fairness as fair
from bot.service.game import Person
from bot.telegram.views.phrasing import Phrasing, display_name


class VerificationViews(Phrasing):
    """The answer to ``/verify``."""

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


def _cli_derivation(result: Verified) -> str:
    """What ``niuniu-bot verify`` needs besides the seed to recompute a split: nothing for
    derivation 1, else the round and the client seeds."""
    derivation = result.derivation
    if derivation.version == fair.V1:
        return ""
    seeds = ",".join(derivation.client_seeds)
    return f" --{derivation.scope.value} {derivation.scope_id} --client-seeds='{seeds}'"

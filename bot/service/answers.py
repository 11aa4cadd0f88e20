"""Answers kept until Telegram has them: the use cases over ``bot.store.answers`` that
the shell's replies call when an answer must wait for its group's share of Telegram's
limit (see there for the claims that let another worker, or the restarted one, take
over a dead worker's answers)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.store.answers import KeptRecord as KeptRecord
from bot.store.answers import NewAnswer as NewAnswer
from bot.store.unit_of_work import Store

#: How long a worker holds the answers it keeps before another worker, or this one
#: restarted, may take them over: it renews the claim every third of this while they
#: wait, so this is how late the answers of a worker that died go out.
ANSWER_CLAIM_MS = 10_000


class KeptAnswers:
    """The answers one bot keeps, claimed for ``claim_ms`` at a time."""

    def __init__(
        self, store: Store, clock: Callable[[], int], *, claim_ms: int = ANSWER_CLAIM_MS
    ) -> None:
        self.records = store.answer_records
        self.clock = clock
        self.claim_ms = claim_ms

    async def keep(self, answers: Sequence[NewAnswer]) -> list[int]:
        """Write answers that wait, claimed by this worker; their ids, in order."""
        now = self.clock()
        return await self.records.keep(answers, now_ms=now, until_ms=now + self.claim_ms)

    async def sent(self, ids: Sequence[int]) -> None:
        """Telegram has these answers (or refused them for good)."""
        await self.records.sent(ids)

    async def renew(self, ids: Sequence[int]) -> None:
        """Hold the answers this worker keeps for another ``claim_ms``."""
        await self.records.renew(ids, until_ms=self.clock() + self.claim_ms)

    async def take_over(self) -> list[tuple[KeptRecord, float]]:
        """Claim the answers whose worker stopped holding them (it died, or this one
        before a restart), each with the seconds it has waited: one cheap read when there
        are none, as nearly always."""
        now = self.clock()
        ids = await self.records.unclaimed(now)
        if not ids:
            return []
        taken = await self.records.take_over(ids, now_ms=now, until_ms=now + self.claim_ms)
        return [(record, max(0, now - record.created_at_ms) / 1000) for record in taken]

"""Shoes in one unit of work: a group's current shoe, replaced when spent or when the table
changes game, and moved on compare-and-set as rounds deal from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.models import ShoeRow


@dataclass(frozen=True, slots=True)
class ShoeRecord:
    """A shoe as stored; its seed is secret until ``replaced_at_ms`` is set."""

    id: int
    chat_id: int
    decks: int
    seed: bytes
    commitment: str
    dealt: int
    replaced_at_ms: int | None
    #: Its seed derivation (``bot.rules.fairness``) and the client seeds fixed into its
    #: order by its first round (None until then, and for derivation 1).
    fairness: int = 1
    client_seeds: tuple[str, ...] | None = None


_COLUMNS = (
    ShoeRow.id,
    ShoeRow.chat_id,
    ShoeRow.decks,
    ShoeRow.seed,
    ShoeRow.commitment,
    ShoeRow.dealt,
    ShoeRow.replaced_at_ms,
    ShoeRow.fairness,
    ShoeRow.client_seeds,
)


def _record(row: Any) -> ShoeRecord:
    return ShoeRecord(
        row.id,
        row.chat_id,
        row.decks,
        bytes(row.seed),
        row.commitment,
        row.dealt,
        row.replaced_at_ms,
        row.fairness,
        None if row.client_seeds is None else tuple(row.client_seeds),
    )


class ShoeRepository:
    """Shoes in one unit of work."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def current(self, chat_id: int, *, lock: bool = True) -> ShoeRecord | None:
        """The chat's shoe in use, locked (PostgreSQL) until the transaction ends unless
        ``lock`` is false (a look that must not hold up a deal)."""
        statement = select(*_COLUMNS).where(
            ShoeRow.chat_id == chat_id, ShoeRow.replaced_at_ms.is_(None)
        )
        if lock:
            statement = statement.with_for_update()
        row = (await self.session.execute(statement)).first()
        return None if row is None else _record(row)

    async def get(self, shoe_id: int) -> ShoeRecord | None:
        """A shoe by id."""
        row = (await self.session.execute(select(*_COLUMNS).where(ShoeRow.id == shoe_id))).first()
        return None if row is None else _record(row)

    async def retire(self, shoe_id: int, now_ms: int) -> None:
        """Take a shoe out of use: its seed may be shown from now on."""
        await self.session.execute(
            update(ShoeRow).where(ShoeRow.id == shoe_id).values(replaced_at_ms=now_ms)
        )

    async def create(
        self,
        chat_id: int,
        *,
        decks: int,
        seed: bytes,
        commitment: str,
        now_ms: int,
        fairness: int = 1,
    ) -> ShoeRecord:
        """A new shoe for the chat, nothing dealt from it yet, its order derived by seed
        derivation ``fairness``."""
        row = ShoeRow(
            chat_id=chat_id,
            decks=decks,
            seed=seed,
            commitment=commitment,
            dealt=0,
            created_at_ms=now_ms,
            fairness=fairness,
        )
        self.session.add(row)
        await self.session.flush()
        return ShoeRecord(row.id, chat_id, decks, seed, commitment, 0, None, fairness)

    async def deal(
        self,
        shoe_id: int,
        *,
        offset: int,
        cards: int,
        client_seeds: tuple[str, ...] | None = None,
    ) -> bool:
        """Move the shoe on by ``cards`` if ``offset`` were dealt from it before (compare-and-
        set); False if another round dealt from it first. ``client_seeds``: those its first
        deal fixed into its order."""
        values: dict[str, Any] = {"dealt": ShoeRow.dealt + cards}
        if client_seeds is not None:
            values["client_seeds"] = list(client_seeds)
        moved = await self.session.execute(
            update(ShoeRow).where(ShoeRow.id == shoe_id, ShoeRow.dealt == offset).values(**values)
        )
        return bool(moved.rowcount)  # type: ignore[attr-defined]

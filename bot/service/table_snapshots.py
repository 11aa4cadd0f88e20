"""A group's table as its watchers see it: the open round, where the table stands
(``RoundKey``), the group's settings, and the chips of every watcher and the names the
round shows. The Mini App's live feed reads it once per change and
shares it among everyone watching that group."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.engine.round import Round
from bot.engine.settings import Settings
from bot.service.core import GroupSettings
from bot.service.records import Balance, Person
from bot.service.round_changes import NO_ROUND, RoundKey
from bot.store.unit_of_work import Store


@dataclass(frozen=True, slots=True)
class TableSnapshot:
    """A group's table at ``key``: its open round (``None`` between rounds, whose seed
    callers must not show), settings, the chips of the players asked for and the names of
    the people in the round."""

    chat_id: int
    key: RoundKey
    round: Round | None
    settings: Settings
    balances: dict[int, Balance]
    people: dict[int, Person]


class TableSnapshots:
    """Reads groups' tables for those watching them."""

    def __init__(self, store: Store, *, group_settings: GroupSettings) -> None:
        self.store = store
        self.group_settings = group_settings

    async def table_snapshot(self, chat_id: int, viewers: Sequence[int]) -> TableSnapshot:
        """The group's table with the chips of ``viewers``.

        One statement (``TableReads.table``): its key is the round's it shows, and the
        chips are those of that moment; between rounds, the group's settings are read
        after it."""
        store = self.store
        read = await store.table_reads.table(chat_id, sorted(set(viewers)))
        state = read.round
        key = NO_ROUND if state is None else RoundKey(state.id, state.version)
        if state is not None and not state.phase.is_open:
            state = None  # ended: the page shows no round (and never before: no seed)
        if state is not None:
            settings = state.settings
        else:
            settings = self.group_settings.of(await store.chat_lookup.get(chat_id))
        people = {row[0]: Person(*row) for row in read.names} if state is not None else {}
        return TableSnapshot(chat_id, key, state, settings, read.balances, people)

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


def people_in(state: Round | None) -> list[int]:
    """The users a round's view names: the dealer (or high bidder), bettors and grabbers."""
    if state is None:
        return []
    ids = [bet.user_id for bet in state.bets] + [grab.user_id for grab in state.grabs]
    ids += [uid for uid in (state.dealer_id, state.high_bidder) if uid is not None]
    return sorted(set(ids))


class TableSnapshots:
    """Reads groups' tables for those watching them."""

    def __init__(self, store: Store, *, group_settings: GroupSettings) -> None:
        self.store = store
        self.group_settings = group_settings

    async def table_snapshot(self, chat_id: int, viewers: Sequence[int]) -> TableSnapshot:
        """The group's table with the chips of ``viewers``.

        A few single reads, not one transaction: its key is the round's it shows (read
        whole, in one statement), so it is never ahead of what it shows; the chips, read
        after, may be newer, and the change that made them is read again on its notice."""
        store = self.store
        latest = await store.table_reads.latest_round(chat_id)
        state = await store.round_commands.whole(latest[0]) if latest is not None else None
        key = NO_ROUND if state is None else RoundKey(state.id, state.version)
        if state is not None and not state.phase.is_open:
            state = None  # ended: the page shows no round (and never before: no seed)
        if state is not None:
            settings = state.settings
        else:
            settings = self.group_settings.of(await store.chat_lookup.get(chat_id))
        balances = await store.table_reads.balances(chat_id, sorted(set(viewers)))
        rows = await store.table_reads.names(people_in(state))
        people = {row[0]: Person(*row) for row in rows}
        return TableSnapshot(chat_id, key, state, settings, balances, people)

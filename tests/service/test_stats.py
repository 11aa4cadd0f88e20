"""/stats and /top against the ledger: after a few played rounds each participant's net is
what the ledger moved for them in those rounds, on SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import func, select

from bot.engine.round import Phase, RoundSettled
from bot.service.game import GameService
from bot.store.db import Database
from bot.store.models import Account, LedgerTransaction, Posting
from tests.helpers.controls import Clock
from tests.helpers.game import (
    DEALER,
    GROUP,
    PLAYERS,
    check_ledger,
    fund,
    open_table,
    play_envelope_round,
)

BETTORS = PLAYERS[:4]


async def play_round(service: GameService, clock: Clock, stakes: list[int]) -> RoundSettled:
    bets = zip(BETTORS, stakes, strict=True)
    final = await play_envelope_round(service, clock, bets, bid=20_000)
    assert final.round is not None and final.round.phase is Phase.SETTLED
    clock.advance(30)
    return next(event for event in final.events if isinstance(event, RoundSettled))


async def ledger_nets(db: Database) -> dict[int, int]:
    """What the ledger moved for each player of the group in its rounds' transactions."""
    async with db.transaction() as session:
        rows = await session.execute(
            select(Account.user_id, func.sum(Posting.amount))
            .join(Posting, Posting.account_id == Account.id)
            .join(LedgerTransaction, LedgerTransaction.id == Posting.transaction_id)
            .where(
                Account.chat_id == GROUP,
                Account.kind.in_(("available", "held")),
                LedgerTransaction.round_id.is_not(None),
            )
            .group_by(Account.user_id)
        )
        return {user_id: int(total) for user_id, total in rows.tuples()}


async def test_stats_and_leaders_add_up_to_what_the_ledger_moved(
    service: GameService, db: Database, clock: Clock
) -> None:
    await open_table(service)
    for person in (DEALER, *BETTORS):
        await fund(service, person, 200_000)
    assert await service.player_stats(GROUP, DEALER.id) is None
    settlements = [
        await play_round(service, clock, stakes)
        for stakes in ([100, 200, 300, 400], [500, 100, 100, 100], [100, 1_000, 200, 300])
    ]
    await check_ledger(db)
    nets = await ledger_nets(db)
    played = [s for s in settlements if not s.settlement.redeal]
    assert played, "the seeds re-dealt every round"
    for person in (DEALER, *BETTORS):
        stats = await service.player_stats(GROUP, person.id)
        if person is DEALER:
            own = [s.settlement.dealer_net for s in played]
        else:
            own = [s.settlement.outcomes[person.id].net for s in played]
        if not own:
            assert stats is None
            continue
        assert stats is not None
        assert stats.net == nets[person.id] == sum(own)
        assert stats.rounds == len(own)
        assert stats.won == sum(net > 0 for net in own)
        assert stats.biggest_win == max([0, *own])
        assert stats.best is not None and stats.best.multiplier >= 1

    ranked = sorted(nets.items(), key=lambda item: (-item[1], -item[0]))
    leaders = await service.leaders(GROUP)
    assert [(leader.user_id, leader.net) for leader in leaders.all_time] == ranked
    assert leaders.recent == leaders.all_time
    clock.advance(8 * 86_400)  # a week later the rounds are only in the all-time list
    later = await service.leaders(GROUP)
    assert later.recent == [] and later.all_time == leaders.all_time

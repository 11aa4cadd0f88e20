"""A round's results and board survive a crash: ended rounds whose results did not go out
are found again, with what ended them rebuilt from the database; a worker holds the job of
sending one with a lease, and a job whose worker died (its lease ran out before it marked
the message delivered) is found and can be taken over."""

from __future__ import annotations

import asyncio

from bot.engine.round import Phase, RoundSettled, RoundVoided, VoidReason
from bot.service.game import BOARD_REFUSED, DELIVERY_LEASE_MS, GameService
from bot.store.db import Database
from tests.helpers.controls import Clock
from tests.helpers.game import ADMIN, DEALER, GROUP, PLAYERS, TEST_SETTINGS, fund, open_table


async def _settle_a_round(service: GameService, clock: Clock) -> tuple[int, RoundSettled]:
    await open_table(service)
    await fund(service, DEALER, 100_000)
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None
    await service.bid(GROUP, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(started.round.id)
    for player in PLAYERS[:3]:
        await fund(service, player, 50_000)
        await service.bet(GROUP, player, 700)
    clock.advance(TEST_SETTINGS.bet_seconds)
    await service.advance(started.round.id)
    clock.advance(TEST_SETTINGS.grab_seconds)
    result = await service.advance(started.round.id)
    ended = result.events[-1]
    assert isinstance(ended, RoundSettled), "the fixed test seed settles this round"
    return started.round.id, ended


async def test_a_settled_round_not_announced_is_found_with_its_settlement(
    service: GameService, clock: Clock
) -> None:
    round_id, ended = await _settle_a_round(service, clock)
    [(state, rebuilt)] = await service.unannounced()
    assert state.id == round_id
    assert isinstance(rebuilt, RoundSettled)
    assert rebuilt.seed == ended.seed
    assert dict(rebuilt.settlement.outcomes) == dict(ended.settlement.outcomes)
    assert list(rebuilt.settlement.outcomes) == list(ended.settlement.outcomes)
    assert rebuilt.settlement.dealer_net == ended.settlement.dealer_net
    assert rebuilt.settlement.platform_net == ended.settlement.platform_net


async def test_an_announced_round_is_not_announced_again(
    service: GameService, clock: Clock
) -> None:
    round_id, _ = await _settle_a_round(service, clock)
    assert await service.claim_announcement(round_id)
    await service.mark_announced(round_id)
    clock.advance(2 * DELIVERY_LEASE_MS / 1000)
    assert not await service.claim_announcement(round_id)  # delivered: whoever asks, later
    assert not await service.renew_announcement_claim(round_id)
    assert await service.unannounced() == []


async def test_a_claimed_announcement_is_claimable_again_once_its_lease_ran_out_not_before(
    service: GameService, clock: Clock
) -> None:
    round_id, _ = await _settle_a_round(service, clock)
    assert await service.claim_announcement(round_id, lease_ms=5_000)
    # The worker that claimed it is sending it (or died doing so): nobody else may yet.
    assert not await service.claim_announcement(round_id, lease_ms=5_000)
    assert await service.unannounced() == []
    clock.advance(4.999)
    assert not await service.claim_announcement(round_id, lease_ms=5_000)
    assert await service.unannounced() == []
    clock.advance(0.001)
    [(state, _)] = await service.unannounced()
    assert state.id == round_id
    assert await service.claim_announcement(round_id, lease_ms=5_000)
    assert not await service.claim_announcement(round_id, lease_ms=5_000)


async def test_a_renewed_announcement_claim_outlives_its_first_lease(
    service: GameService, clock: Clock
) -> None:
    round_id, _ = await _settle_a_round(service, clock)
    assert await service.claim_announcement(round_id, lease_ms=3_000)
    clock.advance(2)
    assert await service.renew_announcement_claim(round_id, lease_ms=3_000)
    clock.advance(2)  # past the first lease, within the renewed one
    assert not await service.claim_announcement(round_id, lease_ms=3_000)
    assert await service.unannounced() == []
    clock.advance(1)
    assert await service.claim_announcement(round_id, lease_ms=3_000)


async def test_the_sweep_leaves_a_just_ended_unclaimed_round_to_the_worker_that_ended_it(
    service: GameService, clock: Clock
) -> None:
    round_id, _ = await _settle_a_round(service, clock)
    # At start-up every unclaimed one is sent at once ...
    assert [state.id for state, _ in await service.unannounced()] == [round_id]
    # ... the sweep of a running worker waits a lease for the one that has it queued.
    assert await service.unannounced(unclaimed_grace_ms=5_000) == []
    clock.advance(5)
    assert [s.id for s, _ in await service.unannounced(unclaimed_grace_ms=5_000)] == [round_id]


async def test_one_of_several_workers_claiming_an_announcement_at_once_gets_it(
    db: Database, service: GameService, clock: Clock
) -> None:
    round_id, _ = await _settle_a_round(service, clock)
    workers = [GameService(db, service.defaults, clock=clock) for _ in range(5)]
    claims = await asyncio.gather(*(worker.claim_announcement(round_id) for worker in workers))
    assert sorted(claims) == [False] * 4 + [True]


async def test_a_claimed_board_not_posted_is_claimable_again_once_its_lease_ran_out_not_before(
    service: GameService, clock: Clock
) -> None:
    await open_table(service)
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    round_id = started.round.id
    assert await service.unposted_boards() == [(round_id, GROUP)]
    assert await service.unposted_boards(unclaimed_grace_ms=5_000) == []
    assert await service.claim_board(round_id, lease_ms=5_000)
    assert await service.board_message(round_id) is None  # not posted until Telegram has it
    assert not await service.claim_board(round_id, lease_ms=5_000)
    assert await service.unposted_boards() == []
    clock.advance(4.999)
    assert not await service.claim_board(round_id, lease_ms=5_000)
    clock.advance(0.001)
    assert await service.unposted_boards() == [(round_id, GROUP)]
    assert await service.claim_board(round_id, lease_ms=5_000)
    await service.set_board_message(round_id, 42)
    clock.advance(5)
    assert await service.board_message(round_id) == 42
    assert not await service.claim_board(round_id, lease_ms=5_000)
    assert not await service.renew_board_claim(round_id)
    assert await service.unposted_boards() == []


async def test_a_board_taken_over_says_what_the_worker_that_first_took_it_knew(
    service: GameService, clock: Clock
) -> None:
    await open_table(service)
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    round_id = started.round.id
    first = await service.claim_board(round_id, lease_ms=5_000, newest_known=40)
    assert first is not None and first.copy_after is None  # nobody held it before
    clock.advance(5)  # that worker died: its lease ran out
    second = await service.claim_board(round_id, lease_ms=5_000, newest_known=None)
    assert second is not None and second.copy_after == 40
    clock.advance(5)  # and so did this one: what the first knew still bounds a copy
    third = await service.claim_board(round_id, lease_ms=5_000, newest_known=55)
    assert third is not None and third.copy_after == 40


async def test_a_board_claimed_by_one_worker_is_refused_to_another_until_its_lease_ran_out(
    database_url: str, service: GameService, clock: Clock
) -> None:
    # The other worker has connections of its own (another process): it sees the lease
    # only once it is committed.
    other_db = Database.from_url(database_url)
    try:
        other = GameService(other_db, service.defaults, clock=clock)
        await open_table(service)
        started = await service.start_round(GROUP, actor=ADMIN)
        assert started.round is not None
        round_id = started.round.id
        assert await service.claim_board(round_id, lease_ms=5_000)
        assert not await other.claim_board(round_id, lease_ms=5_000)
        clock.advance(3)
        assert await service.renew_board_claim(round_id, lease_ms=5_000)
        clock.advance(3)  # past the first lease, within the renewed one
        assert not await other.claim_board(round_id, lease_ms=5_000)
        clock.advance(2)
        assert await other.claim_board(round_id, lease_ms=5_000)
        assert not await service.claim_board(round_id, lease_ms=5_000)
        await other.set_board_message(round_id, 42)
        assert await service.board_message(round_id) == 42
        assert not await service.renew_board_claim(round_id)
    finally:
        await other_db.dispose()


async def test_a_void_round_is_found_with_its_reason(service: GameService, clock: Clock) -> None:
    await open_table(service)
    started = await service.start_round(GROUP, actor=ADMIN)
    assert started.round is not None
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(started.round.id)
    [(state, rebuilt)] = await service.unannounced()
    assert rebuilt == RoundVoided(VoidReason.NO_BIDS, state.seed)


async def test_rounds_that_ended_long_ago_are_left_alone(
    service: GameService, clock: Clock
) -> None:
    await _settle_a_round(service, clock)
    clock.advance(2 * 3600)
    assert await service.unannounced() == []


async def test_an_ended_rounds_board_is_to_be_closed_until_recorded_after_the_grace(
    service: GameService, clock: Clock
) -> None:
    await open_table(service)
    open_round = await service.start_round(GROUP, actor=DEALER)
    assert open_round.round is not None
    assert await service.unclosed_boards(grace_ms=0) == []  # open: its board is live
    assert await service.round_ended(open_round.round.id) is False

    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(open_round.round.id)  # voided: nobody bid
    assert await service.round_ended(open_round.round.id) is True
    assert await service.unclosed_boards(grace_ms=DELIVERY_LEASE_MS) == []  # its worker's
    clock.advance(DELIVERY_LEASE_MS / 1000)
    assert await service.unclosed_boards(grace_ms=DELIVERY_LEASE_MS) == [
        (open_round.round.id, GROUP)
    ]

    # Another worker posted a new board meanwhile: a mark for the one edited is refused.
    await service.set_board_message(open_round.round.id, 8)
    await service.mark_board_closed(open_round.round.id, 7)
    assert len(await service.unclosed_boards(grace_ms=0)) == 1
    await service.mark_board_closed(open_round.round.id, 8)
    assert await service.unclosed_boards(grace_ms=0) == []
    # A board recorded anew (a worker that died after sending it) is to be closed again.
    await service.set_board_message(open_round.round.id, 9)
    assert len(await service.unclosed_boards(grace_ms=0)) == 1
    await service.mark_board_closed(open_round.round.id, 9)
    assert await service.unclosed_boards(grace_ms=0) == []
    # So is one an edit rendered before the end put buttons back on.
    await service.mark_board_open(open_round.round.id)
    assert await service.unclosed_boards(grace_ms=0) == [(open_round.round.id, GROUP)]


async def test_a_replaced_board_is_remembered_until_taken_down_and_left_to_its_worker_first(
    service: GameService, clock: Clock
) -> None:
    await open_table(service)
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None
    round_id = started.round.id
    await service.set_board_message(round_id, 7, Phase.BIDDING)

    assert await service.replace_board_message(round_id, 7, 8, Phase.BIDDING) is True
    assert await service.board_message(round_id) == 8
    assert await service.replaced_boards(grace_ms=DELIVERY_LEASE_MS) == []  # its worker's
    clock.advance(DELIVERY_LEASE_MS / 1000)
    assert await service.replaced_boards(grace_ms=DELIVERY_LEASE_MS) == [(round_id, GROUP, 7)]

    # Another worker replaced 7 too, later: its message is not recorded as the board.
    assert await service.replace_board_message(round_id, 7, 9, Phase.BIDDING) is False
    assert await service.board_message(round_id) == 8

    # Nor is 8 replaced while 7 is still to be taken down: the database would forget 7.
    assert await service.boards(round_id) == (8, 7)
    assert await service.replace_board_message(round_id, 8, 10, Phase.BETTING) is False
    assert await service.board_message(round_id) == 8

    await service.replaced_board_gone(round_id, 6)  # not the one remembered: nothing
    assert len(await service.replaced_boards(grace_ms=0)) == 1
    await service.replaced_board_gone(round_id, 7)
    assert await service.replaced_boards(grace_ms=0) == []
    assert await service.boards(round_id) == (8, None)
    # A press on the new board marked it a stray before it was recorded: it is the board.
    assert await service.mark_stray_board(round_id, 10) is True
    assert await service.replace_board_message(round_id, 8, 10, Phase.BETTING) is True
    assert await service.boards(round_id) == (10, 8)


async def test_a_pressed_message_that_is_not_the_board_is_taken_down_as_a_replaced_board(
    service: GameService, clock: Clock
) -> None:
    await open_table(service)
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None
    round_id = started.round.id
    # A press on a board not recorded yet: its worker may be recording it (then it stays)...
    assert await service.mark_stray_board(round_id, 7) is True
    await service.set_board_message(round_id, 7, Phase.BIDDING)
    assert await service.replaced_boards(grace_ms=0) == []
    assert await service.mark_stray_board(round_id, 7) is False  # the board itself
    # ...or died after Telegram took it: another board is recorded, and it is taken down.
    assert await service.mark_stray_board(round_id, 6) is True
    assert await service.replaced_boards(grace_ms=DELIVERY_LEASE_MS) == []  # a lease first
    clock.advance(DELIVERY_LEASE_MS / 1000)
    assert await service.replaced_boards(grace_ms=DELIVERY_LEASE_MS) == [(round_id, GROUP, 6)]
    # One to take down at a time: the one remembered is not forgotten for another.
    assert await service.mark_stray_board(round_id, 9) is False
    await service.replaced_board_gone(round_id, 6)
    assert await service.replaced_boards(grace_ms=0) == []
    assert await service.board_message(round_id) == 7


async def test_an_open_round_whose_board_does_not_show_its_phase_is_found_until_recorded(
    service: GameService, clock: Clock
) -> None:
    await open_table(service)
    await fund(service, DEALER, 100_000)
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None
    round_id = started.round.id
    assert await service.unshown_phases() == []  # no board yet: posting it shows the phase
    await service.set_board_message(round_id, 7, Phase.BIDDING)
    assert await service.unshown_phases() == []

    await service.bid(GROUP, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(round_id)  # betting opens: the board still shows bidding
    assert await service.unshown_phases() == [(round_id, GROUP, Phase.BETTING)]

    await service.mark_phase_shown(round_id, 6, Phase.BETTING)  # not the board: nothing
    assert len(await service.unshown_phases()) == 1
    await service.mark_phase_shown(round_id, 7, Phase.BETTING)
    assert await service.unshown_phases() == []

    clock.advance(TEST_SETTINGS.bet_seconds)
    await service.advance(round_id)  # nobody bet: over, nothing more to show
    assert await service.unshown_phases() == []


async def test_a_refused_board_has_no_phase_to_show(service: GameService) -> None:
    await open_table(service)
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None
    await service.set_board_message(started.round.id, BOARD_REFUSED)
    assert await service.unshown_phases() == []


async def test_a_deadline_waits_while_no_board_shows_its_phase_for_at_most_the_hold(
    service: GameService, clock: Clock
) -> None:
    """docs/rules.md §1: a window does not close before the group could see it."""
    await open_table(service)
    await fund(service, DEALER, 100_000)
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None
    round_id = started.round.id
    await service.bid(GROUP, DEALER, 10_000)
    clock.advance(TEST_SETTINGS.bid_seconds)
    assert await service.phase_unseen(round_id) is True  # no board was ever posted
    await service.set_board_message(round_id, 7, Phase.BIDDING)
    assert await service.phase_unseen(round_id) is False

    await service.advance(round_id)  # betting opens; the board still shows bidding
    clock.advance(TEST_SETTINGS.bet_seconds)
    assert await service.phase_unseen(round_id) is True
    assert await service.phase_unseen(round_id, hold_ms=TEST_SETTINGS.bet_seconds * 1000) is True
    clock.advance(60)
    assert await service.phase_unseen(round_id, hold_ms=60_000) is False  # held long enough

    clock.advance(-60)
    await service.mark_phase_shown(round_id, 7, Phase.BETTING)
    assert await service.phase_unseen(round_id) is False


async def test_a_board_telegram_refused_holds_no_deadline(
    service: GameService, clock: Clock
) -> None:
    await open_table(service)
    started = await service.start_round(GROUP, actor=DEALER)
    assert started.round is not None
    await service.set_board_message(started.round.id, BOARD_REFUSED)
    clock.advance(TEST_SETTINGS.bid_seconds)
    assert await service.phase_unseen(started.round.id) is False
    assert await service.phase_unseen(404) is False  # no such round


async def test_board_renewals_that_come_together_are_written_together_each_told_its_own(
    service: GameService, clock: Clock
) -> None:
    round_ids = []
    for chat_id in (GROUP, GROUP - 1, GROUP - 2, GROUP - 3):
        await open_table(service, chat_id)
        started = await service.start_round(chat_id, actor=ADMIN)
        assert started.round is not None
        round_ids.append(started.round.id)
        assert await service.claim_board(started.round.id, lease_ms=3_000)
    await service.set_board_message(round_ids[2], 42)  # posted: nothing to renew
    renewals = service.store.delivery_records.renewals
    writes = renewals.writes
    clock.advance(2)

    held = await asyncio.gather(
        *(service.renew_board_claim(round_id, lease_ms=3_000) for round_id in round_ids)
    )

    assert held == [True, True, False, True]
    # The first is written alone, the three that came while it was, together.
    assert renewals.writes == writes + 2
    clock.advance(2)  # past the first leases, within the renewed ones
    for round_id in round_ids:
        assert await service.claim_board(round_id, lease_ms=3_000) is None
    clock.advance(1)
    assert [await service.claim_board(r, lease_ms=3_000) is not None for r in round_ids] == [
        True,
        True,
        False,
        True,
    ]

"""Helpers for service tests: rounds played through the service, funds, and the ledger
invariants checked in the database."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sqlalchemy import func, select

from bot.engine.round import RoundSettled, RoundVoided
from bot.engine.settings import Settings
from bot.rules.envelope import MAX_AMOUNT as MAX_ENVELOPE
from bot.rules.split import split_envelope
from bot.service.game import CommandResult, GameService, Person
from bot.store import rounds
from bot.store.db import Database
from bot.store.models import Account, LedgerTransaction, Posting, RoundRow
from tests.helpers.controls import Clock

GROUP = -1001
DEALER = Person(1, "Dealer", "dealer")
ADMIN = Person(99, "Admin", "admin")
PLAYERS = [Person(10 + i, f"Player{i}", f"player{i}") for i in range(8)]

#: Small numbers so amounts are easy to follow: bids from 10.00, bets 1.00-50.00.
TEST_SETTINGS = Settings(
    bid_seconds=18,
    bet_seconds=40,
    grab_seconds=20,
    pause_seconds=5,
    min_bid=1_000,
    bid_increment=1_000,
    min_bet=100,
    max_bet=5_000,
)


async def open_table(service: GameService, chat_id: int = GROUP) -> None:
    await service.set_open(chat_id, ADMIN, True)


async def play_envelope_round(
    service: GameService,
    clock: Clock,
    stakes: Iterable[tuple[Person, int]],
    *,
    bid: int,
    chat_id: int = GROUP,
) -> CommandResult:
    """A 68 NiuNiu round of ``TEST_SETTINGS`` played through: the dealer bids ``bid``,
    each player bets their stake once betting opens, and everyone grabs, the dealer last;
    what that last grab did (the round's end, unless the house's share re-deals it)."""
    started = await service.start_round(chat_id, actor=DEALER)
    assert started.round is not None
    round_id = started.round.id
    await service.bid(chat_id, DEALER, bid)
    clock.advance(TEST_SETTINGS.bid_seconds)
    await service.advance(round_id)
    bettors = list(stakes)
    for player, stake in bettors:
        await service.bet(chat_id, player, stake)
    clock.advance(TEST_SETTINGS.bet_seconds)
    await service.advance(round_id)
    for player, _ in bettors:
        await service.grab(chat_id, player, round_id=round_id)
    return await service.grab(chat_id, DEALER, round_id=round_id)


async def fund(service: GameService, person: Person, amount: int, chat_id: int = GROUP) -> None:
    await service.credit(chat_id, ADMIN, person.id, amount)


async def check_ledger(db: Database) -> None:
    """Every invariant of the ledger, checked in the database itself."""
    async with db.transaction() as session:
        unbalanced = (
            await session.execute(
                select(Posting.transaction_id)
                .group_by(Posting.transaction_id)
                .having(func.sum(Posting.amount) != 0)
            )
        ).all()
        assert unbalanced == [], f"transactions that do not sum to zero: {unbalanced}"
        single_leg = (
            await session.execute(
                select(LedgerTransaction.id)
                .outerjoin(Posting, Posting.transaction_id == LedgerTransaction.id)
                .group_by(LedgerTransaction.id)
                .having(func.count(Posting.id) < 2)
            )
        ).all()
        assert single_leg == [], f"transactions with fewer than two postings: {single_leg}"
        accounts = (await session.scalars(select(Account))).all()
        sums = dict(
            (
                await session.execute(
                    select(Posting.account_id, func.sum(Posting.amount)).group_by(
                        Posting.account_id
                    )
                )
            )
            .tuples()
            .all()
        )
        per_chat: dict[int, int] = {}
        for account in accounts:
            assert account.balance == (sums.get(account.id) or 0), (
                f"account {account.id} caches {account.balance}, postings {sums.get(account.id)}"
            )
            if account.kind in ("available", "held", "bank"):
                assert account.balance >= 0, f"account {account.id} is negative"
            per_chat[account.chat_id] = per_chat.get(account.chat_id, 0) + account.balance
        assert all(total == 0 for total in per_chat.values()), per_chat
        # A round that ended holds nothing: all held chips belong to open rounds.
        open_rounds = (
            await session.scalar(
                select(func.count())
                .select_from(RoundRow)
                .where(RoundRow.phase.in_(("bidding", "betting", "grabbing")))
            )
        ) or 0
        held_total = sum(a.balance for a in accounts if a.kind == "held")
        if open_rounds == 0:
            assert held_total == 0, f"{held_total} cents held with no open round"


# -- added for the round-rule, state-machine, concurrency and recovery tests ------------


def find_seed(
    count: int, total: int, wanted: Callable[[list[int]], bool], *, limit: int = 100_000
) -> bytes:
    """The first seed ``i.to_bytes(32, 'big')`` whose envelope split of ``total`` cents in
    ``count`` shares (in grab order) satisfies ``wanted``."""
    for i in range(limit):
        seed = i.to_bytes(32, "big")
        if wanted(split_envelope(seed, count, total, max_share=MAX_ENVELOPE)):
            return seed
    raise AssertionError(f"no seed in {limit} tries splits {total} in {count} as wanted")


async def check_holds(db: Database) -> None:
    """Each player's held chips are exactly what the open rounds hold for them
    (``Round.holds()``): a finished round holds nothing."""
    async with db.transaction() as session:
        open_ids = (
            await session.scalars(
                select(RoundRow.id).where(RoundRow.phase.in_(("bidding", "betting", "grabbing")))
            )
        ).all()
        expected: dict[tuple[int, int], int] = {}
        for round_id in open_ids:
            state = await rounds.RoundRepository(session).load(round_id, lock=False)
            assert state is not None
            for user_id, amount in state.holds().items():
                key = (state.chat_id, user_id)
                expected[key] = expected.get(key, 0) + amount
        held = (
            await session.execute(
                select(Account.chat_id, Account.user_id, Account.balance).where(
                    Account.kind == "held"
                )
            )
        ).all()
        actual = {(chat, user): amount for chat, user, amount in held if amount}
        expected = {key: amount for key, amount in expected.items() if amount}
        assert actual == expected, f"held chips {actual} != holds of open rounds {expected}"


async def check_round_transactions(db: Database) -> None:
    """Only a settlement changes what a player owns: every bid, bet, cancel and void
    transaction moves chips between a player's own available and held accounts."""
    async with db.transaction() as session:
        rows = (
            await session.execute(
                select(
                    LedgerTransaction.id,
                    LedgerTransaction.kind,
                    Account.kind,
                    Account.user_id,
                    Posting.amount,
                )
                .join(Posting, Posting.transaction_id == LedgerTransaction.id)
                .join(Account, Account.id == Posting.account_id)
                .where(LedgerTransaction.kind.in_(("bid", "bet", "bet_cancel", "void")))
            )
        ).all()
        per_owner: dict[tuple[int, int], int] = {}
        for tx_id, tx_kind, account_kind, user_id, amount in rows:
            assert account_kind in ("available", "held"), (
                f"{tx_kind} transaction {tx_id} touches the {account_kind} account"
            )
            key = (tx_id, user_id)
            per_owner[key] = per_owner.get(key, 0) + amount
        moved = {key: net for key, net in per_owner.items() if net}
        assert moved == {}, f"round transactions that change what a player owns: {moved}"


async def check_all(db: Database) -> None:
    """``check_ledger``, ``check_holds`` and ``check_round_transactions``."""
    await check_ledger(db)
    await check_holds(db)
    await check_round_transactions(db)


async def round_transactions(db: Database, round_id: int) -> list[str]:
    """The kinds of the ledger transactions of a round, oldest first."""
    async with db.transaction() as session:
        return list(
            (
                await session.scalars(
                    select(LedgerTransaction.kind)
                    .where(LedgerTransaction.round_id == round_id)
                    .order_by(LedgerTransaction.id)
                )
            ).all()
        )


def round_ends(
    results: Iterable[CommandResult], round_id: int | None = None
) -> list[RoundSettled | RoundVoided]:
    """The settle and void events in ``results`` (of round ``round_id`` only, if given)."""
    return [
        event
        for result in results
        if round_id is None or (result.round is not None and result.round.id == round_id)
        for event in result.events
        if isinstance(event, (RoundSettled, RoundVoided))
    ]

"""Rounds driven through the pure engine (no database, no clock), with a ledger that
applies each transition as the service does and checks the engine's contract on the way."""

from __future__ import annotations

from bot.engine import round as engine
from bot.engine.round import AccountKind, Round, Transition
from bot.engine.settings import Settings
from bot.rules import fairness

SETTINGS = Settings(
    bid_seconds=18,
    bet_seconds=40,
    grab_seconds=20,
    min_bid=1_000,
    bid_increment=1_000,
    min_bet=100,
    max_bet=5_000,
    dealer_fee=100,
    service_fee=50,
    envelope_fee=25,
)
RICH = 10**9
DEALER, ALICE, BOB, CAROL, OUTSIDER = 1, 2, 3, 4, 99
T0 = 1_000_000


class Ledger:
    """Applies transitions like the service does, checking the engine's contract."""

    def __init__(self) -> None:
        self.balances: dict[engine.AccountRef, int] = {}

    def apply(self, before: Round, transition: Transition[Round]) -> Round:
        assert sum(p.amount for p in transition.postings) == 0, transition.postings
        assert all(p.amount != 0 for p in transition.postings)
        assert len({p.account for p in transition.postings}) == len(transition.postings)
        assert transition.round.version == before.version + 1, (
            f"{[type(e).__name__ for e in transition.events]}: version "
            f"{before.version} -> {transition.round.version}"
        )
        for posting in transition.postings:
            self.balances[posting.account] = self.balances.get(posting.account, 0) + posting.amount
        self.check_holds(transition.round)
        return transition.round

    def check_holds(self, state: Round) -> None:
        held_now = {
            ref.user_id: amount
            for ref, amount in self.balances.items()
            if ref.kind is AccountKind.HELD and amount
        }
        assert held_now == {user: hold for user, hold in state.holds().items() if hold}


def started(
    settings: Settings = SETTINGS, seed: bytes = b"\x07" * 32, derivation: int = fairness.CURRENT
) -> Round:
    return engine.start_round(
        round_id=7, chat_id=-100, settings=settings, seed=seed, now_ms=T0, derivation=derivation
    ).round


def betting(
    settings: Settings = SETTINGS,
    seed: bytes = b"\x07" * 32,
    pool: int = 10_000,
    derivation: int = fairness.CURRENT,
) -> tuple[Round, Ledger]:
    book = Ledger()
    state = started(settings, seed, derivation)
    state = book.apply(state, engine.bid(state, DEALER, pool, free_chips=RICH, now_ms=T0 + 1))
    state = book.apply(state, engine.advance(state, state.deadline_ms, player_seeds={}))
    return state, book


def grabbing(
    bets: dict[int, int],
    settings: Settings = SETTINGS,
    seed: bytes = b"\x07" * 32,
    derivation: int = fairness.CURRENT,
) -> tuple[Round, Ledger]:
    state, book = betting(settings, seed, derivation=derivation)
    for user, amount in bets.items():
        state = book.apply(
            state, engine.bet(state, user, amount, free_chips=RICH, now_ms=state.deadline_ms - 1)
        )
    state = book.apply(state, engine.advance(state, state.deadline_ms, player_seeds={}))
    return state, book

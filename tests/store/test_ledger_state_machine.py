"""Random commands across three groups, with the ledger checked after every step.

A Hypothesis ``RuleBasedStateMachine`` drives the service with credits, debits, round
starts, bids, bets (changes and cancels too), grabs, replayed updates, table switches,
changes of game (the card games too) and of dealer (the house's bank, funded by admins)
and the clock (deadlines and sweeps). Commands may be refused (``GameError``); whatever
happens, after each step:

- every ledger transaction sums to zero and cached balances equal their postings;
- no player's available or held balance is negative;
- the mint, the house and all players of each group sum to zero, and the mint holds
  exactly minus what admins credited and debited;
- held chips equal the holds of the open rounds (``Round.holds()``): a finished round
  holds nothing;
- bids, bets, cancels and voids only move a player's chips between their own accounts;
- no round has more than one settle or void transaction;
- a shoe has dealt exactly the cards of the rounds dealt from it.

The service is async and the machine is not: each machine runs its steps on an event
loop of its own and builds its ``Database`` inside it. Each example starts from an empty
database (a fresh SQLite file, or a truncated PostgreSQL database).
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import func, select

from bot.engine import round as engine
from bot.engine.errors import GameError
from bot.engine.round import MINT, Phase
from bot.service.game import GameService, Person
from bot.store import ledger
from bot.store.db import Database
from bot.store.models import LedgerTransaction, RoundRow, ShoeRow
from tests.helpers.controls import Clock, Seeds
from tests.helpers.databases import truncate
from tests.helpers.game import ADMIN, TEST_SETTINGS, check_all

T = TypeVar("T")

#: Four groups: the test defaults; tiny envelopes (0.01 is frequent) with dealer fees;
#: small envelopes with a higher rake and rebate and no pause between rounds; Niu-Niu Poker
#: with the house dealing.
GROUP_SETTINGS: dict[int, dict[str, str]] = {
    -3001: {},
    -3002: {
        "envelope_mean_share": "0.02",
        "dealer_fee": "1",
        "service_fee": "0.50",
        "envelope_fee": "0.25",
    },
    -3003: {"envelope_mean_share": "0.05", "rake": "10%", "rebate": "1%", "pause_seconds": "0"},
    # A card table the house deals at (its bank funded at the start).
    -3004: {"ruleset": "poker29", "dealer": "house"},
}
GROUPS = list(GROUP_SETTINGS)
PEOPLE = [Person(200 + i, f"Random{i}", f"random{i}") for i in range(5)]

groups = st.sampled_from(GROUPS)
people = st.sampled_from(PEOPLE)
picks = st.integers(min_value=0, max_value=5)

MACHINE_SETTINGS = settings(
    max_examples=10,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


class LedgerMachine(RuleBasedStateMachine):
    """The service under random commands; see the module's docstring."""

    def __init__(self, prepare: Callable[[], Awaitable[str]]) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        url = self.loop.run_until_complete(prepare())
        self.db = self.loop.run_until_complete(self._database(url))
        self.clock = Clock()
        self.seeds = Seeds()
        self.service = GameService(self.db, TEST_SETTINGS, clock=self.clock, seed_source=self.seeds)
        self.update_ids = itertools.count(1)
        #: Admin credits minus debits per group, as the model of the mint.
        self.minted = dict.fromkeys(GROUPS, 0)
        #: The last command that succeeded with an update id: replaying it does nothing.
        self.last_update: tuple[str, Callable[[int], Coroutine[Any, Any, Any]], int] | None = None

    @staticmethod
    async def _database(url: str) -> Database:
        return Database.from_url(url)

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coroutine)

    def command(self, name: str, call: Callable[[int], Coroutine[Any, Any, Any]]) -> Any:
        """Run ``call(update_id)``; a refusal is fine. Remember it for a replay."""
        update_id = next(self.update_ids)
        try:
            result = self.run(call(update_id))
        except GameError:
            return None
        self.last_update = (name, call, update_id)
        return result

    def teardown(self) -> None:
        try:
            self.run(self.db.dispose())
        finally:
            self.loop.close()

    # -- setup --------------------------------------------------------------------------

    @initialize()
    def set_up_groups(self) -> None:
        async def set_up() -> None:
            for chat_id, changes in GROUP_SETTINGS.items():
                await self.service.set_open(chat_id, ADMIN, True)
                for key, value in changes.items():
                    await self.service.change_setting(chat_id, ADMIN, key, value, confirmed=True)
                for person in PEOPLE:
                    await self.service.credit(chat_id, ADMIN, person.id, 100_000)
                    self.minted[chat_id] += 100_000
                await self.service.fund(chat_id, ADMIN, 20_000)
                self.minted[chat_id] += 20_000

        self.run(set_up())

    # -- commands (plain methods; the rules below choose them) ----------------------------

    def credit(self, group: int, person: Person, amount: int) -> None:
        result = self.command(
            "credit",
            lambda update_id: self.service.credit(
                group, ADMIN, person.id, amount, update_id=update_id
            ),
        )
        if result is not None:
            self.minted[group] += amount

    def debit(self, group: int, person: Person, amount: int) -> None:
        result = self.command(
            "debit",
            lambda update_id: self.service.debit(
                group, ADMIN, person.id, amount, update_id=update_id
            ),
        )
        if result is not None:
            self.minted[group] -= amount

    def start_round(self, group: int, person: Person) -> None:
        self.command(
            "start_round",
            lambda update_id: self.service.start_round(group, actor=person, update_id=update_id),
        )

    def bid(self, group: int, person: Person, amount: int) -> None:
        self.command(
            "bid",
            lambda update_id: self.service.bid(group, person, amount, update_id=update_id),
        )

    def bet(self, group: int, person: Person, amount: int) -> None:
        self.command(
            "bet",
            lambda update_id: self.service.bet(group, person, amount, update_id=update_id),
        )

    def grab(self, group: int, person: Person, stale: bool = False) -> None:
        current = self.run(self.service.current_round(group))
        round_id = None if current is None else current.id - 1 if stale else current.id
        self.command(
            "grab",
            lambda update_id: self.service.grab(
                group, person, round_id=round_id, update_id=update_id
            ),
        )

    # -- rules ----------------------------------------------------------------------------

    @rule(
        group=groups,
        person=people,
        credit=st.booleans(),
        amount=st.sampled_from([1, 500, 1_800, 5_000, 50_000, 10**6]),
    )
    def an_admin_moves_chips(self, group: int, person: Person, credit: bool, amount: int) -> None:
        if credit:
            self.credit(group, person, amount)
        else:
            self.debit(group, person, amount)

    @rule(
        kind=st.sampled_from(["start_round", "bid", "bet", "grab", "stale grab"]),
        group=groups,
        person=people,
        amount=st.sampled_from([0, 50, 100, 1_000, 1_500, 5_000, 6_000, 30_000]),
    )
    def someone_sends_any_command(self, kind: str, group: int, person: Person, amount: int) -> None:
        """Any command at any time, with any amount: mostly refused."""
        if kind == "start_round":
            self.start_round(group, person)
        elif kind == "bid":
            self.bid(group, person, amount)
        elif kind == "bet":
            self.bet(group, person, amount)
        else:
            self.grab(group, person, stale=kind == "stale grab")

    def play_the_current_phase(self, group: int, person: Person, pick: int) -> None:
        """What players usually do: start a round, bid a little above the highest bid,
        bet (or change, or cancel), or grab as someone who has not grabbed yet."""
        current = self.run(self.service.current_round(group))
        if current is None:
            self.start_round(group, person)
        elif current.phase is Phase.BIDDING:
            least = engine.minimum_bid(current)
            self.bid(group, person, least + pick * current.settings.bid_increment // 2)
        elif current.phase is Phase.BETTING:
            if person.id == current.dealer_id:
                person = PEOPLE[(PEOPLE.index(person) + 1 + pick % 4) % len(PEOPLE)]
            has_bet = current.bet_of(person.id) is not None
            self.bet(group, person, [0 if has_bet else 300, 100, 200, 500, 1_000, 5_000][pick])
        else:
            waiting = [user for user in current.participants if current.grab_of(user) is None]
            if waiting:
                self.grab(group, Person(waiting[pick % len(waiting)]), stale=False)

    @rule(group=groups, person=people, pick=picks)
    def a_player_acts(self, group: int, person: Person, pick: int) -> None:
        self.play_the_current_phase(group, person, pick)

    @rule(moves=st.lists(st.tuples(people, picks), min_size=len(GROUPS), max_size=len(GROUPS)))
    def players_act_in_every_group(self, moves: list[tuple[Person, int]]) -> None:
        """Busy tables: in each group someone does what the phase asks for."""
        for group, (person, pick) in zip(GROUPS, moves, strict=True):
            self.play_the_current_phase(group, person, pick)

    @rule(
        group=groups,
        ruleset=st.sampled_from(["envelope68", "bullbull", "poker29", "poker29_vn"]),
        dealer=st.sampled_from(["bid", "house"]),
    )
    def an_admin_changes_the_game(self, group: int, ruleset: str, dealer: str) -> None:
        async def change() -> None:
            await self.service.change_setting(group, ADMIN, "ruleset", ruleset, confirmed=True)
            await self.service.change_setting(group, ADMIN, "dealer", dealer, confirmed=True)

        self.run(change())

    @rule(group=groups, amount=st.sampled_from([1, 2_000, 50_000]))
    def an_admin_funds_the_bank(self, group: int, amount: int) -> None:
        result = self.command(
            "fund",
            lambda update_id: self.service.fund(group, ADMIN, amount, update_id=update_id),
        )
        if result is not None:
            self.minted[group] += amount

    @rule(group=groups, on=st.sampled_from([True, True, True, False]))
    def switch_table(self, group: int, on: bool) -> None:
        self.run(self.service.set_open(group, ADMIN, on))

    @rule(seed=st.binary(min_size=32, max_size=32))
    def queue_seed(self, seed: bytes) -> None:
        self.seeds.queued.append(seed)

    # -- time ---------------------------------------------------------------------------

    @rule(seconds=st.sampled_from([1, 2, 5, 10]))
    def time_passes_and_the_sweep_runs(self, seconds: float) -> None:
        self.clock.advance(seconds)
        self.run(self.service.sweep())

    # Two rules for the same thing, so that rounds get through their phases.
    @rule(early=st.booleans())
    def the_next_deadline_timer_fires(self, early: bool) -> None:
        self.fire_the_next_deadline(early)

    @rule()
    def the_next_deadline_passes(self) -> None:
        self.fire_the_next_deadline(early=False)

    def fire_the_next_deadline(self, early: bool) -> None:
        """The JobQueue's next one-off job: the clock moves to the earliest deadline of the
        open rounds (or to 1 ms before it: then the advance must do nothing) and that
        round is advanced. With no round open, the pause passes and the sweep runs."""
        open_rounds = self.run(self.service.open_rounds())
        if not open_rounds:
            self.clock.advance(TEST_SETTINGS.pause_seconds)
            self.run(self.service.sweep())
            return
        due = min(open_rounds, key=lambda state: state.deadline_ms)
        target = due.deadline_ms - 1 if early else due.deadline_ms
        self.clock.now_ms = max(self.clock.now_ms, target)
        result = self.run(self.service.advance(due.id))
        if self.clock.now_ms < due.deadline_ms:
            assert result.events == (), "a deadline fired early"
        else:
            assert result.events, "a due deadline did nothing"

    # -- duplicates ---------------------------------------------------------------------

    @precondition(lambda self: self.last_update is not None)
    @rule()
    def replay_the_last_update(self) -> None:
        assert self.last_update is not None
        name, call, update_id = self.last_update
        before = self.run(self._transaction_count())
        result = self.run(call(update_id))
        if name not in ("credit", "debit", "fund"):
            assert result.duplicate, f"replayed {name} update {update_id} ran again"
            assert result.events == ()
        assert self.run(self._transaction_count()) == before

    async def _transaction_count(self) -> int:
        async with self.db.transaction() as session:
            return int(await session.scalar(select(func.count(LedgerTransaction.id))) or 0)

    # -- invariants -----------------------------------------------------------------------

    @invariant()
    def the_ledger_balances(self) -> None:
        self.run(check_all(self.db))
        self.run(self._check_mint_and_round_ends())

    async def _check_mint_and_round_ends(self) -> None:
        async with self.db.transaction() as session:
            mints = {
                group: await ledger.Ledger(session).account_balance(group, MINT) for group in GROUPS
            }
            ended_twice = (
                await session.execute(
                    select(LedgerTransaction.round_id, func.count())
                    .where(LedgerTransaction.kind.in_(("settle", "void")))
                    .group_by(LedgerTransaction.round_id)
                    .having(func.count() > 1)
                )
            ).all()
        assert mints == {group: -amount for group, amount in self.minted.items()}, (
            "the mint does not hold minus what admins credited and debited"
        )
        assert ended_twice == [], f"rounds settled or voided twice: {ended_twice}"
        async with self.db.transaction() as session:
            dealt: dict[int, int] = {}
            rows = await session.execute(
                select(RoundRow.shoe_id, RoundRow.shares).where(RoundRow.shoe_id.is_not(None))
            )
            for shoe_id, shares in rows:
                dealt[shoe_id] = dealt.get(shoe_id, 0) + 5 * len(shares)
            shoes = dict((await session.execute(select(ShoeRow.id, ShoeRow.dealt))).tuples().all())
        assert shoes == {shoe_id: dealt.get(shoe_id, 0) for shoe_id in shoes}, (
            f"shoes dealt {shoes}, their rounds took {dealt}"
        )


def _run_machine(prepare: Callable[[], Awaitable[str]]) -> None:
    class Machine(LedgerMachine):
        def __init__(self) -> None:
            super().__init__(prepare)

    run_state_machine_as_test(Machine, settings=MACHINE_SETTINGS)


def test_ledger_state_machine_on_sqlite(sqlite_template: Path, tmp_path: Path) -> None:
    files = itertools.count()

    async def prepare() -> str:
        target = tmp_path / f"machine_{next(files)}.db"
        shutil.copy(sqlite_template, target)
        return f"sqlite+aiosqlite:///{target}"

    _run_machine(prepare)


@pytest.mark.postgres
def test_ledger_state_machine_on_postgres(postgres_url: str) -> None:
    async def prepare() -> str:
        await truncate(postgres_url)
        return postgres_url

    _run_machine(prepare)

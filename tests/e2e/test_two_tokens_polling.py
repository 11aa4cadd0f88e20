"""One bot process with two tokens (``[telegram] token`` and ``NIUNIU_TELEGRAM_TOKENS``)
long-polls both bots: two groups of each bot open their tables and play a round, each
through its own bot. The two fakes answer at one address, as Telegram does. Every group
is then known to both fakes (its players say hello to the other bot too), so a bot that
spoke in another bot's group would be seen doing it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.engine.round import Phase, Round
from bot.fakegram.server import FakeTelegram
from bot.store.models import Account
from tests.e2e.harness import (
    CREDIT_CENTS,
    E2E,
    FAST_GAME,
    BotProcess,
    eventually,
    grab_all,
    open_table,
    start_round,
    user,
    write_config,
)
from tests.e2e.soak import live_actions
from tests.helpers.game import check_ledger

pytestmark = pytest.mark.asyncio(loop_scope="function")

SECOND_TOKEN = "123457:SECOND"
ADMIN = user(301, "Ada", "ada_admin")
#: Each bot's two groups.
GROUPS = [[-1_003_000_000_001, -1_003_000_000_002], [-1_003_000_000_003, -1_003_000_000_004]]


def players(group: int) -> tuple[dict[str, object], dict[str, object]]:
    """A dealer and a bettor of the group's own."""
    base = 400 + 10 * (-group % 10)
    return user(base, f"Dealer{base}"), user(base + 1, f"Bettor{base}")


async def play(e2e: E2E, group: int) -> Round:
    """The dealer bids, the bettor bets, both grab; the round ended."""
    dealer, bettor = players(group)
    state = await start_round(e2e, group, dealer)
    e2e.say(group, dealer, "/bid 100")
    state = await e2e.wait_phase(group, Phase.BETTING, state.id)
    e2e.say(group, bettor, "/bet 5")
    await e2e.wait_bets(group, 1)
    state = await e2e.wait_phase(group, Phase.GRABBING, state.id)
    await grab_all(e2e, group, state, [bettor, dealer])
    return await e2e.wait_ended(state.id)


async def test_one_process_polls_both_tokens_and_each_bot_plays_in_its_own_groups(
    tmp_path: Path,
) -> None:
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'e2e.db'}"
    config = write_config(tmp_path / "niuniu.toml", game=FAST_GAME)
    async with (
        FakeTelegram() as first,
        FakeTelegram(token=SECOND_TOKEN, bot_username="niuniu_second_bot") as second,
    ):
        first.host(second)  # one Bot API address for both tokens
        fakes = [first, second]
        env = {"NIUNIU_TELEGRAM_TOKENS": SECOND_TOKEN}
        bot = BotProcess(first, config, database_url, tmp_path / "bot.log", env)
        await bot.start()
        sessions = [E2E(fake, bot, database_url) for fake in fakes]
        try:
            await eventually(lambda: second.is_polling, what="the second bot to poll")
            for e2e, groups in zip(sessions, GROUPS, strict=True):
                for group in groups:
                    await open_table(e2e, group, ADMIN, list(players(group)))
            for fake, others in ((first, GROUPS[1]), (second, GROUPS[0])):
                for group in others:  # the other bot hears of the group too
                    fake.post_message(group, players(group)[0], "hello", chat_title="Other")
            games = [(bot_index, g) for bot_index, groups in enumerate(GROUPS) for g in groups]
            rounds = await asyncio.gather(*(play(sessions[i], g) for i, g in games))
            ended = dict(zip(games, rounds, strict=True))
            log = bot.log()
            assert [state.phase.is_open for state in rounds] == [False] * len(games), log
            await check_ledger(sessions[0].database)
            async with sessions[0].database.transaction() as session:
                chats = [group for _, group in games]
                accounts = (
                    await session.execute(
                        select(Account.kind, Account.balance).where(Account.chat_id.in_(chats))
                    )
                ).all()
            held = sum(balance for kind, balance in accounts if kind != "mint")
            assert held == 2 * CREDIT_CENTS * len(games), accounts  # no chip lost
            for (bot_index, group), state in ended.items():
                own, other = fakes[bot_index], fakes[1 - bot_index]
                assert [e for e in own.transcript(group) if e["kind"] == "send"], group
                assert other.transcript(group) == [], (group, other.transcript(group))
                await eventually(
                    lambda fake=own, g=group, s=state: (
                        not any(
                            live_actions(m["reply_markup"]).get(s.id)
                            for m in fake.messages(g).values()
                        )
                    ),
                    what="the ended round's board without live buttons",
                )
        finally:
            await bot.kill()
            for e2e in sessions:
                await e2e.close()

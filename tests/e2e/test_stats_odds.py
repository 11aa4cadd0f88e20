"""/stats, /top and /odds through the real bot process and the fake Telegram.

A Bull Bull round is played in a group (a dealer who bids, two bettors, one named in
HTML); then each participant's /stats is their stored result, /top ranks them by net over
the last days and all time with their names escaped, an admin's /odds gives the table's
exact figures (no commission: nobody has an edge), and the same /odds from a player is
refused.
"""

from __future__ import annotations

import pytest

from bot.engine.round import Phase
from bot.money import format_amount, format_signed
from tests.e2e.harness import E2E, open_table, shown, start_round, user

pytestmark = pytest.mark.asyncio(loop_scope="module")

GROUP = -1_001_000_000_701
ADMIN = user(701, "Ada", "ada_admin")
DEALER = user(702, "Bao", "bao")
BETTORS = [user(703, "<b>Chen</b>", "chen"), user(704, "Dewi")]
NEWCOMER = user(705, "Eko")


async def test_stats_top_and_odds_answer_after_a_round(e2e: E2E) -> None:
    await open_table(
        e2e, GROUP, ADMIN, [DEALER, *BETTORS, NEWCOMER], settings={"ruleset": "bullbull"}
    )
    state = await start_round(e2e, GROUP, DEALER)
    e2e.say(GROUP, DEALER, "/bid 100")
    await e2e.wait_phase(GROUP, Phase.BETTING, state.id)
    for bettor, text in zip(BETTORS, ("/bet 5", "/bet 10"), strict=True):
        e2e.say(GROUP, bettor, text)
    await e2e.wait_bets(GROUP, len(BETTORS))
    ended = await e2e.wait_ended(state.id)
    assert ended.phase is Phase.SETTLED
    lines = await e2e.service.results(ended.id)
    nets = {line.user_id: line.net for line in lines}
    texts = await e2e.texts(GROUP)

    for person in (DEALER, *BETTORS):
        answer = await e2e.ask(GROUP, person, "/stats")
        net = nets[person["id"]]
        found = texts.match(
            answer,
            "stats.summary",
            name=shown(person),
            rounds=1,
            won=int(net > 0),
            rate=100 if net > 0 else 0,
            net=format_signed(net, texts.currency),
            biggest=format_amount(max(net, 0), texts.currency),
        )
        assert found is not None, answer
    await e2e.expect_reply(GROUP, NEWCOMER, "/stats", "stats.none", name=shown(NEWCOMER))

    ranked = sorted(nets.items(), key=lambda item: (-item[1], -item[0]))
    names = {p["id"]: shown(p) for p in (DEALER, *BETTORS)}
    board = [
        texts.message(
            "top.line", rank=rank, name=names[uid], net=format_signed(net, texts.currency)
        )
        for rank, (uid, net) in enumerate(ranked, start=1)
    ]
    answer = await e2e.ask(GROUP, NEWCOMER, "/top")
    assert answer.splitlines() == [
        texts.message("top.recent", days=7),
        *board,
        texts.message("top.all_time"),
        *board,
    ]
    assert "<b>Chen</b>" in answer  # the name as typed, never as markup

    await e2e.expect_reply(GROUP, NEWCOMER, "/odds", "error.not_admin")
    answer = await e2e.ask(GROUP, ADMIN, "/odds")
    assert texts.message("odds.player", percent="+0.00%") in answer.splitlines(), answer
    assert texts.message("odds.house", percent="+0.00%") in answer.splitlines(), answer

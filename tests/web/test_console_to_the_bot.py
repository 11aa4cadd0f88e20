"""A setting changed in the console is what the bot then plays with: the next round of the
group takes it (through the service, as the bot's handlers call it; the same test through
the fake Telegram waits for the web server that mounts the console)."""

from __future__ import annotations

import pytest

from bot.engine.errors import GameError
from tests.helpers.console import GROUP, Console
from tests.helpers.game import ADMIN, DEALER, PLAYERS


async def test_a_max_bet_lowered_in_the_console_refuses_a_larger_bet_next_round(
    console: Console,
) -> None:
    await console.sign_in(ADMIN.id)
    csrf = await console.csrf(f"/console/groups/{GROUP}")
    response = await console.client.post(
        f"/console/groups/{GROUP}/settings", data={"csrf": csrf, "key": "max_bet", "value": "8"}
    )
    assert response.status == 200
    # The round open since before the change keeps its settings; it ends unbid.
    console.clock.advance(18)
    await console.service.advance(console.history.open_round)
    started = await console.service.start_round(GROUP, actor=DEALER)
    assert started.round is not None and started.round.settings.max_bet == 800
    await console.service.bid(GROUP, DEALER, 10_000)
    console.clock.advance(18)
    await console.service.advance(started.round.id)
    with pytest.raises(GameError) as refused:
        await console.service.bet(GROUP, PLAYERS[0], 1_000)
    assert refused.value.key == "bet_too_large"
    await console.service.bet(GROUP, PLAYERS[0], 800)

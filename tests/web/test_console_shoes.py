"""A card table's shoe in the console: its hash and how far it is dealt are shown, its seed
never while it is in use, and a round dealt from it is "not revealed yet"."""

from __future__ import annotations

from sqlalchemy import select

from bot.engine.round import Phase
from bot.store.models import ShoeRow
from tests.helpers.console import OPERATOR, Console
from tests.helpers.game import ADMIN, DEALER, PLAYERS, fund

CARDS = -3003


async def test_a_shoe_in_use_shows_its_hash_and_never_its_seed(console: Console) -> None:
    service, clock = console.service, console.clock
    await service.note_chat(CARDS, "Poker room")
    await service.set_open(CARDS, ADMIN, True)
    await service.change_setting(CARDS, ADMIN, "ruleset", "poker29")
    started = await service.start_round(CARDS, actor=ADMIN)
    assert started.round is not None and started.round.shoe is not None
    await fund(service, DEALER, 50_000, chat_id=CARDS)
    await service.bid(CARDS, DEALER, 50_000)
    clock.advance(18)
    await service.advance(started.round.id)
    await fund(service, PLAYERS[0], 10_000, chat_id=CARDS)
    await service.bet(CARDS, PLAYERS[0], 500)
    clock.advance(40)
    ended = await service.advance(started.round.id)
    assert ended.round is not None and ended.round.phase is Phase.SETTLED
    async with console.db.reading() as session:
        shoe = (await session.scalars(select(ShoeRow).where(ShoeRow.chat_id == CARDS))).one()

    await console.sign_in(OPERATOR)
    group = await console.text(f"/console/groups/{CARDS}")
    assert shoe.commitment in group and f"{shoe.dealt} of {shoe.decks * 52} cards" in group
    round_page = await console.text(f"/console/rounds/{started.round.id}")
    assert "Not revealed yet: dealt from shoe" in round_page
    for page in (group, round_page):
        assert shoe.seed.hex() not in page
        assert started.round.seed.hex() not in page
    rows = await console.text(f"/console/rounds?game=poker29&group={CARDS}")
    assert f'href="/console/rounds/{started.round.id}"' in rows

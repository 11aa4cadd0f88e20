"""Results as pictures through the real bot process and the fake Telegram.

With ``pictures on`` (the default) a Bull Bull round dealt by the house ends with the
dealer's cards turning over (an animation, a GIF) and then the results as a photo whose
caption is the results text; the photo is a PNG of the picture's size. After ``/set
pictures off`` the next round's results come as text alone, with no photo or animation.
"""

from __future__ import annotations

import io

import pytest
from PIL import Image

from bot.engine.round import Phase
from bot.pictures.model import Cards, Outcome, ResultsPicture, Seat
from bot.pictures.results import size_of
from tests.e2e.harness import (
    E2E,
    FAST_GAME,
    JsonDict,
    change_setting,
    open_table,
    results_title,
    user,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

GAME = {**FAST_GAME, "pictures": "on"}
ADMIN = user(701, "Ada", "ada_admin")
BETTORS = [user(702, "陈小明 🐮"), user(703, "Dewi", "dewi")]
GROUP = -1_001_000_000_701


async def play_house_round(e2e: E2E, first: bool) -> int:
    """One Bull Bull round dealt by the house, two bets; the round's id once it ended."""
    if first:
        await open_table(
            e2e, GROUP, ADMIN, BETTORS, settings={"ruleset": "bullbull", "dealer": "house"}
        )
        await e2e.expect_reply(
            GROUP, ADMIN, "/fund 300", "fund.done", amount=30_000, balance=30_000
        )
    e2e.say(GROUP, BETTORS[0], "/newround")
    state = await e2e.wait_phase(GROUP, Phase.BETTING)
    for bettor in BETTORS:
        e2e.say(GROUP, bettor, "/bet 5")
    await e2e.wait_bets(GROUP, len(BETTORS))
    await e2e.wait_ended(state.id)
    return state.id


async def results_entry(e2e: E2E, title: str) -> JsonDict:
    """The message (photo or text) whose text or caption starts with ``title``."""

    def found() -> JsonDict | None:
        return next((s for s in e2e.sends(GROUP) if s["plain_text"].startswith(title)), None)

    return await e2e.fake.wait_for(found, timeout=15.0)


async def test_results_arrive_as_a_photo_with_the_text_as_its_caption_unless_turned_off(
    e2e: E2E,
) -> None:
    round_id = await play_house_round(e2e, first=True)
    ended = await e2e.service.round(round_id)
    assert ended is not None
    title = results_title(await e2e.texts(GROUP), ended)
    photo = await results_entry(e2e, title)
    assert photo["media"]["kind"] == "photo"
    # The whole results text is the caption: the dealer's line and every player's.
    assert all(b["first_name"] in photo["plain_text"] for b in BETTORS)
    image = Image.open(io.BytesIO(e2e.fake.file_bytes(photo["media"]["file_id"])))
    assert image.format == "PNG"
    sends = e2e.sends(GROUP)
    position = sends.index(photo)
    # The dealer's cards turned over just before: a GIF of six frames or more.
    animation = sends[position - 1]
    assert animation["media"]["kind"] == "animation"
    gif = Image.open(io.BytesIO(e2e.fake.file_bytes(animation["media"]["file_id"])))
    assert (gif.format, gif.n_frames) == ("GIF", 6)
    # Drawn for this round: the dealer's line and two players', a footer of two lines.
    seat = Seat("", Cards((), ()), "", "", "", "", Outcome.EVEN)
    assert image.size == size_of(ResultsPicture("", "", seat, (seat, seat), ("", "")))

    await change_setting(e2e, GROUP, ADMIN, "pictures", "off")
    round_id = await play_house_round(e2e, first=False)
    ended = await e2e.service.round(round_id)
    assert ended is not None
    text = await results_entry(e2e, results_title(await e2e.texts(GROUP), ended))
    assert text["media"] is None
    later = e2e.sends(GROUP)[e2e.sends(GROUP).index(text) - 1 :]
    assert all(entry["media"] is None for entry in later)

"""The results as pictures (Board): the dealer's cards turning over and the results photo
with the text as its caption; a shorter caption and the text after it when the text is
too long for one; the text alone with ``pictures off``, for a voided round, or whenever
a picture cannot be drawn or is refused. The results are marked announced in every case.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io

import pytest
from PIL import Image, ImageSequence
from telegram import InlineKeyboardMarkup
from telegram.error import BadRequest, NetworkError, TelegramError, TimedOut

from bot.engine.round import Round, RoundSettled
from bot.telegram import results
from bot.telegram.budget import ROOM_KEPT_FOR_ROUNDS, Priority, SendRate
from bot.telegram.messenger import MAX_CAPTION_LENGTH
from bot.telegram.pictures import DRAWING, RoundPictures
from bot.telegram.results import caption_length
from bot.telegram.views import ButtonPress, Views
from tests.helpers.picture_samples import people, settled_round
from tests.helpers.telegram import GROUP
from tests.helpers.telegram_shells import BoardShell


def same_again(markup: InlineKeyboardMarkup | None) -> bool:
    """Whether ``markup`` is the results' "same again" button."""
    if markup is None:
        return False
    pressed = [
        ButtonPress.decode(str(b.callback_data)) for row in markup.inline_keyboard for b in row
    ]
    return [press.action if press else None for press in pressed] == ["again"]


def settled(game: str, players: int, *, pictures: str = "on") -> tuple[Round, RoundSettled]:
    state, ended = settled_round(game, players, chat_id=GROUP)
    state = dataclasses.replace(
        state, settings=dataclasses.replace(state.settings, pictures=pictures)
    )
    return state, ended


async def announce_on(
    shell: BoardShell, game: str, players: int, **options: str
) -> tuple[Round, RoundSettled]:
    """A settled round of ``game`` announced on ``shell`` (as the test set it up)."""
    state, ended = settled(game, players, **options)
    shell.service.put(state)
    shell.board.announce(state, ended)
    await shell.settle()
    return state, ended


async def announced(game: str, players: int, **options: str) -> tuple[BoardShell, Round, str]:
    """A shell that announced a settled round of ``game``; the round and its text."""
    shell = BoardShell(edit_seconds=0.0)
    shell.service.people = people(players)
    state, ended = await announce_on(shell, game, players, **options)
    assert shell.service.announced == {state.id}
    return shell, state, Views(state.settings).results(state, ended, people(players))


async def test_a_card_round_turns_the_dealers_cards_then_sends_the_photo_with_its_text() -> None:
    shell, _, text = await announced("bullbull", 3)
    assert [call.method for call in shell.bot.calls] == ["send_animation", "send_photo"]
    [animation], [photo] = shell.bot.of("send_animation"), shell.bot.of("send_photo")
    frames = ImageSequence.Iterator(Image.open(io.BytesIO(animation.args["data"])))
    assert sum(1 for _ in frames) == 6
    assert Image.open(io.BytesIO(photo.args["data"])).format == "PNG"
    assert photo.args["caption"] == text
    # "Same again" rides on the photo, whose caption is the results; not on the cards.
    assert same_again(photo.args["reply_markup"]) and animation.args["reply_markup"] is None


async def test_an_envelope_round_has_no_cards_to_turn() -> None:
    shell, _, text = await announced("envelope68", 3)
    assert [call.method for call in shell.bot.calls] == ["send_photo"]
    assert shell.bot.of("send_photo")[0].args["caption"] == text


async def test_results_too_long_for_a_caption_follow_the_photo_as_text() -> None:
    shell, state, text = await announced("poker29", 30)
    assert caption_length(text) > MAX_CAPTION_LENGTH
    [photo] = shell.bot.of("send_photo")
    assert photo.args["caption"] == Views(state.settings).t("picture.caption_short", round_id=42)
    assert shell.bot.texts == [text]
    # The button goes with the whole text, the results' last message.
    [message] = shell.bot.of("send_message")
    assert photo.args["reply_markup"] is None and same_again(message.args["reply_markup"])


async def test_with_pictures_off_the_results_are_text_alone() -> None:
    shell, _, text = await announced("bullbull", 3, pictures="off")
    assert [call.method for call in shell.bot.calls] == ["send_message"]
    assert shell.bot.texts == [text]


async def test_a_picture_that_cannot_be_drawn_leaves_the_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def broken(self: RoundPictures) -> bytes:
        raise OSError("no space left on device")

    monkeypatch.setattr(RoundPictures, "render_results", broken)
    shell, _, text = await announced("envelope68", 2)
    assert shell.bot.texts == [text]
    assert not shell.bot.of("send_photo")


async def test_a_refused_photo_leaves_the_text() -> None:
    shell = BoardShell(edit_seconds=0.0)
    shell.bot.fail_next(BadRequest("PHOTO_INVALID_DIMENSIONS"), "send_photo")
    state, ended = await announce_on(shell, "envelope68", 2)
    assert shell.bot.texts == [Views(state.settings).results(state, ended, {})]
    assert shell.service.announced == {state.id}


async def test_no_turning_cards_when_the_groups_minute_is_nearly_spent() -> None:
    shell = BoardShell(edit_seconds=0.0)
    while shell.sends.room(GROUP) > ROOM_KEPT_FOR_ROUNDS:
        shell.sends.take(GROUP)
    await announce_on(shell, "bullbull", 2)
    assert [call.method for call in shell.bot.calls] == ["send_photo"]


async def test_no_turning_cards_while_the_bots_rate_is_tight() -> None:
    shell = BoardShell(edit_seconds=0.0)
    rate = shell.board.messenger.rate = SendRate(per_second=10)
    for _ in range(10):  # half the rate over the last two seconds; the group's minute is free
        await rate.acquire(Priority.RESULTS)
    assert rate.tight
    await announce_on(shell, "bullbull", 2)
    assert [call.method for call in shell.bot.calls] == ["send_photo"]


async def test_the_results_go_as_text_alone_while_the_drawing_process_is_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Other groups' pictures are queued: this one would start 0.3 s from now.
    monkeypatch.setattr(DRAWING, "queued", 3)
    monkeypatch.setattr(DRAWING, "seconds_each", 0.1)
    assert DRAWING.wait_seconds > results.PICTURE_WAIT_SECONDS
    shell = BoardShell(edit_seconds=0.0)
    state, ended = await announce_on(shell, "bullbull", 2)
    assert [call.method for call in shell.bot.calls] == ["send_message"]
    assert shell.bot.texts == [Views(state.settings).results(state, ended, {})]


async def test_a_picture_drawn_times_the_drawing_process() -> None:
    shell = BoardShell(edit_seconds=0.0)
    await announce_on(shell, "envelope68", 2)
    assert shell.bot.of("send_photo")
    assert DRAWING.queued == 0 and DRAWING.seconds_each > 0


async def test_a_photo_that_fails_on_the_way_is_tried_again() -> None:
    shell = BoardShell(edit_seconds=0.0)
    shell.bot.fail_next(NetworkError("connection reset"), "send_photo")
    state, _ = await announce_on(shell, "envelope68", 2)
    assert shell.service.announced == {state.id}
    assert len(shell.bot.of("send_photo")) == 1 and not shell.bot.texts


@pytest.mark.parametrize(
    "error", [NetworkError("Internal Server Error"), NetworkError("connection reset"), TimedOut()]
)
async def test_a_photo_that_never_goes_out_gives_way_to_the_text(error: TelegramError) -> None:
    shell = BoardShell(edit_seconds=0.0)
    shell.bot.fail_always(error, "send_photo")
    state, ended = await announce_on(shell, "envelope68", 2)
    assert shell.bot.texts == [Views(state.settings).results(state, ended, {})]
    assert shell.service.announced == {state.id}
    assert not shell.bot.of("send_photo")


async def test_turning_cards_that_fail_are_tried_once_and_the_results_follow() -> None:
    shell = BoardShell(edit_seconds=0.0)
    shell.bot.fail_always(NetworkError("Internal Server Error"), "send_animation")
    state, _ = await announce_on(shell, "bullbull", 2)
    assert [call.method for call in shell.bot.calls] == ["send_animation", "send_photo"]
    assert shell.service.announced == {state.id}


async def test_turning_cards_that_take_too_long_do_not_hold_the_results_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def stuck(self: RoundPictures, reveal: object) -> bytes:
        await asyncio.sleep(60)
        raise AssertionError("never drawn")

    monkeypatch.setattr(RoundPictures, "render_reveal", stuck)
    monkeypatch.setattr(results, "REVEAL_SECONDS", 0.05)
    shell = BoardShell(edit_seconds=0.0)
    state, _ = await announce_on(shell, "bullbull", 2)
    assert [call.method for call in shell.bot.calls] == ["send_photo"]
    assert shell.service.announced == {state.id}

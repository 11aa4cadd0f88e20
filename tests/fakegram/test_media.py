"""Photos and animations through python-telegram-bot's multipart uploads: the fake takes
them as Telegram does, records them with their caption, and gives their bytes back."""

import io
import json

import pytest
from PIL import Image
from telegram import Bot
from telegram.constants import ParseMode
from telegram.error import BadRequest

from bot.fakegram import FakeTelegram, FakeTelegramClient
from tests.fakegram.sample import GROUP_ID


def picture(kind: str, size: tuple[int, int] = (60, 40)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 30, 40)).save(buffer, kind)
    return buffer.getvalue()


async def test_a_photo_is_uploaded_with_its_caption_and_its_bytes_read_back(
    fake: FakeTelegram, bot: Bot
) -> None:
    png = picture("PNG")
    sent = await bot.send_photo(
        GROUP_ID, png, caption="<b>Round #1</b> &amp; more", parse_mode=ParseMode.HTML
    )
    assert sent.caption == "Round #1 & more"
    assert (sent.photo[-1].width, sent.photo[-1].height) == (60, 40)
    [entry] = fake.transcript(GROUP_ID)
    assert (entry["kind"], entry["plain_text"], entry["media"]["kind"]) == (
        "send",
        "Round #1 & more",
        "photo",
    )
    assert fake.file_bytes(entry["media"]["file_id"]) == png
    async with FakeTelegramClient(fake.root_url) as client:
        assert await client.file_bytes(sent.photo[-1].file_id) == png
    # The record of calls stays JSON: an upload is described, not kept.
    [call] = [call for call in fake.calls if call["method"] == "sendPhoto"]
    assert call["params"]["photo"]["size"] == len(png)
    json.dumps(fake.calls)
    # Sent again by its file_id, as Telegram allows.
    again = await bot.send_photo(GROUP_ID, sent.photo[-1].file_id)
    assert again.caption is None


async def test_an_animation_is_a_gif_and_has_no_text_to_edit(fake: FakeTelegram, bot: Bot) -> None:
    gif = picture("GIF")
    sent = await bot.send_animation(GROUP_ID, gif, caption="dealer")
    assert sent.animation is not None and sent.caption == "dealer"
    assert fake.transcript(GROUP_ID)[0]["media"]["kind"] == "animation"
    with pytest.raises(BadRequest, match="no text in the message"):
        await bot.edit_message_text("new", chat_id=GROUP_ID, message_id=sent.message_id)
    with pytest.raises(BadRequest, match=r"(?i)wrong file type"):
        await bot.send_animation(GROUP_ID, picture("PNG"))


@pytest.mark.parametrize(
    ("photo", "caption", "reason"),
    [
        (picture("PNG"), "x" * 1025, "caption is too long"),
        (b"not an image", "", "IMAGE_PROCESS_FAILED"),
        (picture("PNG", (2000, 50)), "", "PHOTO_INVALID_DIMENSIONS"),
        ("no-such-file-id", "", "wrong remote file identifier"),
    ],
)
async def test_what_telegram_refuses_is_refused(
    fake: FakeTelegram, bot: Bot, photo: bytes | str, caption: str, reason: str
) -> None:
    with pytest.raises(BadRequest, match=f"(?i){reason}"):
        await bot.send_photo(GROUP_ID, photo, caption=caption or None)
    assert fake.transcript(GROUP_ID) == []

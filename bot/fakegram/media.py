"""Photos and animations uploaded to the fake Telegram: the file a request carries, as
Telegram takes it (a multipart upload under the field's own name or ``attach://<name>``,
or the ``file_id`` of a file sent before), checked as Telegram checks it, and the
``PhotoSize`` / ``Animation`` objects of the message it makes.

The image's size is read from its header (PNG, GIF, JPEG): enough to refuse what
Telegram refuses (not an image, too large, too long and thin) without decoding it.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from typing import Any

from bot.fakegram.params import ApiError, RequestParams, Upload, bad_request

JsonDict = dict[str, Any]

#: Telegram's limits: a photo of at most 10 MB whose width and height add up to at most
#: 10000 with a ratio of at most 20; an animation of at most 50 MB.
MAX_PHOTO_BYTES = 10 * 1024 * 1024
MAX_ANIMATION_BYTES = 50 * 1024 * 1024
MAX_PHOTO_SIDES = 10_000
MAX_PHOTO_RATIO = 20
#: The side of the thumbnail size Telegram adds to every photo (the first PhotoSize).
THUMBNAIL_SIDE = 90


@dataclass(frozen=True, slots=True)
class StoredFile:
    """A file Telegram has: its ids, what it is and its bytes."""

    file_id: str
    file_unique_id: str
    kind: str
    data: bytes
    width: int
    height: int


def image_size(data: bytes) -> tuple[str, int, int] | None:
    """(format, width, height) of a PNG, GIF or JPEG from its header; None otherwise."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return "png", width, height
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return "gif", width, height
    if data.startswith(b"\xff\xd8"):
        return _jpeg_size(data)
    return None


def _jpeg_size(data: bytes) -> tuple[str, int, int] | None:
    position = 2
    while position + 9 < len(data):
        if data[position] != 0xFF:
            return None
        marker = data[position + 1]
        (length,) = struct.unpack(">H", data[position + 2 : position + 4])
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[position + 5 : position + 9])
            return "jpeg", width, height
        position += 2 + length
    return None


def uploaded_bytes(params: RequestParams, field: str, files: dict[str, StoredFile]) -> bytes:
    """The bytes of a send's ``field``: an upload under its name or ``attach://<name>``,
    or a ``file_id`` the fake gave before. (A URL would be fetched by Telegram: the fake
    has no network, and refuses it.)"""
    value = params.raw.get(field)
    if isinstance(value, str) and value.startswith("attach://"):
        value = params.raw.get(value.removeprefix("attach://"))
    if isinstance(value, Upload):
        return value.data
    if isinstance(value, str) and value in files:
        return files[value].data
    if value is None or value == "":
        raise bad_request(f"there is no {field} in the request")
    raise bad_request("wrong remote file identifier specified: Wrong string length")


def store_file(kind: str, data: bytes, files: dict[str, StoredFile]) -> StoredFile:
    """Check ``data`` as Telegram checks a ``kind`` ("photo", "animation") and keep it."""
    size = image_size(data)
    if kind == "photo":
        if size is None:
            raise bad_request("IMAGE_PROCESS_FAILED")
        if len(data) > MAX_PHOTO_BYTES:
            raise ApiError(400, "Bad Request: PHOTO_INVALID_DIMENSIONS")
        _, width, height = size
        if width + height > MAX_PHOTO_SIDES or max(width, height) > MAX_PHOTO_RATIO * min(
            width, height
        ):
            raise bad_request("PHOTO_INVALID_DIMENSIONS")
    else:
        if size is None or size[0] != "gif":
            raise bad_request("wrong file type: an animation is a GIF here")
        if len(data) > MAX_ANIMATION_BYTES:
            raise bad_request("file is too big")
        _, width, height = size
    digest = hashlib.sha256(data).hexdigest()
    stored = StoredFile(
        file_id=f"{kind[:2].upper()}{len(files) + 1:06d}{digest[:24]}",
        file_unique_id=digest[:16],
        kind=kind,
        data=data,
        width=width,
        height=height,
    )
    files[stored.file_id] = stored
    return stored


def media_json(stored: StoredFile) -> JsonDict:
    """The message fields of a photo (its sizes) or an animation (and its document)."""
    if stored.kind == "photo":
        scale = THUMBNAIL_SIDE / max(stored.width, stored.height)
        thumbnail = {
            "file_id": stored.file_id + "t",
            "file_unique_id": stored.file_unique_id + "t",
            "width": max(1, round(stored.width * scale)),
            "height": max(1, round(stored.height * scale)),
        }
        full = {
            "file_id": stored.file_id,
            "file_unique_id": stored.file_unique_id,
            "width": stored.width,
            "height": stored.height,
            "file_size": len(stored.data),
        }
        return {"photo": [thumbnail, full]}
    animation = {
        "file_id": stored.file_id,
        "file_unique_id": stored.file_unique_id,
        "width": stored.width,
        "height": stored.height,
        "duration": 0,
        "file_name": "animation.gif",
        "mime_type": "image/gif",
        "file_size": len(stored.data),
    }
    document = {key: animation[key] for key in ("file_id", "file_unique_id", "file_name")}
    return {"animation": animation, "document": {**document, "mime_type": "image/gif"}}

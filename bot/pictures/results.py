"""A round's results as a PNG: a title, the dealer's line, a line per player (their
cards or envelope, hand, stake, result and net) and a footer. One column for a few
players, two for many, so that Telegram's photo (at most 1280 pixels a side) stays
readable with 30 players."""

from __future__ import annotations

import io
import math

from PIL import Image, ImageDraw

from bot.pictures.cards import CARD_HEIGHT, paste_hand
from bot.pictures.fonts import typeface
from bot.pictures.model import Cards, Envelope, Outcome, ResultsPicture, Seat

PAD = 16
COLUMN_WIDTH = 600
ROW_HEIGHT = 80
TITLE_HEIGHT = 52
TITLE_SIZE = 22
FOOTER_LINE = 20
#: Lines (the dealer's included) a single column holds before a second one is used.
ONE_COLUMN_ROWS = 9
#: The picture is saved as a palette PNG: its few flat colours and anti-aliased text fit
#: in 256, and a palette image encodes faster than an RGB one, even counting the
#: quantisation (fastest at 256 colours); compression level 1 spends far less CPU than
#: the default for a few more bytes.
PALETTE_COLOURS = 256
PNG_COMPRESSION = 1

_TEXT_X = 12
_TEXT_WIDTH = 170
_HAND_X = 195
_RESULT_RIGHT = COLUMN_WIDTH - 12
_RESULT_WIDTH = 140
_ENVELOPE_SIZE = (130, CARD_HEIGHT)

BACKGROUND = (246, 241, 230)
_ROW = ((255, 252, 245), (250, 246, 236))
_DEALER_ROW = (252, 234, 196)
_DEALER_LABEL = (150, 100, 0)
_INK = (30, 30, 36)
_MUTED = (105, 100, 95)
_ENVELOPE = (198, 32, 40)
_ENVELOPE_GOLD = (250, 213, 110)
_NET = {Outcome.WIN: (20, 130, 60), Outcome.LOSE: (190, 30, 40), Outcome.EVEN: (100, 100, 110)}


def layout(picture: ResultsPicture) -> tuple[int, int, int]:
    """(columns, rows, height) of ``picture``; its width is ``columns`` columns."""
    lines = 1 + len(picture.players)
    columns = 1 if lines <= ONE_COLUMN_ROWS else 2
    rows = math.ceil(lines / columns)
    height = TITLE_HEIGHT + rows * ROW_HEIGHT + PAD + len(picture.footer) * FOOTER_LINE + PAD
    return columns, rows, height


def size_of(picture: ResultsPicture) -> tuple[int, int]:
    """The picture's width and height in pixels."""
    columns, _, height = layout(picture)
    return PAD * 2 + columns * COLUMN_WIDTH + (columns - 1) * PAD, height


def draw_results(picture: ResultsPicture) -> Image.Image:
    """The results drawn (RGB)."""
    _, rows, _ = layout(picture)
    image = Image.new("RGB", size_of(picture), BACKGROUND)
    width = image.width
    bold, room = typeface(bold=True), width - 2 * PAD
    # A long title (a game's full name in one column) in a smaller size before cutting it.
    size = TITLE_SIZE if bold.width(picture.title, TITLE_SIZE) <= room else TITLE_SIZE - 4
    top = 14 + (TITLE_SIZE - size) // 2
    bold.draw(image, (PAD, top), picture.title, size, _INK, max_width=room)
    seats = [picture.dealer, *picture.players]
    for index, seat in enumerate(seats):
        column, row = divmod(index, rows)
        x = PAD + column * (COLUMN_WIDTH + PAD)
        y = TITLE_HEIGHT + row * ROW_HEIGHT
        label = picture.dealer_label if index == 0 else None
        _draw_seat(image, (x, y), seat, label, _DEALER_ROW if index == 0 else _ROW[index % 2])
    y = TITLE_HEIGHT + rows * ROW_HEIGHT + PAD
    regular = typeface()
    for line in picture.footer:
        regular.draw(image, (PAD, y), line, 13, _MUTED, max_width=width - 2 * PAD)
        y += FOOTER_LINE
    return image


def render_results(picture: ResultsPicture) -> bytes:
    """The results as PNG bytes."""
    return encode_png(draw_results(picture))


def encode_png(image: Image.Image) -> bytes:
    """``image`` as a palette PNG (``PALETTE_COLOURS``)."""
    buffer = io.BytesIO()
    palette = image.quantize(
        PALETTE_COLOURS, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE
    )
    palette.save(buffer, "PNG", compress_level=PNG_COMPRESSION)
    return buffer.getvalue()


def _draw_seat(
    image: Image.Image,
    xy: tuple[int, int],
    seat: Seat,
    label: str | None,
    fill: tuple[int, int, int],
) -> None:
    x, y = xy
    ImageDraw.Draw(image).rounded_rectangle(
        (x, y + 2, x + COLUMN_WIDTH - 1, y + ROW_HEIGHT - 3), radius=8, fill=fill
    )
    bold, regular = typeface(bold=True), typeface()
    bold.draw(image, (x + _TEXT_X, y + 9), seat.name, 16, _INK, max_width=_TEXT_WIDTH)
    regular.draw(image, (x + _TEXT_X, y + 33), seat.kind, 15, _INK, max_width=_TEXT_WIDTH)
    regular.draw(image, (x + _TEXT_X, y + 55), seat.detail, 12, _MUTED, max_width=_TEXT_WIDTH)
    hand_xy = (x + _HAND_X, y + (ROW_HEIGHT - CARD_HEIGHT) // 2)
    if isinstance(seat.hand, Cards):
        paste_hand(image, hand_xy, seat.hand.bull, seat.hand.rest)
    else:
        _draw_envelope(image, hand_xy, seat.hand)
    right = x + _RESULT_RIGHT
    # The dealer's line says whose it is where a player's says how they did.
    for text, size, face, colour, top in (
        (label, 14, bold, _DEALER_LABEL, 14) if label else (seat.result, 14, regular, _MUTED, 14),
        (seat.net, 18, bold, _NET[seat.outcome], 38),
    ):
        shown = (
            face.fit(text, size, _RESULT_WIDTH) if face.width(text, size) > _RESULT_WIDTH else text
        )
        face.draw(image, (right - face.width(shown, size), y + top), shown, size, colour)


def _draw_envelope(image: Image.Image, xy: tuple[int, int], envelope: Envelope) -> None:
    """A red envelope with its gold flap and the amount it held."""
    x, y = xy
    width, height = _ENVELOPE_SIZE
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((x, y, x + width - 1, y + height - 1), radius=6, fill=_ENVELOPE)
    draw.line(
        (x + 2, y + 4, x + width // 2, y + 18, x + width - 3, y + 4), fill=_ENVELOPE_GOLD, width=2
    )
    draw.ellipse((x + width // 2 - 5, y + 13, x + width // 2 + 5, y + 23), fill=_ENVELOPE_GOLD)
    bold = typeface(bold=True)
    text_width = bold.width(envelope.amount, 17)
    bold.draw(image, (x + (width - text_width) // 2, y + 30), envelope.amount, 17, _ENVELOPE_GOLD)

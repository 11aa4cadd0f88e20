"""Playing cards as small images: a face per card ("K♠"), a back, each drawn once and
pasted wherever it is shown."""

from __future__ import annotations

import functools

from PIL import Image, ImageDraw

from bot.pictures.fonts import typeface

CARD_WIDTH = 42
CARD_HEIGHT = 58
#: Space between two cards of a group, and between the bull and the other two.
CARD_GAP = 4
GROUP_GAP = 14
#: The gold ring around the bull's three cards (``docs/rules.md`` §7), and its distance
#: from them.
GOLD = (212, 163, 23)
RING_WIDTH = 3
RING_MARGIN = 4

_RED = (200, 30, 45)
_BLACK = (25, 25, 30)
_EDGE = (150, 150, 160)
_BACK = (150, 25, 40)
_BACK_LINE = (225, 190, 120)
_RED_SUITS = frozenset("♥♦")
_RADIUS = 5


@functools.lru_cache(maxsize=64)
def face(card: str) -> Image.Image:
    """The face of ``card`` as written by the rules ("10♥"): rank in the corner, suit in
    the middle, red for hearts and diamonds."""
    rank, suit = card[:-1], card[-1]
    colour = _RED if suit in _RED_SUITS else _BLACK
    image = _blank((255, 255, 255))
    bold, regular = typeface(bold=True), typeface()
    bold.draw(image, (4, 2), rank, 15, colour)
    regular.draw(image, (4, 18), suit, 11, colour)
    width = regular.width(suit, 26)
    regular.draw(image, (CARD_WIDTH - width - 4, CARD_HEIGHT - 32), suit, 26, colour)
    return image


@functools.cache
def back() -> Image.Image:
    """A card face down."""
    image = _blank(_BACK)
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle(
        (4, 4, CARD_WIDTH - 5, CARD_HEIGHT - 5), radius=3, outline=_BACK_LINE, width=1
    )
    for offset in range(-CARD_HEIGHT, CARD_WIDTH, 7):
        draw.line((offset + 6, 6, offset + 6 + CARD_HEIGHT, 6 + CARD_HEIGHT), fill=_BACK_LINE)
    draw.rectangle((0, 0, CARD_WIDTH - 1, 3), fill=_BACK)
    draw.rectangle((0, CARD_HEIGHT - 4, CARD_WIDTH - 1, CARD_HEIGHT - 1), fill=_BACK)
    draw.rectangle((0, 0, 3, CARD_HEIGHT - 1), fill=_BACK)
    draw.rectangle((CARD_WIDTH - 4, 0, CARD_WIDTH - 1, CARD_HEIGHT - 1), fill=_BACK)
    draw.rounded_rectangle(
        (0, 0, CARD_WIDTH - 1, CARD_HEIGHT - 1), radius=_RADIUS, outline=_EDGE, width=1
    )
    return _rounded(image)


def _blank(fill: tuple[int, int, int]) -> Image.Image:
    image = Image.new("RGBA", (CARD_WIDTH, CARD_HEIGHT), (0, 0, 0, 0))
    ImageDraw.Draw(image).rounded_rectangle(
        (0, 0, CARD_WIDTH - 1, CARD_HEIGHT - 1), radius=_RADIUS, fill=fill, outline=_EDGE
    )
    return image


def _rounded(image: Image.Image) -> Image.Image:
    mask = Image.new("L", image.size, 0)
    ImageDraw.Draw(mask).rounded_rectangle(
        (0, 0, image.width - 1, image.height - 1), radius=_RADIUS, fill=255
    )
    image.putalpha(mask)
    return image


def hand_width(bull: int, rest: int) -> int:
    """How wide a hand of ``bull`` + ``rest`` cards is drawn (``paste_hand``)."""
    cards = bull + rest
    gaps = max(0, cards - 1) * CARD_GAP + (GROUP_GAP - CARD_GAP if bull and rest else 0)
    return cards * CARD_WIDTH + gaps


def paste_hand(
    image: Image.Image,
    xy: tuple[int, int],
    bull: tuple[str, ...],
    rest: tuple[str, ...],
    *,
    face_up: int | None = None,
) -> None:
    """Draw a hand at ``xy``: the bull's cards ringed in gold, a gap, the other two.
    With ``face_up``, only that many cards (from the left) show their face."""
    draw = ImageDraw.Draw(image)
    x, y = xy
    if bull:
        right = x + hand_width(len(bull), 0)
        draw.rounded_rectangle(
            (x - RING_MARGIN, y - RING_MARGIN, right + RING_MARGIN - 1, y + CARD_HEIGHT + 3),
            radius=_RADIUS + 3,
            outline=GOLD,
            width=RING_WIDTH,
        )
    for number, card in enumerate(bull + rest):
        if number == len(bull) and bull:
            x += GROUP_GAP - CARD_GAP
        sprite = face(card) if face_up is None or number < face_up else back()
        image.paste(sprite, (x, y), sprite)
        x += CARD_WIDTH + CARD_GAP

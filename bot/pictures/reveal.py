"""The dealer's cards landing face down and turning over one by one (``docs/rules.md`` §7), as a GIF
sent before the results: one message that plays at its own pace on every client, where
turning the cards by editing the board would take five edits spaced by the board's edit
interval out of the group's budget, and hold the results back meanwhile."""

from __future__ import annotations

import io

from PIL import Image

from bot.pictures.cards import CARD_HEIGHT, RING_MARGIN, hand_width, paste_hand
from bot.pictures.fonts import typeface
from bot.pictures.model import DealerReveal

PAD = 14
CAPTION_HEIGHT = 34
#: Wide enough for the caption line (the dealer's name) beside the cards.
MIN_WIDTH = 400
#: How long the cards lie face down, each turned card shows, and the hand in the end.
FACE_DOWN_MS = 700
TURN_MS = 450
SHOWN_MS = 4000
_BACKGROUND = (20, 90, 60)
_TEXT = (245, 240, 225)


def reveal_frames(reveal: DealerReveal) -> list[Image.Image]:
    """The frames: every card face down, then one more turned each frame, then the hand
    as the results show it (the bull apart, ringed in gold)."""
    cards = reveal.cards.all
    width = max(hand_width(len(reveal.cards.bull), len(reveal.cards.rest)), hand_width(0, 5))
    width = max(MIN_WIDTH, width + 2 * (PAD + RING_MARGIN))
    height = CAPTION_HEIGHT + CARD_HEIGHT + 2 * (PAD + RING_MARGIN)
    hand_xy = (PAD + RING_MARGIN, CAPTION_HEIGHT + PAD + RING_MARGIN)
    frames = []
    for turned in range(len(cards) + 1):
        frame = Image.new("RGB", (width, height), _BACKGROUND)
        typeface(bold=True).draw(
            frame, (PAD, 10), reveal.caption, 16, _TEXT, max_width=width - 2 * PAD
        )
        if turned < len(cards):
            paste_hand(frame, hand_xy, (), cards, face_up=turned)
        else:
            paste_hand(frame, hand_xy, reveal.cards.bull, reveal.cards.rest)
        frames.append(frame)
    return frames


def render_reveal(reveal: DealerReveal) -> bytes:
    """The reveal as GIF bytes (played once)."""
    frames = reveal_frames(reveal)
    durations = [FACE_DOWN_MS] + [TURN_MS] * (len(frames) - 2) + [SHOWN_MS]
    buffer = io.BytesIO()
    frames[0].save(
        buffer, "GIF", save_all=True, append_images=frames[1:], duration=durations, optimize=False
    )
    return buffer.getvalue()

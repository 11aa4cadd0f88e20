"""Each game's results picture against its golden image (tests/golden), with the
tolerance of ``tests/pictures/golden.py``; and that tolerance does catch a changed card.

The pictures are of fixed rounds (``tests/helpers/picture_samples.py``: dealt by the
house from a fixed seed, settled by the engine, named in the catalogue's words). After an intended
change of the pictures, write the goldens again with
``NIUNIU_UPDATE_GOLDENS=1 python -m pytest -n 0 tests/pictures/test_golden_pictures.py``
and look at them.

They are drawn with the distribution's fonts (``.ci/run`` and the Dockerfile install
them); without them every picture would differ, so the tests skip, saying which are
missing.
"""

from __future__ import annotations

import dataclasses
import io
import os
from pathlib import Path

import pytest
from PIL import Image

from bot.pictures.fonts import missing_fonts, missing_fonts_line
from bot.pictures.model import Cards
from bot.pictures.results import draw_results, render_results
from tests.helpers.picture_samples import sample_results
from tests.pictures.golden import TOLERANCE, worst_tile

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
#: (golden file, game, players, language): each game, a Chinese table, two columns.
CASES = [
    ("envelope68.png", "envelope68", 6, "en"),
    ("envelope68_two_columns.png", "envelope68", 12, "en"),
    ("bullbull_zh.png", "bullbull", 6, "zh"),
    ("poker29.png", "poker29", 6, "en"),
    ("poker29_vn.png", "poker29_vn", 6, "en"),
]
UPDATE = os.environ.get("NIUNIU_UPDATE_GOLDENS") == "1"

_MISSING = missing_fonts()
pytestmark = pytest.mark.skipif(
    bool(_MISSING),
    reason=missing_fonts_line(_MISSING),
)


@pytest.mark.parametrize(("golden", "game", "players", "language"), CASES)
def test_the_results_picture_matches_its_golden_image(
    golden: str, game: str, players: int, language: str
) -> None:
    picture = sample_results(game, players, language)
    png = render_results(picture)
    path = GOLDEN / golden
    if UPDATE:
        path.write_bytes(png)
    drawn = Image.open(io.BytesIO(png))
    assert drawn.format == "PNG"
    worst = worst_tile(drawn, Image.open(path))
    assert worst < TOLERANCE, f"{golden}: a tile differs by {worst:.2f} (tolerance {TOLERANCE})"


def test_the_tolerance_catches_one_changed_card() -> None:
    picture = sample_results("poker29", 6, "en")
    seat = picture.players[1]
    assert isinstance(seat.hand, Cards)
    other = "A♠" if seat.hand.rest[-1] != "A♠" else "K♥"  # another card, the same count
    changed = dataclasses.replace(seat, hand=Cards(seat.hand.bull, (seat.hand.rest[0], other)))
    players = (picture.players[0], changed, *picture.players[2:])
    drawn = draw_results(dataclasses.replace(picture, players=players))
    assert worst_tile(drawn, draw_results(picture)) > TOLERANCE

"""Results pictures in the languages whose letters the Latin and Simplified Chinese
pictures never show: Vietnamese (letters with two diacritics, ``ế``, ``ữ``) and
Traditional Chinese (``結``, ``莊``). Every character of every text is drawn by a font of
the chain that has it (never an empty box), in regular and bold alike, and the pictures
match their golden images (``tests/golden``; written again as
``tests/pictures/test_golden_pictures.py`` says)."""

from __future__ import annotations

import io
import os
import unicodedata
from pathlib import Path

import pytest
from PIL import Image

from bot.pictures.fonts import (
    BOLD,
    REGULAR,
    Typeface,
    find_faces,
    missing_fonts,
    missing_fonts_line,
)
from bot.pictures.model import ResultsPicture
from bot.pictures.results import render_results
from tests.helpers.picture_samples import sample_results
from tests.pictures.golden import TOLERANCE, worst_tile

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
UPDATE = os.environ.get("NIUNIU_UPDATE_GOLDENS") == "1"
#: (golden file, game, players, language, words the picture must show in it).
CASES = [
    ("poker29_vi.png", "poker29", 6, "vi", ["Kết quả ván #42", "Nhà cái", "Ngầu"]),
    ("bullbull_vi.png", "bullbull", 6, "vi", ["Kết quả ván #42", "Ngầu Hầm"]),
    ("envelope68_zh_hant.png", "envelope68", 6, "zh-Hant", ["第 42 局結果", "莊家"]),
    ("bullbull_zh_hant.png", "bullbull", 6, "zh-Hant", ["第 42 局結果", "鬥牛"]),
]

_MISSING = missing_fonts()
pytestmark = pytest.mark.skipif(bool(_MISSING), reason=missing_fonts_line(_MISSING))


def texts_of(picture: ResultsPicture) -> list[str]:
    """Every text the picture draws (the cards and envelopes aside)."""
    seats = (picture.dealer, *picture.players)
    fields = [text for seat in seats for text in (seat.kind, seat.detail, seat.result, seat.net)]
    return [picture.title, picture.dealer_label, *fields, *picture.footer]


def undrawn(typeface: Typeface, text: str) -> list[str]:
    """The characters of ``text`` that no installed font of the chain has: each would be
    the empty box of Pillow's default font, or of a font that lacks it."""
    return [
        char
        for face, run in typeface.runs(text)
        for char in run
        if not char.isspace() and (face.path is None or not face.has(char))
    ]


@pytest.mark.parametrize(("golden", "game", "players", "language", "words"), CASES)
def test_every_letter_of_a_picture_in_the_language_has_a_glyph(
    golden: str, game: str, players: int, language: str, words: list[str]
) -> None:
    picture = sample_results(game, players, language)
    texts = texts_of(picture)
    shown = "\n".join(texts)
    for word in words:
        assert word in shown, (word, texts)
    for typeface in (Typeface(find_faces(REGULAR)), Typeface(find_faces(BOLD))):
        for text in texts:
            assert undrawn(typeface, text) == [], text


def test_the_letters_checked_are_the_ones_latin_and_simplified_pictures_lack() -> None:
    vietnamese = "\n".join(texts_of(sample_results("poker29", 6, "vi")))
    traditional = "\n".join(texts_of(sample_results("bullbull", 6, "zh-Hant")))
    simplified = "\n".join(texts_of(sample_results("bullbull", 6, "zh")))
    # Letters with two marks on one base (a circumflex or horn and a tone: ế, ữ, ệ).
    doubly_marked = {c for c in vietnamese if len(unicodedata.normalize("NFD", c)) >= 3}
    assert len(doubly_marked) >= 3, vietnamese
    assert {"結", "莊"} <= set(traditional) and not {"結", "莊"} & set(simplified)


@pytest.mark.parametrize(("golden", "game", "players", "language", "words"), CASES)
def test_the_picture_in_the_language_matches_its_golden_image(
    golden: str, game: str, players: int, language: str, words: list[str]
) -> None:
    png = render_results(sample_results(game, players, language))
    path = GOLDEN / golden
    if UPDATE:
        path.write_bytes(png)
    worst = worst_tile(Image.open(io.BytesIO(png)), Image.open(path))
    assert worst < TOLERANCE, f"{golden}: a tile differs by {worst:.2f} (tolerance {TOLERANCE})"

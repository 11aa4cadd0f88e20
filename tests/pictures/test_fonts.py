"""The fonts of the pictures: each glyph from the first font of the chain that has it
(Latin, CJK, colour emoji), never the empty box of a font that lacks it while another
installed font has it; and a machine with fewer fonts, or none, still draws."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from bot.pictures.fonts import (
    REGULAR,
    Typeface,
    find_faces,
    missing_fonts,
    missing_fonts_line,
)

pytestmark = pytest.mark.skipif(bool(missing_fonts()), reason=missing_fonts_line(missing_fonts()))


def face_names(typeface: Typeface, text: str) -> list[str]:
    return [Path(face.path or "pillow-default").name for face, _ in typeface.runs(text)]


def draws_something(typeface: Typeface, text: str) -> bool:
    blank = Image.new("RGB", (400, 40), (255, 255, 255))
    image = blank.copy()
    typeface.draw(image, (2, 4), text, 20, (0, 0, 0))
    return ImageChops.difference(image, blank).getbbox() is not None


def test_each_glyph_comes_from_the_first_font_that_has_it() -> None:
    typeface = Typeface(find_faces(REGULAR))
    assert face_names(typeface, "Ann 陈小明 🐮") == [
        "DejaVuSans.ttf",
        "NotoSansCJK-Regular.ttc",
        "NotoColorEmoji.ttf",
    ]
    # A skin tone stays with its emoji; a space after an emoji goes back to the text font.
    assert face_names(typeface, "👍🏽 ok") == ["NotoColorEmoji.ttf", "DejaVuSans.ttf"]
    # A text font's outline of a pictograph gives way to the colour one.
    assert face_names(typeface, "🃏") == ["NotoColorEmoji.ttf"]


def test_a_glyph_is_never_the_empty_box_while_an_installed_font_has_it() -> None:
    faces = find_faces(REGULAR)
    typeface = Typeface(faces)
    for char in "AÄ♠牛한あ😀":
        face = typeface.runs(char)[0][0]
        assert face.has(char), char
    latin = faces[0]
    assert not latin.has("牛")  # DejaVu draws its box for it: the CJK font is used instead


def test_without_the_noto_fonts_names_still_draw(tmp_path: Path) -> None:
    found = find_faces(REGULAR)
    assert found[0].path is not None
    os.symlink(found[0].path, tmp_path / "DejaVuSans.ttf")
    typeface = Typeface(find_faces(REGULAR, dirs=[str(tmp_path)]))
    assert face_names(typeface, "Ann 陈") == ["DejaVuSans.ttf", "pillow-default"]
    assert draws_something(typeface, "陈小明 🐮 Ann")


def test_without_any_font_pillows_default_draws_everything(tmp_path: Path) -> None:
    typeface = Typeface(find_faces(REGULAR, dirs=[str(tmp_path)]))
    assert len(typeface.faces) == 1
    assert draws_something(typeface, "Ann 陈小明 🐮 ♠")
    assert typeface.width("Ann", 20) > 0


def test_a_long_name_is_cut_with_an_ellipsis_to_fit() -> None:
    typeface = Typeface(find_faces(REGULAR))
    name = "Nguyễn Văn An the longest name in the group 陈小明"
    cut = typeface.fit(name, 16, 150)
    assert cut.endswith("…") and name.startswith(cut[:-1])
    assert typeface.width(cut, 16) <= 150
    assert typeface.width(name[: len(cut)] + "…", 16) > 150  # the longest cut that fits

"""A run without the fonts the pictures need ends saying so, with the Debian packages to
install (tests/conftest.py's summary; the pictures' own tests skip with the same line)."""

from __future__ import annotations

import pytest

from tests.helpers.fonts import missing_fonts_summary


def test_nothing_is_said_when_every_font_is_there() -> None:
    assert missing_fonts_summary([]) == []


@pytest.mark.parametrize(
    ("missing", "packages"),
    [
        (["NotoColorEmoji.ttf"], "fonts-noto-color-emoji"),
        (
            ["DejaVuSans-Bold.ttf", "NotoSansCJK-Regular.ttc", "DejaVuSans.ttf"],
            "fonts-dejavu-core fonts-noto-cjk",
        ),
    ],
)
def test_a_missing_font_is_said_in_one_line_with_what_to_install(
    missing: list[str], packages: str
) -> None:
    (line,) = missing_fonts_summary(missing)
    assert line.startswith("the pictures' tests (tests/pictures) skipped: fonts missing")
    assert all(name in line for name in missing)
    assert line.endswith(f"apt-get install {packages}")

"""What a test run says at its end when fonts the pictures need are missing: the pictures'
tests skipped, and the Debian packages that bring the fonts (``make test`` and ``.ci/run``
both end so)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.pictures.fonts import missing_fonts_line


def missing_fonts_summary(missing: Sequence[str]) -> list[str]:
    """The lines that end a run without the fonts ``missing``; none when none is."""
    if not missing:
        return []
    return [
        "the pictures' tests (tests/pictures) skipped: " + missing_fonts_line(missing),
    ]

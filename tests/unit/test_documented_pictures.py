"""Every picture README.md and docs/ show or link to is in the repository, and the console
has one: a newcomer reading them sees the pages, not a broken image."""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
#: A Markdown image or link to a picture file, by a path relative to the document.
_PICTURE = re.compile(r"\]\(([^)\s]+\.(?:png|gif|jpg))\)")


def pictures_of(document: Path) -> list[Path]:
    """The pictures a Markdown document shows or links to, as paths."""
    text = document.read_text(encoding="utf-8")
    return [(document.parent / found).resolve() for found in _PICTURE.findall(text)]


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_picture_the_docs_show_is_there_and_is_a_picture() -> None:
    for document in documents():
        for picture in pictures_of(document):
            assert picture.is_file(), f"{document.name} shows {picture}, which is missing"
            with Image.open(picture) as opened:
                assert opened.width > 100 and opened.height > 100


def test_the_console_is_shown_in_its_doc_and_the_readme() -> None:
    console = ROOT / "docs" / "pictures" / "console-group.png"
    assert console in pictures_of(ROOT / "docs" / "console.md")
    assert console in pictures_of(ROOT / "README.md")


def test_the_pictures_are_found_as_written() -> None:
    found = _PICTURE.findall("![a](pictures/x.png) [b](docs/y.gif) `z.png` [c](https://e/f)")
    assert found == ["pictures/x.png", "docs/y.gif"]

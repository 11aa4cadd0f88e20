"""Fonts for the pictures: found by path among the distribution's fonts, each glyph drawn
with the first font that has it.

No single font covers what names hold (Latin, CJK, emoji), so a ``Typeface`` is a chain:
DejaVu Sans (Latin, the card suits), Noto Sans CJK SC (Chinese, Japanese, Korean), Noto
Color Emoji; Debian's ``fonts-dejavu-core``, ``fonts-noto-cjk`` and
``fonts-noto-color-emoji`` install them (the Dockerfile and ``.ci/run`` do). Whatever of
these is missing is skipped, and Pillow's own default font ends every chain, so a machine
with none of them still renders (with empty boxes only for what no font has).

Pillow has no "does this font have this glyph" call: a font whose drawing of a character
is the drawing of a character no font has (its ``.notdef`` box) lacks it. The answer is
remembered per font and character (the most recent 16,384), as are the runs, widths and
drawings of texts (names come back every round) and the emoji drawn.
"""

from __future__ import annotations

import functools
import os
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

#: Where fonts are looked for, in order (the first file of a name found is used).
FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.local/share/fonts", "~/.fonts")
#: A character no font has: its drawing is each font's ``.notdef`` glyph.
_NO_CHARACTER = "\U0010fffd"
#: Characters that belong to the glyph before them (variation selectors, the zero-width
#: joiner, skin tones, combining marks): drawn with that glyph's font.
_JOINING_CATEGORIES = frozenset({"Mn", "Me", "Cf", "Sk"})
_SKIN_TONES = range(0x1F3FB, 0x1F400)
#: Where pictographs start (cards, mahjong, emoji): drawn in colour when a face has them.
_PICTOGRAPHS = 0x1F000


@dataclass(frozen=True, slots=True)
class FaceFile:
    """One font to look for: its file name, the face within a collection (``.ttc``), and
    for a colour bitmap font the one size it can be loaded at (drawn, then scaled)."""

    name: str
    index: int = 0
    bitmap_size: int | None = None


#: The chains by weight: Latin and suits, then CJK (Simplified Chinese forms), then emoji.
REGULAR = (
    FaceFile("DejaVuSans.ttf"),
    FaceFile("NotoSansCJK-Regular.ttc", 2),
    FaceFile("NotoColorEmoji.ttf", bitmap_size=109),
)
BOLD = (
    FaceFile("DejaVuSans-Bold.ttf"),
    FaceFile("NotoSansCJK-Bold.ttc", 2),
    FaceFile("NotoColorEmoji.ttf", bitmap_size=109),
)


#: The Debian package of each font file, for the hint of what to install.
DEBIAN_PACKAGES = {
    "DejaVuSans.ttf": "fonts-dejavu-core",
    "DejaVuSans-Bold.ttf": "fonts-dejavu-core",
    "NotoSansCJK-Regular.ttc": "fonts-noto-cjk",
    "NotoSansCJK-Bold.ttc": "fonts-noto-cjk",
    "NotoColorEmoji.ttf": "fonts-noto-color-emoji",
}


def missing_fonts_line(missing: Sequence[str]) -> str:
    """One line naming the fonts the pictures miss and what to install (Debian's names)."""
    packages = sorted({DEBIAN_PACKAGES[name] for name in missing if name in DEBIAN_PACKAGES})
    return (
        f"fonts missing for the pictures: {', '.join(missing)} (what they would draw shows"
        f" as empty boxes); install them: apt-get install {' '.join(packages)}"
    )


@functools.cache
def _font_files(dirs: tuple[str, ...]) -> dict[str, str]:
    """Every font file under ``dirs`` by file name (the first found of each name)."""
    found: dict[str, str] = {}
    for directory in dirs:
        root = Path(directory).expanduser()
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.suffix.lower() in (".ttf", ".ttc", ".otf"):
                found.setdefault(path.name, os.fspath(path))
    return found


def find_faces(wanted: Iterable[FaceFile], dirs: Sequence[str] = FONT_DIRS) -> list[_Face]:
    """The faces of ``wanted`` installed under ``dirs``, in order, then Pillow's default."""
    files = _font_files(tuple(dirs))
    faces: list[_Face] = [
        _Face(files[face.name], face.index, face.bitmap_size)
        for face in wanted
        if face.name in files
    ]
    faces.append(_Face(None, 0, None))
    return faces


def missing_fonts(
    wanted: Iterable[FaceFile] = REGULAR + BOLD, dirs: Sequence[str] = FONT_DIRS
) -> list[str]:
    """The file names of ``wanted`` not installed under ``dirs`` (their glyphs fall back
    to the next font of the chain, in the end to Pillow's default)."""
    files = _font_files(tuple(dirs))
    return sorted({face.name for face in wanted if face.name not in files})


class _Face:
    """One font of a chain, at any size, and which characters it has."""

    def __init__(self, path: str | None, index: int, bitmap_size: int | None) -> None:
        self.path = path
        self.index = index
        self.bitmap_size = bitmap_size

    @functools.lru_cache(maxsize=32)  # noqa: B019 - a few faces, each kept for the process
    def font(self, size: int) -> ImageFont.FreeTypeFont:
        """This face at ``size`` pixels (a bitmap font at its one size)."""
        if self.path is None:
            default = ImageFont.load_default(size)
            assert isinstance(default, ImageFont.FreeTypeFont)  # Pillow built with FreeType
            return default
        layout = ImageFont.Layout.RAQM if self.bitmap_size else ImageFont.Layout.BASIC
        if not ImageFont.core.HAVE_RAQM:
            layout = ImageFont.Layout.BASIC
        return ImageFont.truetype(
            self.path, self.bitmap_size or size, index=self.index, layout_engine=layout
        )

    @functools.lru_cache(maxsize=16_384)  # noqa: B019 - remembered per face, bounded
    def has(self, char: str) -> bool:
        """Whether this face draws ``char`` as itself (not as its ``.notdef`` box); Pillow's
        default font, the last of every chain, is taken to have everything."""
        return self.path is None or _drawing(self.font(24), char) != self._notdef

    @functools.cached_property
    def _notdef(self) -> tuple[object, ...]:
        """How this face draws a character it lacks."""
        return _drawing(self.font(24), _NO_CHARACTER)


def _drawing(font: ImageFont.FreeTypeFont, char: str) -> tuple[object, ...]:
    mask = font.getmask(char)
    return (font.getbbox(char), mask.size, bytes(mask))


def _joins(char: str) -> bool:
    return unicodedata.category(char) in _JOINING_CATEGORIES or ord(char) in _SKIN_TONES


class Typeface:
    """A chain of faces that draws any text: each character with the first face that has
    it (see the module's docstring)."""

    def __init__(self, faces: Sequence[_Face]) -> None:
        self.faces = list(faces)

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - two typefaces, kept for the process
    def runs(self, text: str) -> tuple[tuple[_Face, str], ...]:
        """``text`` cut into runs each drawn by one face (remembered: names come back
        every round)."""
        runs: list[tuple[_Face, list[str]]] = []
        for char in text:
            joins = _joins(char) or (char.isspace() and not (runs and runs[-1][0].bitmap_size))
            if runs and joins:
                runs[-1][1].append(char)
                continue
            face = self._face_for(char)
            if runs and runs[-1][0] is face:
                runs[-1][1].append(char)
            else:
                runs.append((face, [char]))
        return tuple((face, "".join(chars)) for face, chars in runs)

    def _face_for(self, char: str) -> _Face:
        """The first face that has ``char``; for a pictograph (U+1F000 on), a colour face
        first, as a user who typed an emoji sees it (a text font may have an outline)."""
        faces = self.faces
        if ord(char) >= _PICTOGRAPHS:
            faces = [face for face in faces if face.bitmap_size] + faces
        return next((face for face in faces if face.has(char)), self.faces[-1])

    @functools.lru_cache(maxsize=8192)  # noqa: B019 - two typefaces, kept for the process
    def width(self, text: str, size: int) -> int:
        """How wide ``text`` is drawn at ``size`` (remembered)."""
        return sum(self._run_width(face, run, size) for face, run in self.runs(text))

    def _run_width(self, face: _Face, run: str, size: int) -> int:
        if face.bitmap_size:
            return _bitmap_run(face, run, size).width
        return round(face.font(size).getlength(run))

    def draw(
        self,
        image: Image.Image,
        xy: tuple[int, int],
        text: str,
        size: int,
        fill: tuple[int, int, int],
        *,
        max_width: int | None = None,
    ) -> int:
        """Draw ``text`` with its top-left at ``xy`` (one line, ``size`` pixels high), cut
        with an ellipsis to ``max_width``; the width drawn."""
        if max_width is not None and self.width(text, size) > max_width:
            text = self.fit(text, size, max_width)
        x, y = xy
        for face, run in self.runs(text):
            if face.bitmap_size:
                glyphs = _bitmap_run(face, run, size)
                image.paste(glyphs, (x, y + size // 10), glyphs)
                x += glyphs.width
                continue
            mask, (left, top), advance = _text_run(face, run, size)
            # Each font's ascent differs: every run sits on a common baseline.
            image.paste(fill, (x + left, y + round(size * 0.95) + top), mask)
            x += advance
        return x - xy[0]

    def fit(self, text: str, size: int, max_width: int) -> str:
        """``text`` cut short with "…" to fit ``max_width`` (the longest such cut: a
        binary search on its length)."""
        low, high = 0, len(text) - 1
        while low < high:
            middle = (low + high + 1) // 2
            if self.width(text[:middle].rstrip() + "…", size) <= max_width:
                low = middle
            else:
                high = middle - 1
        return text[:low].rstrip() + "…"


@functools.lru_cache(maxsize=4096)
def _text_run(face: _Face, run: str, size: int) -> tuple[Image.Image, tuple[int, int], int]:
    """A run of text drawn once as a coverage mask (names and labels come back every
    round; FreeType's drawing is most of a picture's time): the mask, its offset from the
    run's baseline origin, and the run's advance."""
    font = face.font(size)
    left, top, right, bottom = (round(v) for v in font.getbbox(run, anchor="ls"))
    mask = Image.new("L", (max(1, right - left), max(1, bottom - top)))
    ImageDraw.Draw(mask).text((-left, -top), run, font=font, fill=255, anchor="ls")
    return mask, (left, top), round(font.getlength(run))


@functools.lru_cache(maxsize=512)
def _bitmap_run(face: _Face, run: str, size: int) -> Image.Image:
    """A run of colour glyphs (emoji) drawn at the font's one size and scaled to ``size``."""
    font = face.font(size)
    left, top, right, bottom = font.getbbox(run)
    drawn = Image.new("RGBA", (max(1, round(right - left)), max(1, round(bottom - top))))
    ImageDraw.Draw(drawn).text((-left, -top), run, font=font, embedded_color=True)
    height = max(1, round(size * 0.95))
    width = max(1, round(drawn.width * height / drawn.height))
    return drawn.resize((width, height), Image.Resampling.LANCZOS)


@functools.cache
def typeface(bold: bool = False) -> Typeface:
    """The regular or bold chain, found once."""
    return Typeface(find_faces(BOLD if bold else REGULAR))

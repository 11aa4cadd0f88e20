"""Comparing a picture with its golden image, with a tolerance.

Two renderings of the same results differ only where fonts do: another version of a
font package moves an outline, or a whole line, by a pixel. Both images are blurred a
little and compared tile by tile (``TILE`` pixels square, overlapping by half): the mean
difference of every tile must stay under ``TOLERANCE`` (of 255). Measured on these
pictures, every text moved by a pixel gives at most about 10; one card changed, a net
changed or coloured as a win instead of a loss, about 17 or more. (A text changed by a
digit may pass: the text of every line is checked exactly elsewhere, in the caption.)
"""

from __future__ import annotations

from PIL import Image, ImageChops, ImageFilter, ImageStat

TILE = 40
BLUR = 1.5
TOLERANCE = 13.0


def worst_tile(drawn: Image.Image, golden: Image.Image) -> float:
    """The largest mean difference of a tile between two drawings of the same size."""
    assert drawn.size == golden.size, f"drawn {drawn.size}, golden {golden.size}"
    blurred = [
        image.convert("RGB").filter(ImageFilter.GaussianBlur(BLUR)) for image in (drawn, golden)
    ]
    difference = ImageChops.difference(*blurred).convert("L")
    step = TILE // 2
    return max(
        ImageStat.Stat(difference.crop((x, y, x + TILE, y + TILE))).mean[0]
        for y in range(0, difference.height, step)
        for x in range(0, difference.width, step)
    )

"""How long a results picture takes to draw: ``python bench/bench_pictures.py``.

For each game, a round dealt by the house to 30 players (``--players``; Bull Bull seats
9), settled by the
engine from a fixed seed (``tests/helpers/picture_samples.py``): the median time to draw its
results and encode them as a PNG (target: under 50 ms a picture), beside its floor
measured in the same run, encoding a blank picture of the same size the same way, and
their ratio; then the dealer's cards turning over as a GIF. Names, cards and glyphs are
drawn once before timing (the bot keeps them across rounds: the same players come back);
one more drawing with no text remembered shows what a round of new names costs.
Not a test: numbers depend on the machine.

``--write-docs`` writes the README's pictures instead: one results picture of each game
under ``docs/pictures/`` (six players; Bull Bull in Chinese, Niu-Niu Poker with ties
pushing in Vietnamese) and the dealer's cards
turning over (``docs/pictures/reveal.gif``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.pictures import fonts
from bot.pictures.results import BACKGROUND, encode_png, render_results, size_of
from bot.pictures.reveal import render_reveal
from tests.helpers.picture_samples import GAMES, sample_pictures

REPEATS = 15
TARGET_MS = 50.0
DOCS = Path(__file__).resolve().parents[1] / "docs" / "pictures"
DOCS_LANGUAGES = {"bullbull": "zh", "poker29_vn": "vi"}


def median_ms(action: Callable[[], object], repeats: int = REPEATS) -> float:
    """The median of ``repeats`` runs of ``action``, in milliseconds (after a warm-up)."""
    action()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def cold_ms(picture: object) -> float:
    """One drawing with no text remembered (every name new to the process), in ms."""
    fonts.Typeface.runs.cache_clear()
    fonts.Typeface.width.cache_clear()
    fonts._Face.has.cache_clear()
    fonts._text_run.cache_clear()
    started = time.perf_counter()
    render_results(picture)  # type: ignore[arg-type]
    return (time.perf_counter() - started) * 1000


def bench(players: int) -> bool:
    """Print every game's numbers; whether each met the target."""
    met = True
    print(f"results picture, {players} players: draw + PNG, floor = a blank PNG of that size")
    for game in GAMES:
        pictures = sample_pictures(game, players)
        picture = pictures.results()
        blank = Image.new("RGB", size_of(picture), BACKGROUND)
        drawn = median_ms(lambda picture=picture: render_results(picture))
        floor = median_ms(lambda blank=blank: encode_png(blank))
        width, height = size_of(picture)
        seated = len(picture.players)
        cold = cold_ms(picture)
        verdict = "ok" if drawn < TARGET_MS else f"over {TARGET_MS:.0f} ms"
        met &= drawn < TARGET_MS
        print(
            f"  {game:<11} {seated:2} players, {width}x{height}: {drawn:6.1f} ms, "
            f"floor {floor:5.1f} ms, ratio {drawn / floor:4.1f}  {verdict}; "
            f"with every name new {cold:5.1f} ms"
        )
        reveal = pictures.reveal()
        if reveal is not None:
            gif = median_ms(lambda reveal=reveal: render_reveal(reveal))
            print(f"  {'':<11} the dealer's cards turning (GIF, 6 frames): {gif:6.1f} ms")
    return met


def write_docs() -> None:
    """Write the README's pictures."""
    DOCS.mkdir(parents=True, exist_ok=True)
    for game in GAMES:
        pictures = sample_pictures(game, 6, DOCS_LANGUAGES.get(game, "en"))
        (DOCS / f"{game}.png").write_bytes(render_results(pictures.results()))
        print(f"wrote {DOCS / f'{game}.png'}")
        reveal = pictures.reveal()
        if game == "bullbull" and reveal is not None:
            (DOCS / "reveal.gif").write_bytes(render_reveal(reveal))
            print(f"wrote {DOCS / 'reveal.gif'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=30)
    parser.add_argument("--write-docs", action="store_true")
    arguments = parser.parse_args()
    if arguments.write_docs:
        write_docs()
        return 0
    return 0 if bench(arguments.players) else 1


if __name__ == "__main__":
    sys.exit(main())

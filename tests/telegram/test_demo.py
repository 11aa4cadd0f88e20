"""``niuniu-bot demo`` as a newcomer runs it: the real bot against the fake Telegram. What it
prints is the group in the order the group gets it (every message once, each answer after
what it answers, the answer to ``/close`` before the chip summary), and ``--pictures DIR``
writes the pictures the group gets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PIL import Image

from bot.telegram.demo import run_demo

#: A message as the demo prints it: who, its id, what it replies to, and a picture's kind,
#: size and file.
HEADER = re.compile(
    r"^\[(?P<who>[^,\]]+), message (?P<id>\d+)(?:, replying to (?P<to>\d+))?"
    r"(?:: (?P<kind>photo|animation) (?P<size>\d+x\d+)(?:, written to (?P<file>.+))?)?\]$"
)


@pytest.mark.parametrize("ruleset", ["envelope68", "bullbull"])
async def test_the_demo_prints_the_group_in_its_order_and_writes_its_pictures(
    tmp_path: Path, ruleset: str
) -> None:
    lines: list[str] = []
    folder = tmp_path / "made" / "pictures"
    code = await run_demo(
        1, lambda text: lines.extend(text.splitlines()), ruleset=ruleset, pictures=folder
    )
    assert code == 0, "\n".join(lines)
    headers = [(index, found) for index, line in enumerate(lines) if (found := HEADER.match(line))]
    ids = [int(found["id"]) for _, found in headers]
    # Every message of the group, the people's and the bot's, once and in order.
    assert ids == list(range(1, max(ids) + 1)), ids
    for _, found in headers:
        if found["to"] is not None:
            assert int(found["to"]) < int(found["id"]), found.string
    ((close, asked),) = [(i, found) for i, found in headers if lines[i + 1] == "/close"]
    answers = [
        index for index, found in headers if found["who"] == "bot" and found["to"] == asked["id"]
    ]
    summary = next(index for index, line in enumerate(lines) if line.startswith("=== chips"))
    assert answers and close < answers[0] < summary, "\n".join(lines[close:])
    assert asked["who"] == "Ada" and lines[answers[0] + 1].startswith("The table is closed")
    # The pictures, before /close: the results last (on a card table the dealer's cards
    # turning over may come first), each written where the demo says, as it was sent.
    shown = [(index, found) for index, found in headers if found["kind"] is not None]
    assert all(index < close for index, _ in shown)
    kinds = [found["kind"] for _, found in shown]
    assert kinds[-1] == "photo" and set(kinds) <= (
        {"photo", "animation"} if ruleset == "bullbull" else {"photo"}
    )
    written = sorted(str(path) for path in folder.iterdir())
    assert written == sorted(found["file"] for _, found in shown)
    for _, found in shown:
        with Image.open(found["file"]) as picture:
            assert f"{picture.width}x{picture.height}" == found["size"]
            assert picture.format == ("PNG" if found["kind"] == "photo" else "GIF")
    count = len(shown)
    assert f"{count} picture{'' if count == 1 else 's'} written to {folder}" in lines[:summary]

"""The browser tests' fixtures: the console served with a played history, and a headless
chromium (``tests.helpers.browser``)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import ServedConsole, browser_paths, headless_chromium


@pytest.fixture(scope="module")
def served(
    sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServedConsole]:
    browser_paths()  # skip (or fail) before building anything
    target = tmp_path_factory.mktemp("browser") / "niuniu.db"
    shutil.copy(sqlite_template, target)
    console = ServedConsole(f"sqlite+aiosqlite:///{target}")
    console.start()
    try:
        yield console
    finally:
        console.stop()


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def browser(downloads: Path) -> Iterator[Any]:
    with headless_chromium(downloads) as driver:
        yield driver

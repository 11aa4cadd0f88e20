"""The tests share code through ``tests/helpers`` (and fixtures through ``conftest.py``):
no test module imports another test module or a conftest, and none imports ``bench/``
(benchmarks may import the helpers, not the other way round)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def imported(path: Path) -> list[tuple[int, str]]:
    """The modules a file imports by absolute name, with their line numbers."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return found


def refused(module: str) -> str | None:
    """Why a test file may not import ``module``, if it may not."""
    parts = module.split(".")
    if parts[0] == "bench" or parts[0].startswith("bench_"):
        return "bench/"
    if parts[0] == "tests" and any(
        part == "conftest" or part.startswith("test_") for part in parts[1:]
    ):
        return "a test module or conftest"
    return None


def test_no_test_file_imports_another_test_module_a_conftest_or_bench() -> None:
    files = sorted(TESTS.rglob("*.py"))
    assert TESTS / "helpers" / "game.py" in files  # the walk does see the tests
    found = [
        f"{path.relative_to(TESTS.parent)}:{line}: imports {module} ({why})"
        for path in files
        for line, module in imported(path)
        if (why := refused(module)) is not None
    ]
    assert found == []


def test_the_check_catches_each_kind_of_import() -> None:
    assert refused("tests.store.test_hot_path") is not None
    assert refused("tests.web.conftest") is not None
    assert refused("tests.unit.test_money.AMOUNT_REFUSALS") is not None
    assert refused("bench.picture_samples") is not None
    assert refused("tests.helpers.game") is None
    assert refused("tests.e2e.harness") is None

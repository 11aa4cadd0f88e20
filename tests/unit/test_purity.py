"""The rules and the engine stay pure: the part of the check import-linter cannot express.

The import-linter contracts in pyproject.toml (run by ``lint-imports`` in ``make test`` and
CI) forbid the rules and the engine the layers above them, the project's third-party
packages and the standard-library modules that do I/O, read the clock or draw randomness,
and keep the database libraries in the store and python-telegram-bot in the shell. A
contract can only forbid modules it names, though: it cannot say "the standard library
and nothing else", nor "only these modules of the project" (a new ``bot.web`` would be
allowed until someone named it), and it does not see ``__import__`` calls. This test says
those: every ``.py`` file under ``bot/rules`` and ``bot/engine`` is parsed (new files are
covered automatically), and each import must be a standard-library module or one of the
project's own pure modules.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.imports import BOT_DIR, imported_modules, module_name

PURE_PACKAGES = ("rules", "engine")
#: The project's own modules the pure packages may use.
ALLOWED_OWN = ("bot.rules", "bot.engine", "bot.money")


@dataclass(frozen=True)
class Violation:
    where: str
    line: int
    module: str
    why: str

    def __str__(self) -> str:
        return f"{self.where}:{self.line}: imports {self.module} ({self.why})"


def check(source: str, module: str, is_package: bool = False) -> list[Violation]:
    """The imports of one module's source that are neither the standard library nor pure."""
    violations = []
    for line, name in imported_modules(source, module, is_package):
        top = name.partition(".")[0]
        if name == "__import__":
            violations.append(Violation(module, line, name, "dynamic import"))
        elif top == "bot":
            if not any(name == own or name.startswith(own + ".") for own in ALLOWED_OWN):
                violations.append(Violation(module, line, name, "not a pure project module"))
        elif top not in sys.stdlib_module_names:
            violations.append(Violation(module, line, name, "not in the standard library"))
    return violations


def pure_files() -> list[Path]:
    return sorted(path for package in PURE_PACKAGES for path in (BOT_DIR / package).rglob("*.py"))


def test_the_checker_sees_the_modules_that_matter() -> None:
    names = {module_name(path) for path in pure_files()}
    assert {
        "bot.rules",
        "bot.rules.envelope",
        "bot.rules.split",
        "bot.rules.ruleset",
        "bot.rules.cards",
        "bot.rules.bullbull",
        "bot.rules.poker29",
        "bot.engine",
        "bot.engine.settlement",
    } <= names


def test_rules_and_engine_import_only_the_stdlib_and_pure_project_modules() -> None:
    violations = []
    for path in pure_files():
        source = path.read_text(encoding="utf-8")
        violations += check(source, module_name(path), path.name == "__init__.py")
    assert not violations, "\n".join(str(v) for v in violations)


# --- the checker can fail -----------------------------------------------------------------

BAD_SOURCE = """\
from __future__ import annotations
import hashlib
import os.path
from random import randint
import telegram
from sqlalchemy.orm import Session
from bot.store import ledger
from bot import telegram as tg
from ..service import commands
from .. import fakegram
from . import envelope
from .split import commitment
from ..money import parse_amount
from bot.money import format_amount
import bot.rules.split

def later():
    import subprocess
    return __import__("socket")
"""


def test_the_checker_flags_a_synthetic_bad_module() -> None:
    # os.path, random and subprocess are the standard library: the contracts forbid them.
    flagged = {v.module for v in check(BAD_SOURCE, "bot.rules.bad")}
    assert flagged == {
        "telegram",
        "sqlalchemy.orm",
        "bot.store",
        "bot.telegram",
        "bot.service",
        "bot.fakegram",
        "__import__",
    }


def test_the_checker_resolves_relative_imports_in_a_package_init() -> None:
    assert check("from . import envelope\n", "bot.rules", is_package=True) == []
    assert [v.module for v in check("from .. import store\n", "bot.rules", True)] == ["bot.store"]


def test_the_checker_passes_a_clean_module() -> None:
    clean = "import hashlib\nfrom dataclasses import dataclass\nfrom bot.money import x\n"
    assert check(clean, "bot.engine.clean") == []

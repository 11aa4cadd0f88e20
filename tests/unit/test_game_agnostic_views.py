"""The chat's views, the command line and verification render every game alike: they ask
a ruleset what to show (``Ruleset.show``, ``Ruleset.decide``) and never which game it is.

Each module is parsed and must neither import a game's own module nor test a hand's class
or a ruleset's name: no ``isinstance`` with a hand class, and no comparison, ``match`` or
``startswith`` with a ruleset's name or a ``.name`` attribute. (Naming a ruleset as a
command's default, as the command line does, is data, not a branch.)
"""

from __future__ import annotations

import ast

import pytest

from bot.rules.ruleset import LEGACY_NAMES, RULESETS
from tests.helpers.imports import BOT_DIR, imported_modules, module_name

#: The chat's views (each module of ``bot.telegram.views``), the command line, verification.
RENDERERS = (
    *sorted(
        str(path.relative_to(BOT_DIR)) for path in (BOT_DIR / "telegram" / "views").glob("*.py")
    ),
    "cli.py",
    "engine/verification.py",
)
#: The games' own modules: their hands and kinds are what a renderer must not test.
GAME_MODULES = (
    "bot.rules.envelope",
    "bot.rules.bullbull",
    "bot.rules.poker29",
    "bot.rules._fivecard",
)
GAMES = frozenset(module.rpartition(".")[2] for module in GAME_MODULES)
RULESET_NAMES = frozenset(RULESETS) | frozenset(LEGACY_NAMES)


def names_a_ruleset(node: ast.AST) -> bool:
    """True when ``node`` holds a string that is a ruleset's name or the start of one
    ("poker"), or reads an attribute ``.name``."""
    for part in ast.walk(node):
        if isinstance(part, ast.Attribute) and part.attr == "name":
            return True
        text = part.value if isinstance(part, ast.Constant) else None
        if (
            isinstance(text, str)
            and len(text) > 2
            and any(n.startswith(text) for n in RULESET_NAMES)
        ):
            return True
    return False


def names_a_hand_class(node: ast.AST) -> bool:
    """True when ``node`` names a game module's attribute or a class called ``…Hand``."""
    for part in ast.walk(node):
        if isinstance(part, ast.Name) and (part.id.endswith("Hand") or part.id in GAMES):
            return True
        if isinstance(part, ast.Attribute) and part.attr.endswith("Hand"):
            return True
    return False


def game_branches(source: str, module: str) -> list[str]:
    """Where ``source`` imports a game's module or branches on a hand's class or a
    ruleset's name."""
    found = [
        f"{module}:{line} imports {name}"
        for line, name in imported_modules(source, module, is_package=False)
        if any(name == game or name.startswith(game + ".") for game in GAME_MODULES)
    ]
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) == "isinstance"
            and names_a_hand_class(node.args[-1])
        ):
            found.append(f"{module}:{line} {ast.unparse(node)}")
        if isinstance(node, ast.Compare) and any(
            names_a_ruleset(side) for side in (node.left, *node.comparators)
        ):
            found.append(f"{module}:{line} compares {ast.unparse(node)}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith")
            and any(names_a_ruleset(arg) for arg in node.args)
        ):
            found.append(f"{module}:{line} tests {ast.unparse(node)}")
        if isinstance(node, ast.match_case) and names_a_ruleset(node.pattern):
            found.append(f"{module}:{node.pattern.lineno} matches {ast.unparse(node.pattern)}")
    return found


@pytest.mark.parametrize("relative", RENDERERS)
def test_renderers_never_branch_on_a_game(relative: str) -> None:
    path = BOT_DIR / relative
    assert game_branches(path.read_text(encoding="utf-8"), module_name(path)) == []


# --- the check can fail ---------------------------------------------------------------------

BAD_SOURCE = """\
from bot.rules import envelope
from bot.rules.bullbull import Hand as BullHand
import bot.rules.poker29

def show(hand, ruleset, name):
    if isinstance(hand, envelope.Hand):
        return 1
    if isinstance(hand, (BullHand, int)):
        return 2
    if ruleset.name == "bullbull":
        return 3
    if "poker29_vn" != name:
        return 4
    if name.startswith("poker"):
        return 5
    if name in ("envelope68",):
        return 6
    match name:
        case "red_envelope":
            return 7
"""


def test_the_check_flags_every_kind_of_game_branch() -> None:
    found = game_branches(BAD_SOURCE, "bot.telegram.bad")
    lines = sorted(int(entry.split(":")[1].split()[0]) for entry in found)
    assert lines == [1, 2, 3, 6, 8, 10, 12, 14, 16, 19], found


def test_the_check_passes_branches_that_do_not_name_a_game() -> None:
    clean = """\
from bot.rules.ruleset import get_ruleset

def show(view, args, language):
    if view.amount_cents is not None and language == "zh":
        return 1
    if args.command == "rules" or isinstance(view, (int, str)):
        return 2
    parser.add_argument("--ruleset", default="bullbull")
"""
    assert game_branches(clean, "bot.telegram.clean") == []

"""The imports of the bot's own modules, read from their source with ``ast`` (the purity
checks of the rules and the engine, and which modules name a game)."""

from __future__ import annotations

import ast
from pathlib import Path

import bot

BOT_DIR = Path(bot.__file__).resolve().parent


def module_name(path: Path) -> str:
    """Dotted name of a file under the ``bot`` package (``bot/rules/x.py`` -> ``bot.rules.x``)."""
    parts = path.resolve().relative_to(BOT_DIR.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imported_modules(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """Every module a source imports (absolute dotted names), with line numbers.

    ``from x import y`` yields ``x.y`` as well as ``x`` when ``x`` is the ``bot`` package
    itself, so ``from bot import telegram`` is caught. Relative imports are resolved
    against ``module``. Calls to ``__import__`` are reported as the module ``__import__``.
    """
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts)
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            if target in ("bot", "bot.rules", "bot.engine") or not node.module:
                found.extend((node.lineno, f"{target}.{alias.name}") for alias in node.names)
            else:
                found.append((node.lineno, target))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "__import__"
        ):
            found.append((node.lineno, "__import__"))
    return found

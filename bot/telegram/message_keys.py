"""The message keys the code uses, found by reading its source: a Babel extractor.

``pybabel extract -F babel.cfg`` calls :func:`extract` on every module of ``bot/`` (see
docs/translations.md); the template it writes is what ``pybabel update`` merges into each
language's catalogue, and the catalogue tests compare the catalogues with it. The bot
never imports this module.

Message keys are not gettext's usual source texts, and some are put together at run
time, so Babel's own Python extractor cannot find them all. A key is used when it is

- a string literal where a key goes: ``t("history.header")``, ``text(chat_id,
  "table.opened")``, ``"rules.table_house" if house else "rules.table"``, or in a local
  variable (or an item of one) that the function assigns literals to, each a key
  (:data:`KEY_ARGUMENTS` says which argument is the key; only in ``bot/telegram``, the
  layer that renders, where the mapping passes ``renders = true``);
- the key of a raised ``GameError`` anywhere in ``bot/``: ``RuleViolation("bet_too_small")``
  is shown as ``error.bet_too_small``;
- one of the keys of :data:`BUILT_KEYS` or :data:`BUILT_ERROR_KEYS`, where code builds a
  key from a prefix and one value of a closed set: ``f"board.phase.{state.phase.value}"``.

Whatever else is passed as a key (a parameter, unless the function is itself one of
:data:`KEY_ARGUMENTS` forwarding it; an f-string of another shape; an expression) raises
:class:`UnknownKey`: the extraction would miss it, so it must fail instead. The
catalogue tests check that every ``GameError`` class is in :data:`SHOWN_ERRORS` or
:data:`UNSHOWN_ERRORS`.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

from bot.engine.round import Phase, VoidReason
from bot.engine.settings import ALL_SETTING_REASONS, DEALERS
from bot.engine.settlement import Result
from bot.money import AMOUNT_REASONS
from bot.rules import bullbull, envelope, poker29
from bot.rules.hand_view import KIND_KEYS
from bot.rules.ruleset import RULESETS
from bot.telegram.commands import DESCRIBED

#: Callables that take a message key, and the index of the key among their positional
#: arguments (or it is passed as ``key=``).
KEY_ARGUMENTS = {
    "translate": 1,  # i18n.translate(language, key, currency, **params)
    "translate_plural": 1,  # i18n.translate_plural(language, key, number, currency, **params)
    "t": 0,  # Views.t(key, **params)
    "t_plural": 0,  # Views.t_plural(key, number, **params)
    "text": 1,  # GameBot.text(chat_id, key, **params)
    "text_offline": 2,  # ChatSettings.text_offline(chat, user, key, **params)
    "_button": 0,  # Views._button(key, press)
}
#: Those of them whose message has plural forms.
PLURAL_CALLABLES = frozenset({"translate_plural", "t_plural"})

#: The errors shown to users as ``error.<key>``.
SHOWN_ERRORS = frozenset({"GameError", "RuleViolation"})
#: GameErrors never shown, and why.
UNSHOWN_ERRORS = {"NotDue": "a deadline that fired early; the service catches it and waits"}

#: The f-string that shows a GameError: its keys are found where the errors are raised.
ERROR_PREFIX = "error."

#: Keys built at run time as ``f"<prefix>{value}"``: the values each prefix is completed
#: with, and where they come from.
BUILT_KEYS: dict[str, tuple[frozenset[str], str]] = {
    "board.phase.": (
        frozenset(phase.value for phase in Phase),
        "the board names the round's phase",
    ),
    "results.void.": (
        frozenset(reason.value for reason in VoidReason),
        "the results of a voided round say why",
    ),
    "result.": (frozenset(result.value for result in Result), "a player's result"),
    "game.": (frozenset(RULESETS), "the name of the game a table plays (its ruleset)"),
    "rules.": (frozenset(RULESETS), "the rules of the game a table plays (its ruleset)"),
    "rules.dealer.": (frozenset(DEALERS), "who deals at a table (the dealer setting)"),
    "kind.": (KIND_KEYS, "how a table names a hand (its ruleset's HandView.kind_key)"),
    "hand.": (
        frozenset({*bullbull.HandKind, *poker29.HandKind, *envelope.HandKind})
        - {envelope.HandKind.ORDINARY},
        "a hand's name in a language the rules do not name it in (HandView.kind)",
    ),
    "command.": (DESCRIBED, "a command's description in menus and /help (its registry)"),
}
#: Keys of GameErrors built at run time, as :data:`BUILT_KEYS`.
BUILT_ERROR_KEYS: dict[str, tuple[frozenset[str], str]] = {
    "not_": (
        frozenset(phase.value for phase in Phase if phase.is_open),
        "a command sent in the wrong phase names the phase it needs",
    ),
    "bad_amount.": (
        AMOUNT_REASONS,
        "why typed text is not an amount (bot.money.AmountError.reason)",
    ),
    "bad_setting.": (
        ALL_SETTING_REASONS,
        "why a setting was not changed (bot.engine.settings.SettingError.reason)",
    ),
}


class UnknownKey(ValueError):
    """Code passes a message key that the extractor cannot see."""


@dataclass(frozen=True, slots=True)
class KeyUse:
    """Where code uses a message key."""

    key: str
    line: int
    plural: bool = False
    #: For a key built at run time: how (its prefix, the values it is completed with, why).
    built: str = ""


def extract(
    fileobj: IO[bytes],
    keywords: Collection[str],
    comment_tags: Collection[str],
    options: Mapping[str, Any],
) -> Iterator[tuple[int, str, str | tuple[str, str], list[str]]]:
    """Babel's extraction method (babel.cfg): the keys a module uses, each as a singular
    or plural message, with a comment on keys built at run time."""
    name = getattr(fileobj, "name", "<module>")
    renders = str(options.get("renders", "")).lower() == "true"
    for use in keys_used(fileobj.read().decode("utf-8"), name, renders=renders):
        comments = [f"built at run time: {use.built}"] if use.built else []
        if use.plural:
            yield use.line, "ngettext", (use.key, use.key), comments
        else:
            yield use.line, "gettext", use.key, comments


def keys_used(source: str, filename: str, *, renders: bool) -> list[KeyUse]:
    """The message keys a module's source uses: raised errors' keys, and, if it
    ``renders``, the keys it renders."""
    scan = _Scan(filename, renders)
    scan.visit(ast.parse(source, filename))
    return scan.uses


class _Scan(ast.NodeVisitor):
    def __init__(self, filename: str, renders: bool) -> None:
        self.filename = filename
        self.renders = renders
        self.uses: list[KeyUse] = []
        self.functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._in_function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._in_function(node)

    def _in_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append(node)
        self.generic_visit(node)
        self.functions.pop()

    def visit_Call(self, node: ast.Call) -> None:
        name = _callee(node)
        if name in SHOWN_ERRORS:
            self._error_key(node, _argument(node, 0))
        elif self.renders and name in KEY_ARGUMENTS:
            self._key(node, _argument(node, KEY_ARGUMENTS[name]), name in PLURAL_CALLABLES)
        self.generic_visit(node)

    def _key(self, call: ast.Call, key: ast.expr | None, plural: bool) -> None:
        built = _prefix(key)
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            self.uses.append(KeyUse(key.value, key.lineno, plural))
        elif isinstance(key, ast.IfExp):
            self._key(call, key.body, plural)
            self._key(call, key.orelse, plural)
        elif isinstance(key, ast.Name) and self._forwards(key.id):
            pass  # a wrapper passing on the key it was given: its callers are scanned
        elif literals := self._assigned_literals(key):
            self.uses.extend(KeyUse(str(k.value), k.lineno, plural) for k in literals)
        elif built == ERROR_PREFIX and not plural:
            pass  # ``f"error.{error.key}"``: the keys are found where errors are raised
        elif built is not None and built in BUILT_KEYS:
            self._built(call, built, BUILT_KEYS[built], plural)
        else:
            self._unknown(call, "a message key")

    def _error_key(self, call: ast.Call, key: ast.expr | None) -> None:
        built = _prefix(key)
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            self.uses.append(KeyUse(ERROR_PREFIX + key.value, key.lineno))
        elif isinstance(key, ast.IfExp):
            self._error_key(call, key.body)
            self._error_key(call, key.orelse)
        elif built is not None and built in BUILT_ERROR_KEYS:
            self._built(call, ERROR_PREFIX + built, BUILT_ERROR_KEYS[built], plural=False)
        else:
            self._unknown(call, "an error key")

    def _built(
        self, call: ast.Call, prefix: str, values: tuple[frozenset[str], str], plural: bool
    ) -> None:
        completions, reason = values
        built = f"{prefix}{{{'|'.join(sorted(completions))}}}: {reason}"
        self.uses.extend(
            KeyUse(prefix + value, call.lineno, plural, built) for value in sorted(completions)
        )

    def _assigned_literals(self, key: ast.expr | None) -> list[ast.Constant]:
        """The string literals the function around a call assigns to a local variable
        used as the key, or whose item is: ``key = "a" if ... else "b"``, ``keys =
        {True: ("a", "b"), ...}[...]``, then ``keys[0]``."""
        if isinstance(key, ast.Subscript):
            key = key.value
        if not isinstance(key, ast.Name) or not self.functions:
            return []
        name = key.id
        if name in _parameters(self.functions[-1]):
            return []  # given by the caller: what the function assigns is not all it holds
        return [
            literal
            for node in ast.walk(self.functions[-1])
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
            for literal in ast.walk(node.value)
            if isinstance(literal, ast.Constant) and isinstance(literal.value, str)
        ]

    def _forwards(self, name: str) -> bool:
        """Whether ``name`` is a parameter of the function around it, itself one of
        :data:`KEY_ARGUMENTS` (``Views.t`` calling ``translate`` with its ``key``)."""
        if not self.functions or self.functions[-1].name not in KEY_ARGUMENTS:
            return False
        return name in _parameters(self.functions[-1])

    def _unknown(self, call: ast.Call, what: str) -> None:
        raise UnknownKey(
            f"{self.filename}:{call.lineno}: {what} that extraction cannot see: "
            f"{ast.unparse(call)[:120]}. Pass a literal key, or see bot/telegram/message_keys.py"
        )


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    arguments = function.args
    return {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}


def _callee(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _argument(call: ast.Call, index: int) -> ast.expr | None:
    """The key argument of a call: positional at ``index``, or ``key=``."""
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args):
        return call.args[index]
    return next((keyword.value for keyword in call.keywords if keyword.arg == "key"), None)


def _prefix(key: ast.expr | None) -> str | None:
    """``"board.phase."`` for ``f"board.phase.{...}"``: a literal, then one value."""
    if not isinstance(key, ast.JoinedStr) or len(key.values) != 2:
        return None
    literal, value = key.values
    if not (isinstance(literal, ast.Constant) and isinstance(value, ast.FormattedValue)):
        return None
    if value.conversion != -1 or value.format_spec is not None:
        return None
    return str(literal.value)

"""A problem with the configuration as one line that names the key (``[bot] sweep_seconds
must be more than 0, got -1``) or the environment variable the value came from, and an
unknown section or key with the nearest known name: a misspelt key would otherwise be
ignored and its default used without a word."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from bot.config.model import ENV_PREFIX, Config, nearest, place_of

#: Where each field of ``Config`` lives in the file: (section, key or None) -> field.
PLACES = {
    (place.section, place.key): name
    for name, place in ((name, place_of(f)) for name, f in Config.model_fields.items())
}
#: The file's sections and, for each, its keys (a key may be a table: ``webhook``).
SECTIONS: dict[str, list[str]] = {}
for _section, _key in PLACES:
    SECTIONS.setdefault(_section, []).extend([_key] if _key else [])
#: Fields whose value an error never repeats: the token and the webhook's secret, and the
#: database URL, which may hold a password.
SECRET_FIELDS = frozenset({"telegram_token", "telegram_tokens", "secret_token", "database_url"})


def shown(value: Any) -> str:
    """A value as TOML writes it (about), shortened."""
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, float):
        return repr(value)  # inf, not JSON's Infinity
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


_PREDICATES = {
    "float_type": "must be a number, like 1.5",
    "float_parsing": "must be a number, like 1.5",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "string_type": 'must be text in quotes, like "abc"',
    "bool_type": "must be true or false",
    "list_type": "must be a list, like [1, 2]",
    "tuple_type": "must be a list, like [1, 2]",
    "frozen_set_type": "must be a list, like [1, 2]",
    "finite_number": "must be a finite number",
    "model_type": "must be a section (a table), not a single value",
    "model_attributes_type": "must be a section (a table), not a single value",
    "dict_type": "must be a section (a table), not a single value",
    "is_instance_of": "must be a section (a table), not a single value",
}


def _predicate(problem: ErrorDetails) -> str:
    kind, ctx = problem["type"], problem.get("ctx") or {}
    if kind == "greater_than":
        return f"must be more than {_number(ctx['gt'])}"
    if kind == "greater_than_equal":
        return f"must be at least {_number(ctx['ge'])}"
    if kind == "less_than_equal":
        return f"must be at most {_number(ctx['le'])}"
    if kind == "literal_error":
        return f"must be {ctx['expected']}"
    if kind in _PREDICATES:
        return _PREDICATES[kind]
    message = problem["msg"]  # our own checks' messages (``_invalid``) read on from the name
    return message if kind == "config" else "is wrong: " + message[:1].lower() + message[1:]


def _table_keys(path: list[str]) -> list[str]:
    """The keys of the table at ``path`` (``["telegram"]``, ``["telegram", "webhook"]``)."""
    place = (path[0], path[1] if len(path) > 1 else None)
    if place not in PLACES:
        return SECTIONS[path[0]]
    annotation = Config.model_fields[PLACES[place]].annotation
    assert isinstance(annotation, type) and issubclass(annotation, BaseModel)
    return list(annotation.model_fields)


def _is_model(field: str) -> bool:
    """Whether the field of ``Config`` named ``field`` is a table of its own."""
    annotation = Config.model_fields[field].annotation
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _is_table(path: list[str], name: str) -> bool:
    """Whether ``name`` in the table at ``path`` is a table (``[telegram] webhook``)."""
    field = PLACES.get((path[0], name)) if len(path) == 1 else None
    return field is not None and _is_model(field)


def unknown_section(name: str, value: Any) -> str:
    """The line for a name above every section: an unknown table, or a key outside one."""
    if not isinstance(value, dict):
        homes = [section for section, keys in SECTIONS.items() if name in keys]
        home = f"; it belongs in [{homes[0]}]" if homes else ""
        return f"key {name} is outside every section{home}"
    suggestion = nearest(name, list(SECTIONS))
    if suggestion is not None:
        return f"unknown section [{name}]; did you mean [{suggestion}]?"
    sections = ", ".join(f"[{section}]" for section in sorted(SECTIONS))
    return f"unknown section [{name}] (the sections are {sections})"


def unknown_key(path: list[str], name: str, value: Any, known: list[str]) -> str:
    """The line for an unknown key (or table) in the table at ``path``, with the nearest
    known name."""
    where = ".".join(path)
    suggestion = nearest(name, known)
    if isinstance(value, dict):  # a table: [telegram.webhok]
        hint = ""
        if suggestion is not None and _is_table(path, suggestion):
            hint = f"; did you mean [{where}.{suggestion}]?"
        return f"unknown section [{where}.{name}]{hint}"
    if suggestion is not None:
        shown = f"[{where}.{suggestion}]" if _is_table(path, suggestion) else suggestion
        return f"unknown key [{where}] {name}; did you mean {shown}?"
    keys = ", ".join(key for key in known if not _is_table(path, key))
    return f"unknown key [{where}] {name} (the keys of [{where}] are {keys})"


def _problem_line(problem: ErrorDetails, from_environment: Mapping[str, Any]) -> str:
    """One line for one of pydantic's errors: ``[section] key`` or the variable first."""
    if problem["type"] == "game":
        return problem["msg"]
    field, *rest = (str(part) for part in problem["loc"])
    place = place_of(Config.model_fields[field])
    if rest and _is_model(field):  # a key of [web] or [telegram.webhook]
        table = place.section if place.key is None else f"{place.section}.{place.key}"
        key, rest = rest[0], rest[1:]
    else:
        table, key = place.section, place.key or ""
    if problem["type"] == "extra_forbidden":
        path = table.split(".")
        return unknown_key(path, key, problem["input"], _table_keys(path))
    name = f"[{table}]" + (f" {key}" if key else "")
    given = from_environment.get(field)
    if isinstance(given, dict) and key in given:
        name = f"{ENV_PREFIX}{field}_{key}".upper()
    elif field in from_environment and not isinstance(given, dict):
        name = f"{ENV_PREFIX}{field}".upper()
    if rest:
        name += f" (item {int(rest[0]) + 1})" if rest[0].isdigit() else f" {rest[0]}"
    line = f"{name} {_predicate(problem)}"
    secret = field in SECRET_FIELDS or key in SECRET_FIELDS
    if not secret and not isinstance(problem["input"], dict):
        line += f", got {shown(problem['input'])}"
    return line


def describe_errors(
    error: ValidationError, from_environment: Mapping[str, Any], first: list[str]
) -> str:
    """The first problem (``first``, the file's unknown names, then ``error``'s) in one
    line, and how many more there are."""
    problems = error.errors(include_url=False)
    return with_count([*first, *(_problem_line(p, from_environment) for p in problems)])


def with_count(lines: list[str]) -> str:
    more = len(lines) - 1
    if more:
        return lines[0] + f" (and {more} more {'problem' if more == 1 else 'problems'})"
    return lines[0]

"""HTML from Jinja2 templates (autoescaped: users' names and titles are escaped) with the
console's filters: money from integer cents by ``bot.money``, times in UTC, names."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import jinja2

from bot.money import format_amount, format_bps, format_signed
from bot.service.game import Person


def when(ms: int | None) -> str:
    """A time in milliseconds since the epoch as ``2026-12-01 13:05`` (UTC); ``–`` for none."""
    if ms is None:
        return "–"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M")


def day_of(day_number: int) -> str:
    """A day (days since the epoch) as ``12-01``."""
    return datetime.fromtimestamp(day_number * 86_400, UTC).strftime("%m-%d")


def person_name(user_id: int | None, people: Mapping[int, Person]) -> str:
    """A user's name as the bot shows it: first name, else @username, else the id (not
    escaped here: the template escapes it)."""
    if user_id is None or user_id == 0:
        return "the house"
    person = people.get(user_id)
    if person is None:
        return f"user {user_id}"
    return (person.first_name or (f"@{person.username}" if person.username else str(user_id)))[:64]


def build_environment() -> jinja2.Environment:
    """The templates of ``bot/web/console/templates``, autoescaped."""
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("bot.web.console", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(
        money=format_amount, signed=format_signed, bps=format_bps, when=when, day=day_of
    )
    environment.globals["name"] = person_name
    environment.globals["zip"] = zip
    return environment


def render(environment: jinja2.Environment, template: str, **context: Any) -> str:
    """A page as text."""
    return environment.get_template(template).render(**context)

"""Typed errors of the engine. Each carries a message key and parameters for the shell."""

from __future__ import annotations

from typing import Any


class GameError(Exception):
    """A command was refused; nothing changed.

    ``key`` names the message the user sees (looked up in the message catalogue) and
    ``params`` fill it in. Subclasses group errors by cause.
    """

    def __init__(self, key: str, **params: Any) -> None:
        super().__init__(key, params)
        self.key = key
        self.params = params

    def __str__(self) -> str:
        details = ", ".join(f"{name}={value!r}" for name, value in self.params.items())
        return f"{self.key}({details})" if details else self.key


class RuleViolation(GameError):
    """The command breaks a rule of the round (wrong phase, too low, not enough chips...)."""


class NotDue(GameError):
    """A deadline was asked to fire before its time."""

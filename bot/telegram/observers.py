"""What the shell tells an operator's instruments (metrics) as it happens, without
knowing who listens: the composition root passes an observer (``bot.web.metrics``
implements it), and without one nothing is told. Each call is cheap and never fails the
work it reports on. Deadlines have their own observer (``bot.telegram.deadlines``)."""

from __future__ import annotations

from typing import Protocol

#: The kind of an update that is no command: a button press, or a text (a bare number).
BUTTON = "button"
MESSAGE = "message"
#: A group's command sent in a private chat (answered with where it works).
GROUP_ONLY = "group_only"


class ShellObserver(Protocol):
    """Told what the shell handled and asked of Telegram."""

    def update_handled(self, kind: str, seconds: float) -> None:
        """An update was handled (its handler returned or answered an error): ``kind`` is
        the command's name, ``BUTTON``, ``MESSAGE`` or ``GROUP_ONLY``; ``seconds`` how long
        its handler took."""

    def round_ended(self, round_id: int, game: str, void_reason: str | None) -> None:
        """A round this process moved on was settled (``void_reason`` None) or voided."""

    def bot_api_called(self, method: str) -> None:
        """A Bot API request (``sendMessage``, ``editMessageText``, each long poll's
        ``getUpdates``…) is made; a retry counts again."""

    def bot_api_failed(self, method: str, kind: str) -> None:
        """Telegram refused a request or it failed: ``kind`` is ``retry_after`` (429),
        ``conflict`` (409: another process polls with the token), ``bad_request``,
        ``forbidden``, ``timed_out``, ``network`` or ``other``."""

    def delivery_retried(self, message: str, failure: str) -> None:
        """A try to deliver a ``message`` (its kind: ``results``, ``phase``, ``closing``,
        ``answer``, ``edit``, ``toast``, ``delete``) failed on the way with ``failure``
        (as ``bot_api_failed`` names it) and is tried again."""

    def delivery_failed(self, message: str, failure: str) -> None:
        """The delivery of a ``message`` stopped: Telegram refused it, its tries failed for
        as long as they may (``bot.telegram.retries``), or an answer waited too long
        (``too_old``)."""


class Unobserved:
    """The observer when nobody listens: every report goes nowhere."""

    def update_handled(self, kind: str, seconds: float) -> None:
        pass

    def round_ended(self, round_id: int, game: str, void_reason: str | None) -> None:
        pass

    def bot_api_called(self, method: str) -> None:
        pass

    def bot_api_failed(self, method: str, kind: str) -> None:
        pass

    def delivery_retried(self, message: str, failure: str) -> None:
        pass

    def delivery_failed(self, message: str, failure: str) -> None:
        pass

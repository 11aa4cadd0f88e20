"""Reading a failure: its chain of causes and its words (shared by the store's and the
shell's explanations of start-up failures)."""

from __future__ import annotations

from collections.abc import Iterator


def causes(error: BaseException) -> Iterator[BaseException]:
    """``error``, then what caused it, and so on (SQLAlchemy's ``orig`` counts)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        original = getattr(current, "orig", None)
        if current.__cause__ is not None:
            current = current.__cause__
        elif isinstance(original, BaseException):
            current = original
        elif not current.__suppress_context__:
            current = current.__context__
        else:
            current = None


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def os_reason(chain: list[BaseException]) -> str | None:
    """The operating system's words for the innermost ``OSError`` of the chain."""
    for cause in reversed(chain):
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror.lower()
    return None

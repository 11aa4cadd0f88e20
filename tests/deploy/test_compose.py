"""docker-compose.yml and .env.example name the same variables, so that an operator who
fills in .env.example has set everything the compose file reads, and nothing it ignores."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: ``${NAME}``, ``${NAME:-default}``, ``${NAME:?error}``: Compose's interpolation.
_INTERPOLATED = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)")
_ASSIGNED = re.compile(r"^([A-Z_][A-Z0-9_]*)=", re.MULTILINE)


def interpolated(compose_text: str) -> set[str]:
    """The variables a compose file reads, commented-out lines included (their how-to
    tells the operator to set them)."""
    return set(_INTERPOLATED.findall(compose_text))


def assigned(env_text: str) -> set[str]:
    """The variables an env file sets (commented-out ones are not)."""
    return set(_ASSIGNED.findall(env_text))


def test_env_example_lists_every_variable_the_compose_file_reads() -> None:
    compose = interpolated((ROOT / "docker-compose.yml").read_text())
    example = assigned((ROOT / ".env.example").read_text())
    assert compose - example == set(), "add them to .env.example, with a comment"
    assert example - compose == set(), "docker-compose.yml does not read them"


def test_the_checks_see_a_missing_variable() -> None:
    compose = "    NIUNIU_MODE: ${NIUNIU_MODE:-}\n    X: ${POSTGRES_PASSWORD:?set it}\n"
    assert interpolated(compose) == {"NIUNIU_MODE", "POSTGRES_PASSWORD"}
    assert assigned("# NIUNIU_MODE=\nPOSTGRES_PASSWORD=\n") == {"POSTGRES_PASSWORD"}

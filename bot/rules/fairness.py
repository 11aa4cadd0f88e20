"""The seed a deal is drawn from: the committed server seed, mixed with the participants'
client seeds. Pure. Versioned, so that every round verifies by the derivation it was
dealt with.

**Version 1** (rounds and shoes before client seeds): the deal seed *is* the server seed.

**Version 2**: the deal seed is

    HMAC-SHA256(key = server seed,
                msg = b"niuniu/seed/v2|" + scope + b"|" + str(id) + b"|" + b"|".join(seeds))

where ``scope`` is ``b"round"`` (``id``: the round's id, for a game dealt afresh every
round) or ``b"shoe"`` (``id``: the shoe's id), ``str(id)`` is the id in ASCII decimal, and
``seeds`` are the client seeds of the participants fixed when the deal was made, sorted
by their bytes (duplicates kept; participants without one add nothing). A client seed is
1-64 characters of ``A-Z a-z 0-9 _ . -`` (ASCII, so bytes and characters agree and no
seed contains the separator ``|``): the message is unambiguous. The 32-byte digest then
takes the server seed's place in the split (``bot.rules.split``) or the shuffle
(``bot.rules.cards``), which are unchanged.

The round id (or shoe id) ties a revealed seed to one round: an old round's reveal never
verifies another round.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from enum import StrEnum

#: The derivation of rounds before client seeds, and the current one.
V1 = 1
V2 = 2
CURRENT = V2
VERSIONS = (V1, V2)

#: The longest client seed, in characters.
CLIENT_SEED_MAX = 64
CLIENT_SEED_ALPHABET = "A-Z a-z 0-9 _ . -"
_CLIENT_SEED = re.compile(rf"[A-Za-z0-9_.\-]{{1,{CLIENT_SEED_MAX}}}")
_DOMAIN = b"niuniu/seed/v2|"


class Scope(StrEnum):
    """What a version-2 deal seed is for: one round, or a whole shoe."""

    ROUND = "round"
    SHOE = "shoe"


def is_client_seed(text: str) -> bool:
    """True for a valid client seed: 1-64 of ``A-Z a-z 0-9 _ . -``."""
    return isinstance(text, str) and _CLIENT_SEED.fullmatch(text) is not None


def parse_client_seed(text: str) -> str:
    """A client seed as a player typed it (surrounding spaces dropped); ``ValueError``
    unless it is 1-64 of ``A-Z a-z 0-9 _ . -``."""
    seed = text.strip() if isinstance(text, str) else text
    if not is_client_seed(seed):
        raise ValueError(
            f"a client seed is 1-{CLIENT_SEED_MAX} characters of {CLIENT_SEED_ALPHABET}"
        )
    return seed


def canonical_seeds(seeds: Iterable[str]) -> tuple[str, ...]:
    """The client seeds in their canonical order (by bytes; for ASCII, by characters).
    ``ValueError`` for any that is not a valid client seed."""
    listed = list(seeds)
    for seed in listed:
        if not is_client_seed(seed):
            raise ValueError(f"not a client seed: {seed!r}")
    return tuple(sorted(listed))


def derivation_message(scope: Scope, scope_id: int, client_seeds: Iterable[str]) -> bytes:
    """The HMAC message of version 2 (see the module docstring)."""
    if isinstance(scope_id, bool) or not isinstance(scope_id, int) or scope_id < 0:
        raise ValueError(f"a round or shoe id is a whole number, not {scope_id!r}")
    seeds = canonical_seeds(client_seeds)
    scope_part = Scope(scope).value.encode()
    joined = b"|".join(seed.encode("ascii") for seed in seeds)
    return _DOMAIN + scope_part + b"|" + str(scope_id).encode() + b"|" + joined


def deal_seed(
    version: int,
    server_seed: bytes,
    *,
    scope: Scope = Scope.ROUND,
    scope_id: int = 0,
    client_seeds: Iterable[str] = (),
) -> bytes:
    """The seed a deal is drawn from, by derivation ``version`` (see the module docstring).

    Version 1 is the server seed itself (``client_seeds`` must then be empty: they took no
    part). ``ValueError`` for an unknown version, an empty server seed or a bad client seed.
    """
    if not server_seed:
        raise ValueError("a seed must not be empty")
    if version == V1:
        if tuple(client_seeds):
            raise ValueError("derivation 1 takes no client seeds")
        return bytes(server_seed)
    if version == V2:
        message = derivation_message(scope, scope_id, client_seeds)
        return hmac.new(bytes(server_seed), message, hashlib.sha256).digest()
    raise ValueError(f"no seed derivation version {version!r} (known: 1, 2)")

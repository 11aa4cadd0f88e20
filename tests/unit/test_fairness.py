"""The seed derivation (``bot.rules.fairness``): version 1 is the server seed untouched,
version 2 is the documented HMAC of the participants' client seeds, recomputed here from
the docstring's bytes, and a client seed is what ``/seed`` accepts."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from bot.rules import fairness
from bot.rules.cards import deal_packed
from bot.rules.fairness import Scope, deal_seed
from bot.rules.split import split_envelope

SERVER = bytes(range(32))


def documented(server: bytes, scope: bytes, scope_id: int, seeds: list[str]) -> bytes:
    """Version 2 as docs/rules.md states it, written apart from the module."""
    message = b"niuniu/seed/v2|" + scope + b"|" + str(scope_id).encode() + b"|"
    message += b"|".join(sorted(seed.encode() for seed in seeds))
    return hmac.new(server, message, hashlib.sha256).digest()


def test_version_1_is_the_server_seed_itself_and_deals_as_before() -> None:
    assert deal_seed(1, SERVER) == SERVER
    assert split_envelope(deal_seed(1, SERVER), 5, 2_500) == split_envelope(SERVER, 5, 2_500)
    with pytest.raises(ValueError, match="no client seeds"):
        deal_seed(1, SERVER, client_seeds=["abc"])


def test_version_2_is_the_documented_hmac_and_the_same_every_time() -> None:
    seeds = ["zeta", "Alpha-1", "m.m_m"]
    derived = deal_seed(2, SERVER, scope=Scope.ROUND, scope_id=1234, client_seeds=seeds)
    assert derived == documented(SERVER, b"round", 1234, seeds)
    assert derived == deal_seed(2, SERVER, scope=Scope.ROUND, scope_id=1234, client_seeds=seeds)
    assert len(derived) == 32
    # A fixed vector, so that the page and any other implementation have one to meet.
    assert fairness.derivation_message(Scope.SHOE, 7, ["b", "a"]) == b"niuniu/seed/v2|shoe|7|a|b"
    assert fairness.derivation_message(Scope.ROUND, 7, []) == b"niuniu/seed/v2|round|7|"
    assert (
        deal_seed(2, SERVER, scope_id=1).hex()
        == documented(SERVER, b"round", 1, []).hex()
        != SERVER.hex()
    )


def test_the_order_of_the_participants_does_not_matter() -> None:
    seeds = ["carol", "alice", "bob", "alice"]
    reference = deal_seed(2, SERVER, scope_id=5, client_seeds=seeds)
    for order in (sorted(seeds), seeds[::-1], ["alice", "alice", "bob", "carol"]):
        assert deal_seed(2, SERVER, scope_id=5, client_seeds=order) == reference
    # ...but every seed counts, duplicates too.
    assert deal_seed(2, SERVER, scope_id=5, client_seeds=["alice", "bob", "carol"]) != reference


def test_one_client_seed_changes_the_deal() -> None:
    before = deal_seed(2, SERVER, scope_id=5, client_seeds=["alice"])
    after = deal_seed(2, SERVER, scope_id=5, client_seeds=["alice2"])
    assert deal_packed(before, 1, 4) != deal_packed(after, 1, 4)
    assert split_envelope(before, 4, 2_000) != split_envelope(after, 4, 2_000)


def test_the_scope_and_its_id_separate_rounds_and_shoes() -> None:
    derived = {
        deal_seed(2, SERVER, scope=scope, scope_id=scope_id)
        for scope in (Scope.ROUND, Scope.SHOE)
        for scope_id in (1, 2, 12)
    }
    assert len(derived) == 6


@pytest.mark.parametrize(
    ("typed", "kept"),
    [("lucky", "lucky"), ("  A-z_0.9  ", "A-z_0.9"), ("x" * 64, "x" * 64)],
)
def test_a_client_seed_is_1_to_64_plain_characters(typed: str, kept: str) -> None:
    assert fairness.parse_client_seed(typed) == kept


@pytest.mark.parametrize(
    "typed", ["", "   ", "x" * 65, "has space", "a|b", "<b>", "幸运", "１２３", "émile", "a\nb"]
)
def test_anything_else_is_not_a_client_seed(typed: str) -> None:
    with pytest.raises(ValueError, match="1-64 characters"):
        fairness.parse_client_seed(typed)
    with pytest.raises(ValueError, match="not a client seed"):
        deal_seed(2, SERVER, client_seeds=[typed])


def test_an_unknown_version_or_an_empty_seed_is_refused() -> None:
    with pytest.raises(ValueError, match="version"):
        deal_seed(3, SERVER)
    with pytest.raises(ValueError, match="empty"):
        deal_seed(2, b"")

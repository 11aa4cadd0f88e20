"""How the chat shows a hand of any game (from ``Ruleset.show``) and the answer to
``/verify`` (``Views.verification`` of ``verify_round``'s result), in both languages."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from bot.engine import round as engine
from bot.engine.settings import LANGUAGES, Settings
from bot.engine.verification import (
    CardRange,
    DealtHand,
    Mismatch,
    NothingDealt,
    RevealedShoe,
    ShoeSecret,
    Verified,
    verify_round,
)
from bot.rules.cards import CARDS, pack, parse_cards
from bot.rules.hand_view import KIND_KEYS, HandView
from bot.rules.ruleset import RULESETS, get_ruleset
from bot.service.game import Person
from bot.telegram.i18n import read_catalogue
from bot.telegram.messenger import split_message
from bot.telegram.views import Views

ALICE, BOB = 2, 3
PEOPLE = {ALICE: Person(ALICE, "Alice"), BOB: Person(BOB, "<b>Bob</b>")}
SEED = bytes.fromhex("01020304")
EN, ZH = Views(Settings()), Views(Settings(language="zh"))


def view_of(ruleset: str, outcome: int | str) -> HandView:
    rules = get_ruleset(ruleset)
    packed = pack(parse_cards(outcome)) if isinstance(outcome, str) else outcome
    return rules.show(rules.evaluate(packed))


# --- a hand ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ruleset", "outcome", "english", "chinese", "dealt"),
    [
        ("envelope68", 342, "9 pt", "9点", "RM3.42"),
        ("envelope68", 88, "Duizi 对子", "对子", "RM0.88"),
        ("bullbull", "10S 9H AD 9C 8S", "Bull 7", "牛七", "10♠ 9♥ A♦ | 9♣ 8♠"),
        ("bullbull", "KS 9H 7D 5C 2S", "No Bull", "没牛", "K♠ 9♥ 7♦ 5♣ 2♠"),
        ("poker29", "10S 7H 3D 9C 9S", "Big Point 8", "大点8", "10♠ 7♥ 3♦ | 9♣ 9♠"),
        ("poker29_vn", "JS QH KD JS QS", "Ultimate Niu-Niu", "至尊牛牛", "J♠ Q♥ K♦ | J♠ Q♠"),
    ],
)
def test_a_hand_is_named_in_the_tables_language_and_shows_its_amount_or_cards(
    ruleset: str, outcome: int | str, english: str, chinese: str, dealt: str
) -> None:
    view = view_of(ruleset, outcome)
    assert (EN.kind(view), ZH.kind(view)) == (english, chinese)
    assert EN.dealt(view) == ZH.dealt(view) == dealt


@pytest.mark.parametrize(
    ("ruleset", "outcome", "vietnamese", "malay", "traditional"),
    [
        ("envelope68", 342, "9 điểm", "9 mata", "9點"),
        ("envelope68", 88, "Duizi 对子", "Duizi 对子", "對子"),
        ("envelope68", 500, "Manniu 满牛", "Manniu 满牛", "滿牛"),
        ("bullbull", "10S 9H AD 9C 8S", "Ngầu 7", "Bull 7", "牛7"),
        ("bullbull", "KS 9H 7D 5C 2S", "Không Ngầu", "Tiada Bull", "沒牛"),
        ("bullbull", "KS KH KD KC 2S", "Tứ Quý", "Bom", "炸彈"),
        ("poker29", "10S 7H 3D 9C 9S", "Điểm Lớn 8", "Mata Besar 8", "大點8"),
        ("poker29", "10S 7H 3D 2C 2S", "Điểm Nhỏ 4", "Mata Kecil 4", "小點4"),
        ("poker29_vn", "KS 9H 7D 5C 2S", "Mậu Thầu", "Kad Tinggi", "高牌"),
    ],
)
def test_a_language_the_rules_do_not_name_hands_in_names_them_from_its_catalogue(
    ruleset: str, outcome: int | str, vietnamese: str, malay: str, traditional: str
) -> None:
    view = view_of(ruleset, outcome)
    named = [Views(Settings(language=code)).kind(view) for code in ("vi", "ms", "zh-Hant")]
    assert named == [vietnamese, malay, traditional]


@pytest.mark.parametrize("name", sorted(RULESETS))
def test_every_kind_key_a_ruleset_gives_has_a_message_in_every_language(name: str) -> None:
    ruleset = get_ruleset(name)
    if ruleset.uses_grabs:
        outcomes: Any = range(1, 1000)
    else:
        outcomes = [pack(CARDS[i : i + 5]) for i in range(0, 50, 5)]
    keys = {ruleset.show(ruleset.evaluate(outcome)).kind_key for outcome in outcomes}
    assert keys <= KIND_KEYS  # the keys extraction completes kind.<kind_key> with
    for language in LANGUAGES:
        catalogue = read_catalogue(language)
        assert all(catalogue.get(f"kind.{key}") is not None for key in keys), language


# --- /verify --------------------------------------------------------------------------------

ENVELOPE_VERIFIED = Verified(
    round_id=9,
    seed=SEED,
    shares=(88, 342, 100),
    hands=(
        DealtHand(ALICE, view_of("envelope68", 88)),
        DealtHand(BOB, view_of("envelope68", 342)),
        DealtHand(None, view_of("envelope68", 100)),
    ),
    cards=None,
)
CARDS_VERIFIED = Verified(
    round_id=9,
    seed=SEED,
    shares=(pack(parse_cards("10S 9H AD 9C 8S")), pack(parse_cards("KS 9H 7D 5C 2S"))),
    hands=(
        DealtHand(ALICE, view_of("poker29", "10S 9H AD 9C 8S")),
        DealtHand(None, view_of("poker29", "KS 9H 7D 5C 2S")),
    ),
    cards=CardRange(decks=6, first=41, last=50),
)


def test_a_verified_split_lists_the_shares_and_each_grab_but_not_the_houses_share() -> None:
    assert EN.verification(ENVELOPE_VERIFIED, PEOPLE) == (
        "Round #9: SHA-256 of the seed matches the published hash ✅\n"
        "Seed: <code>01020304</code>\n"
        "Split (3 shares, total RM5.30): RM0.88 RM3.42 RM1.00\n"
        "Grabbed:\n"
        "• Alice RM0.88\n"
        "• &lt;b&gt;Bob&lt;/b&gt; RM3.42\n"
        "Recompute: <code>niuniu-bot verify --seed 01020304 --count 3 --total 5.30</code>"
    )
    assert ZH.verification(ENVELOPE_VERIFIED, PEOPLE) == (
        "第 9 局：种子的 SHA-256 与公布的哈希一致 ✅\n"
        "种子：<code>01020304</code>\n"
        "分配（3 份，共 RM5.30）：RM0.88 RM3.42 RM1.00\n"
        "抢到：\n"
        "• Alice RM0.88\n"
        "• &lt;b&gt;Bob&lt;/b&gt; RM3.42\n"
        "自行验证：<code>niuniu-bot verify --seed 01020304 --count 3 --total 5.30</code>"
    )


def test_a_verified_deal_of_cards_lists_every_hand_and_names_the_house() -> None:
    assert EN.verification(CARDS_VERIFIED, PEOPLE) == (
        "Round #9: SHA-256 of the seed matches the published hash ✅\n"
        "Seed: <code>01020304</code> · 6 decks, cards 41–50 dealt round-robin, "
        "the dealer last:\n"
        "• Alice: 10♠ 9♥ A♦ | 9♣ 8♠\n"
        "• (the house): K♠ 9♥ 7♦ 5♣ 2♠"
    )
    assert ZH.verification(CARDS_VERIFIED, PEOPLE) == (
        "第 9 局：种子的 SHA-256 与公布的哈希一致 ✅\n"
        "种子：<code>01020304</code> · 6 副牌，第 41–50 张轮流发出，庄家最后：\n"
        "• Alice: 10♠ 9♥ A♦ | 9♣ 8♠\n"
        "• （公庄）: K♠ 9♥ 7♦ 5♣ 2♠"
    )


@pytest.mark.parametrize(
    ("result", "english"),
    [
        (
            ShoeSecret(9, 5, "abc123", 41, 55),
            "Round #9 was dealt from shoe #5 (hash <code>abc123</code>), cards 41–55. "
            "Its seed is revealed when the shoe is replaced.",
        ),
        (Mismatch(9), "Round #9: the stored split does NOT match its seed ❌"),
        (
            NothingDealt(9, SEED),
            "Round #9 ended before anything was dealt. Seed: <code>01020304</code>",
        ),
        (
            NothingDealt(9, None),
            "Round #9 ended before anything was dealt: no card of the shoe was used.",
        ),
    ],
)
def test_a_round_that_cannot_be_verified_says_why(result: Any, english: str) -> None:
    assert EN.verification(result, PEOPLE) == english


def test_a_real_shoe_round_is_answered_without_its_shoes_seed_until_revealed() -> None:
    shoe_seed = b"the shoe's secret seed"
    settings = dataclasses.replace(Settings(), ruleset="poker29", dealer="house")
    state = engine.start_round(
        round_id=9,
        chat_id=-1,
        settings=settings,
        seed=b"r" * 32,
        now_ms=0,
        bank=10**6,
        shoe=engine.ShoeRef(5, shoe_seed, 40),
    ).round
    for user in (ALICE, BOB):
        state = engine.bet(state, user, 1_000, free_chips=10**9, now_ms=state.deadline_ms - 1).round
    state = engine.advance(state, state.deadline_ms, player_seeds={}).round

    secret = EN.verification(verify_round(state), PEOPLE)
    assert shoe_seed.hex() not in secret and "cards 41–55" in secret
    revealed = EN.verification(verify_round(state, RevealedShoe(shoe_seed, 6)), PEOPLE)
    assert f"<code>{shoe_seed.hex()}</code>" in revealed and "✅" in revealed
    named = [line.split(":")[0] for line in revealed.splitlines() if line.startswith("•")]
    assert named == ["• Alice", "• &lt;b&gt;Bob&lt;/b&gt;", "• (the house)"]
    # Nobody set a client seed; the deal seed derived from the shoe's is shown to check.
    assert revealed.splitlines()[-2].startswith("No participant had set a client seed")
    deal_seed = verify_round(state, RevealedShoe(shoe_seed, 6))
    assert isinstance(deal_seed, Verified)
    assert "niuniu/seed/v2|shoe|5|" in revealed and deal_seed.deal_seed.hex() in revealed


@pytest.mark.parametrize("views", [EN, ZH], ids=["en", "zh"])
def test_a_round_with_client_seeds_lists_them_in_its_results_and_its_verification(
    views: Views,
) -> None:
    settings = dataclasses.replace(Settings(), dealer="house")
    state = engine.start_round(
        round_id=9, chat_id=-1, settings=settings, seed=b"r" * 32, now_ms=0, bank=10**6
    ).round
    for user in (ALICE, BOB):
        state = engine.bet(state, user, 100, free_chips=10**9, now_ms=state.deadline_ms - 1).round
    state = engine.advance(
        state, state.deadline_ms, player_seeds={ALICE: "zed", BOB: "alpha.1"}
    ).round
    transition = engine.advance(
        state, state.deadline_ms, player_seeds={}
    )  # the deadline grabs for them
    state = transition.round
    ended = transition.events[-1]
    assert isinstance(ended, engine.RoundSettled | engine.RoundVoided)
    if isinstance(ended, engine.RoundSettled):
        results = views.results(state, ended, PEOPLE)
        assert "<code>alpha.1</code> <code>zed</code>" in results.splitlines()[-2]
    verified = views.verification(verify_round(state), PEOPLE)
    # The command to recompute it names the round and its client seeds.
    assert "--round 9 --client-seeds='alpha.1,zed'</code>" in verified
    assert "<code>alpha.1</code> <code>zed</code>" in verified


def played_to_the_end(players: int, seeds: dict[int, str]) -> tuple[engine.Round, Any]:
    """A house-dealt envelope round of ``players`` bettors with these client seeds, grabbed
    out by its deadline: the round and its last event (settled, or voided to re-deal)."""
    settings = dataclasses.replace(Settings(), dealer="house")
    state = engine.start_round(
        round_id=9, chat_id=-1, settings=settings, seed=b"r" * 32, now_ms=0, bank=10**9
    ).round
    for user in range(100, 100 + players):
        state = engine.bet(state, user, 100, free_chips=10**9, now_ms=state.deadline_ms - 1).round
    state = engine.advance(state, state.deadline_ms, player_seeds=seeds).round
    transition = engine.advance(state, state.deadline_ms, player_seeds={})
    return transition.round, transition.events[-1]


def test_a_table_full_of_long_client_seeds_is_cut_between_lines_never_inside_a_tag() -> None:
    seeds = {user: f"{user}-" + "x" * 60 for user in range(100, 160)}
    state, ended = played_to_the_end(60, seeds)
    assert isinstance(ended, engine.RoundSettled | engine.RoundVoided)
    chunks = split_message(EN.results(state, ended, {}))
    assert len(chunks) > 1
    for chunk in chunks:
        assert chunk.count("<code>") == chunk.count("</code>"), chunk[-80:]
    assert all(seed in "".join(chunks) for seed in seeds.values())


def test_a_round_dealt_then_voided_lists_its_client_seeds_with_its_seed() -> None:
    dealt = dataclasses.replace(
        played_to_the_end(2, {100: "zed"})[0], phase=engine.Phase.VOID, void_reason=None
    )
    assert dealt.shares and dealt.client_seeds == ("zed",)
    voided = engine.RoundVoided(engine.VoidReason.REDEAL, dealt.seed)
    lines = EN.results(dealt, voided, {}).splitlines()
    assert "<code>zed</code>" in lines[-2] and dealt.seed.hex() in lines[-1]
    nothing_dealt = dataclasses.replace(dealt, shares=())
    assert "<code>zed</code>" not in EN.results(nothing_dealt, voided, {})

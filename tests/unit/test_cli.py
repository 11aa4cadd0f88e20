"""The ``niuniu-bot`` command line: ``rules``, ``rules --compare``, ``verify``, ``cards``,
``cards --compare`` and ``deal``."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.cli import DERIVATION_1_NOTE, _build_parser, main
from bot.rules.cards import deal_hands, format_cards, pack
from bot.rules.ruleset import get_ruleset
from bot.rules.split import commitment, split_envelope


def run(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``niuniu-bot argv``; argparse errors raise SystemExit."""
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- rules --------------------------------------------------------------------------------


def test_rules_prints_kind_points_and_multiplier_for_each_amount(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(["rules", "3.42", "0.88", "2.10"], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("3.42")
    assert "9 points" in lines[0]
    assert "9x" in lines[0]
    assert "Ordinary" in lines[0]
    assert lines[1].startswith("0.88")
    assert all(word in lines[1] for word in ("Duizi", "对子", "6 points", "12x"))
    assert lines[2].startswith("2.10")
    assert all(word in lines[2] for word in ("Fanshun", "反顺", "3 points", "14x"))


@pytest.mark.parametrize(
    ("amount", "english", "chinese", "multiplier"),
    [
        ("9.99", "Baozi", "豹子", "18x"),
        ("1.00", "Manniu", "满牛", "15x"),
        ("2.10", "Fanshun", "反顺", "14x"),
        ("1.23", "Shunzi", "顺子", "13x"),
        ("1.66", "Duizi", "对子", "12x"),
        ("0.10", "Jinniu", "金牛", "11x"),
    ],
)
def test_rules_names_every_special_kind_in_english_and_chinese(
    capsys: pytest.CaptureFixture[str], amount: str, english: str, chinese: str, multiplier: str
) -> None:
    code, out, _ = run(["rules", amount], capsys)
    assert code == 0
    assert english in out
    assert chinese in out
    assert multiplier in out


def test_rules_names_an_ordinary_hand_in_english_and_chinese(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = run(["rules", "3.42"], capsys)
    assert "Ordinary" in out
    assert "点数" in out


def test_rules_marks_ten_points_as_niuniu(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["rules", "1.45"], capsys)
    assert "10 points" in out
    assert "10x" in out
    assert "牛牛" in out


def test_rules_mentions_what_001_does(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["rules", "0.01"], capsys)
    assert "1 point" in out
    assert "免死" in out
    assert "re-deal" in out


def test_rules_compare_seed_example_088_beats_166_by_pair(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(["rules", "--compare", "0.88", "1.66"], capsys)
    assert (code, err) == (0, "")
    assert out.startswith("0.88 beats 1.66")
    assert "88" in out.split(":", 1)[1]
    assert "66" in out.split(":", 1)[1]


def test_rules_compare_names_the_winner_whichever_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = run(["rules", "--compare", "1.66", "0.88"], capsys)
    assert out.startswith("0.88 beats 1.66")


def test_rules_compare_explains_points(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["rules", "--compare", "0.14", "9.78"], capsys)
    assert out.startswith("0.14 beats 9.78")
    assert "5 points" in out
    assert "4" in out.split(":", 1)[1]


def test_rules_compare_explains_kind(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["rules", "--compare", "0.10", "1.45"], capsys)
    assert out.startswith("0.10 beats 1.45")
    assert "Jinniu" in out


def test_rules_compare_explains_amount(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["rules", "--compare", "0.43", "2.50"], capsys)
    assert out.startswith("2.50 beats 0.43")
    assert "amount" in out


def test_rules_compare_equal_amounts_tie(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["rules", "--compare", "3.42", "3.42"], capsys)
    assert code == 0
    assert "ties" in out


# --- verify -------------------------------------------------------------------------------


def test_verify_prints_the_split_of_the_seed(capsys: pytest.CaptureFixture[str]) -> None:
    seed = bytes(range(32))
    code, out, err = run(["verify", "--seed", seed.hex(), "--count", "5", "--total", "25"], capsys)
    assert (code, err) == (0, DERIVATION_1_NOTE + "\n")
    shares = split_envelope(seed, 5, 2500)
    lines = out.splitlines()
    assert lines[:5] == [f"{i:>3}. {s // 100}.{s % 100:02d}" for i, s in enumerate(shares, 1)]
    assert lines[5] == "total 25.00"


def test_verify_honours_max_share(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["verify", "--seed", "ab", "--count", "3", "--total", "0.30", "--max-share", "0.10"],
        capsys,
    )
    assert code == 0
    assert out.splitlines() == ["  1. 0.10", "  2. 0.10", "  3. 0.10", "total 0.30"]


# --- cards --------------------------------------------------------------------------------


def test_cards_seed_example_10_7_3_8_5_is_bull_3(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["cards", "10S 7H 3D 8C 5S"], capsys)
    assert (code, err) == (0, "")
    assert out == "10♠ 7♥ 3♦ | 8♣ 5♠  Bull 3 (牛三), 1x\n"


def test_cards_default_ruleset_is_bullbull(capsys: pytest.CaptureFixture[str]) -> None:
    hands = ["10S 7H 3D 8C 5S", "KS 9H 7D 6C 4S"]
    _, default, _ = run(["cards", *hands], capsys)
    _, explicit, _ = run(["cards", "--ruleset", "bullbull", *hands], capsys)
    assert default == explicit
    assert len(default.splitlines()) == 2


@pytest.mark.parametrize(
    ("ruleset", "hand", "line"),
    [
        ("bullbull", "KS QH 3D 9C 8S", "3♦ 9♣ 8♠ | K♠ Q♥  Niu Niu (牛牛), 3x"),
        ("bullbull", "10S 9H A♦ 9C 8S", "10♠ 9♥ A♦ | 9♣ 8♠  Bull 7 (牛七), 2x"),
        ("bullbull", "kh kd ks kc 2s", "K♥ K♦ K♠ | K♣ 2♠  Bomb (炸弹), 5x"),
        ("bullbull", "AS 2S AH 3C 2D", "A♠ 2♠ A♥ 3♣ 2♦  Five Small (五小牛), 5x"),
        ("bullbull", "JS QH KD JC QS", "J♠ Q♥ K♦ | J♣ Q♠  Five Face Cards (五花牛), 5x"),
        ("bullbull", "KS 9H 7D 5C 2S", "K♠ 9♥ 7♦ 5♣ 2♠  No Bull (没牛), 1x"),
        ("poker29", "KS 9H 7D 5C 2S", "K♠ 9♥ 7♦ 5♣ 2♠  High Card (高牌), 1x"),
        ("poker29", "10S 7H 3D 8C 5S", "10♠ 7♥ 3♦ | 8♣ 5♠  Small Point 3 (小点3), 1x"),
        ("poker29", "10S 7H 3D 9C 9S", "10♠ 7♥ 3♦ | 9♣ 9♠  Big Point 8 (大点8), 2x"),
        ("poker29_vn", "KS KS 4D 6C 10S", "K♠ K♠ 10♠ | 4♦ 6♣  Niu-Niu (牛牛), 3x"),
        ("poker29_vn", "JS QH KD JS QS", "J♠ Q♥ K♦ | J♠ Q♠  Ultimate Niu-Niu (至尊牛牛), 5x"),
    ],
)
def test_cards_shows_bull_or_left_cards_then_the_rest_kind_and_multiplier(
    capsys: pytest.CaptureFixture[str], ruleset: str, hand: str, line: str
) -> None:
    code, out, err = run(["cards", "--ruleset", ruleset, hand], capsys)
    assert (code, err) == (0, "")
    assert out == line + "\n"


@pytest.mark.parametrize(
    ("ruleset", "a", "b", "verdict"),
    [
        (
            "bullbull",
            "JS QH KD JC QS",
            "KS QD 3D 9C 8S",
            "hand 1 (Five Face Cards) beats hand 2 (Niu Niu): Five Face Cards outranks Niu Niu",
        ),
        (
            "bullbull",
            "10S 7H 3D 8C 5S",
            "10H 9H AD 9C 8S",
            "hand 2 (Bull 7) beats hand 1 (Bull 3): 7 points beat 3",
        ),
        (
            "bullbull",
            "10D 7H 3D 8C 5S",
            "10H 7S 3C 8D 5D",
            "hand 2 (Bull 3) beats hand 1 (Bull 3): same kind and points; "
            "highest card 10♥ beats 10♦ by suit (spades > hearts > clubs > diamonds)",
        ),
        (
            "bullbull",
            "KS QH 3D 9C 8S",
            "JS 9H AD 2C 8D",
            "hand 1 (Niu Niu) beats hand 2 (Niu Niu): same kind; highest card K♠ beats J♠",
        ),
        (
            "bullbull",
            "9S 9H 9D 9C 2D",
            "KS KH KD KC 2S",
            "hand 2 (Bomb) beats hand 1 (Bomb): a Bomb of Ks beats a Bomb of 9s",
        ),
        (
            "poker29",
            "10S 7H 3D 8C 5S",
            "10S 7H 3D 8C 5D",
            "hand 1 (Small Point 3) beats hand 2 (Small Point 3): same kind and points; card by "
            "card, the fourth highest card 5♠ beats 5♦ by suit "
            "(spades > hearts > diamonds > clubs)",
        ),
        (
            "poker29",
            "10S 7H 3D 8C 5S",
            "QS 7D 3H 8D 5H",
            "hand 2 (Small Point 3) beats hand 1 (Small Point 3): same kind and points; card "
            "by card, the highest card Q♠ beats 10♠",
        ),
        (
            "poker29",
            "10S 7H 3D 8C 5S",
            "8C 5S 10S 3D 7H",
            "hand 1 (Small Point 3) and hand 2 (Small Point 3) push: the same kind, points "
            "and cards",
        ),
        (
            "poker29_vn",
            "10S 7H 3D 8C 5S",
            "QS 7D 3H 8D 5H",
            "hand 1 (Small Point 3) and hand 2 (Small Point 3) push: the same kind and points "
            "(poker29_vn does not compare the cards)",
        ),
        (
            "poker29_vn",
            "10S 7H 3D 9C 9S",
            "10S 7H 3D 8C 5S",
            "hand 1 (Big Point 8) beats hand 2 (Small Point 3): Big Point outranks Small Point",
        ),
    ],
)
def test_cards_compare_says_which_wins_and_why(
    capsys: pytest.CaptureFixture[str], ruleset: str, a: str, b: str, verdict: str
) -> None:
    code, out, err = run(["cards", "--ruleset", ruleset, "--compare", a, b], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len(lines) == 3
    _, first, _ = run(["cards", "--ruleset", ruleset, a, b], capsys)
    assert lines[:2] == first.splitlines()
    assert lines[2] == verdict


def test_cards_bad_card_reuses_the_parse_message(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["cards", "10S 7H ZZ 8C 5S"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        "niuniu-bot: error: not a card: 'ZZ' "
        "(write a rank A 2-10 J Q K, then a suit S H D C or ♠♥♦♣)\n"
    )
    _, _, err = run(["cards", "10S 7H 3D 8C 5S", "1S 2S 3S 4S 5S"], capsys)
    assert err.startswith("niuniu-bot: error: hand 2: not a card: '1S'")


def test_cards_unquoted_cards_are_told_to_quote_the_hand(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(["cards", "KS", "QH", "10D", "7C", "AS"], capsys)
    assert code == 2
    assert "quote each hand" in err


def test_cards_one_deck_has_each_card_once(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["cards", "--compare", "10S 7H 3D 8C 5S", "10S 9H AD 9C 8S"], capsys)
    assert code == 2
    assert "10♠ is twice in the two hands" in err
    code, out, _ = run(["cards", "10S 7H 3D 8C 5S", "10S 9H AD 9C 8S"], capsys)
    assert code == 0  # without --compare the hands are looked at one by one
    assert len(out.splitlines()) == 2


# --- deal ---------------------------------------------------------------------------------

SEED = bytes(range(32))


def test_deal_docs_worked_example(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/rules.md §7: seed 00 01 .. 1f, bullbull, two bettors and the dealer."""
    code, out, err = run(
        ["deal", "--ruleset", "bullbull", "--seed", SEED.hex(), "--hands", "3"], capsys
    )
    assert (code, err) == (0, DERIVATION_1_NOTE + "\n")
    lines = out.splitlines()
    assert len(lines) == 5
    assert lines[0] == "bullbull: 3 hands from one deck, cards 1-15 of the shuffle"
    assert lines[1].startswith("bettor 1: 3♣ 10♠ A♦ 6♥ 3♠  =  3♣ A♦ 6♥ | 10♠ 3♠  Bull 3 (牛三)")
    assert lines[1].endswith("beats the dealer: wins 1x the stake")
    assert lines[2].startswith("bettor 2: 8♦ K♥ 10♣ 10♥ 9♣  =  K♥ 10♣ 10♥ | 8♦ 9♣  Bull 7")
    assert lines[2].endswith("beats the dealer: wins 2x the stake")
    assert lines[3] == "  dealer: 8♥ 6♣ A♣ 4♦ 2♦  =  8♥ 6♣ A♣ 4♦ 2♦  No Bull (没牛), 1x"
    assert lines[4] == (
        "commitment (SHA-256 of the seed): "
        "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
    )


@pytest.mark.parametrize(
    ("ruleset", "hands", "offset"),
    [
        ("bullbull", 10, 0),
        ("bullbull", 1, 0),
        ("poker29", 31, 0),
        ("poker29", 7, 156),
        ("poker29_vn", 4, 23),
    ],
)
def test_deal_prints_the_hands_of_deal_hands(
    capsys: pytest.CaptureFixture[str], ruleset: str, hands: int, offset: int
) -> None:
    rules = get_ruleset(ruleset)
    argv = ["deal", "--ruleset", ruleset, "--seed", SEED.hex(), "--hands", str(hands)]
    code, out, err = run([*argv, "--offset", str(offset)], capsys)
    assert (code, err) == (0, DERIVATION_1_NOTE + "\n")
    lines = out.splitlines()
    assert len(lines) == hands + 2
    dealt = deal_hands(SEED, rules.shoe_decks or 1, hands, offset)
    dealer = rules.evaluate(pack(dealt[-1]))
    for number, (line, cards) in enumerate(zip(lines[1:-1], dealt, strict=True), start=1):
        who = "dealer" if number == hands else f"bettor {number}"
        assert line.lstrip().startswith(f"{who}: {format_cards(cards)}  =  ")
        hand = rules.evaluate(pack(cards))
        assert f"  {hand.english} ({hand.chinese}), {hand.multiplier}x" in line
        if number < hands:
            verdict = rules.compare(hand, dealer)
            assert ("beats" if verdict > 0 else "loses" if verdict < 0 else "ties") in line
    assert lines[-1].endswith(commitment(SEED))
    if offset == 0:
        _, default, _ = run(argv, capsys)
        assert default == out


# --- demo ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            [],
            {"rounds": 3, "ruleset": "envelope68", "dealer": "bid", "language": "en"},
        ),
        (
            ["--ruleset", "bullbull", "--dealer", "house", "--rounds", "2"],
            {"rounds": 2, "ruleset": "bullbull", "dealer": "house", "language": "en"},
        ),
        (
            ["--ruleset", "poker29", "--language", "zh", "--pictures", "out/pictures"],
            {
                "rounds": 3,
                "ruleset": "poker29",
                "dealer": "bid",
                "language": "zh",
                "pictures": Path("out/pictures"),
            },
        ),
    ],
)
def test_demo_passes_ruleset_dealer_and_language_to_run_demo(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    expected: dict[str, object],
) -> None:
    import bot.telegram.demo as demo

    calls: list[dict[str, object]] = []

    async def fake_run_demo(**options: object) -> int:
        calls.append(options)
        return 0

    monkeypatch.setattr(demo, "run_demo", fake_run_demo)
    code, _, err = run(["demo", *argv], capsys)
    assert (code, err) == (0, "")
    assert calls == [{"pictures": None, **expected}]


# --- bad arguments ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["nonsense"],
        ["rules"],
        ["rules", "0"],
        ["rules", "10"],
        ["rules", "0.001"],
        ["rules", "-1"],
        ["rules", "abc"],
        ["rules", "1e2"],
        ["rules", "--compare", "0.88"],
        ["rules", "--compare", "0.88", "1.66", "2.10"],
        ["verify", "--count", "5", "--total", "25"],
        ["verify", "--seed", "zz", "--count", "5", "--total", "25"],
        ["verify", "--seed", "abc", "--count", "5", "--total", "25"],
        ["verify", "--seed", "", "--count", "5", "--total", "25"],
        ["verify", "--seed", "ab", "--count", "0", "--total", "25"],
        ["verify", "--seed", "ab", "--count", "-1", "--total", "25"],
        ["verify", "--seed", "ab", "--count", "x", "--total", "25"],
        ["verify", "--seed", "ab", "--count", "5", "--total", "1,000"],
        ["verify", "--seed", "ab", "--count", "5", "--total", "0.04"],
        ["verify", "--seed", "ab", "--count", "2", "--total", "20"],
        ["verify", "--seed", "ab", "--count", "2", "--total", "1", "--max-share", "0"],
        ["cards"],
        ["cards", "10S 7H ZZ 8C 5S"],
        ["cards", "10S 7H 3D 8C"],
        ["cards", "10S 7H 3D 8C 5S 6S"],
        ["cards", "10S 7H 3D 8C 5S", ""],
        ["cards", "10S 10S 3D 8C 5S"],
        ["cards", "--ruleset", "poker29", "--compare", "KS KS KS KS KS", "KS KS QH 2D 3C"],
        ["cards", "--ruleset", "envelope68", "10S 7H 3D 8C 5S"],
        ["cards", "--ruleset", "nope", "10S 7H 3D 8C 5S"],
        ["cards", "--compare", "10S 7H 3D 8C 5S"],
        ["cards", "--compare", "10S 7H 3D 8C 5S", "10H 7S 3C 8D 5D", "KS QS JS 9S 8S"],
        ["cards", "--compare", "10S 7H 3D 8C 5S", "10S 9H AD 9C 8S"],
        ["deal", "--seed", "ab", "--hands", "3"],
        ["deal", "--ruleset", "bullbull", "--hands", "3"],
        ["deal", "--ruleset", "bullbull", "--seed", "ab"],
        ["deal", "--ruleset", "envelope68", "--seed", "ab", "--hands", "3"],
        ["deal", "--ruleset", "bullbull", "--seed", "zz", "--hands", "3"],
        ["deal", "--ruleset", "bullbull", "--seed", "ab", "--hands", "0"],
        ["deal", "--ruleset", "bullbull", "--seed", "ab", "--hands", "11"],
        ["deal", "--ruleset", "poker29", "--seed", "ab", "--hands", "32"],
        ["deal", "--ruleset", "poker29", "--seed", "ab", "--hands", "3", "--offset", "-1"],
        ["deal", "--ruleset", "poker29", "--seed", "ab", "--hands", "3", "--offset", "x"],
        ["deal", "--ruleset", "bullbull", "--seed", "ab", "--hands", "3", "--offset", "1"],
        ["deal", "--ruleset", "poker29", "--seed", "ab", "--hands", "3", "--offset", "157"],
        ["deal", "--ruleset", "poker29_vn", "--seed", "ab", "--hands", "31", "--offset", "300"],
        ["demo", "--ruleset", "poker"],
        ["demo", "--dealer", "bank"],
        ["demo", "--rounds", "0"],
        ["demo", "--rounds", "٣"],
        ["deal", "--ruleset", "bullbull", "--seed", "ab", "--hands", "３"],
        ["deal", "--ruleset", "poker29", "--seed", "ab", "--hands", "3", "--offset", "٠"],
    ],
)
def test_bad_arguments_give_a_one_line_error_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("niuniu-bot: error:")


def test_python_dash_m_bot_runs_the_cli() -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "bot", "rules", "3.42"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ok.returncode == 0
    assert ok.stdout.startswith("3.42")
    assert "9 points" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "bot", "rules", "10.00"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr.count("\n") == 1


def test_verify_and_deal_of_a_named_round_or_shoe_use_its_client_seeds_and_say_nothing_else(
    capsys: pytest.CaptureFixture[str],
) -> None:
    seed = bytes(range(32)).hex()
    split = ["verify", "--seed", seed, "--count", "5", "--total", "25"]
    _, first, _ = run(split, capsys)
    code, named, err = run([*split, "--round", "12", "--client-seeds", "a,b"], capsys)
    assert (code, err) == (0, "")
    assert named != first
    assert "deal seed (v2, round 12, client seeds: a, b):" in named
    cards = ["deal", "--ruleset", "poker29", "--seed", seed, "--hands", "4", "--offset", "25"]
    code, dealt, err = run([*cards, "--shoe", "3", "--client-seeds", "a,b"], capsys)
    assert (code, err) == (0, "")
    assert "deal seed (v2, shoe 3, client seeds: a, b):" in dealt


# --- help ---------------------------------------------------------------------------------


def test_every_command_and_argument_says_what_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    parser = _build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name, command in commands.choices.items():
        assert command.description and len(command.description) > 60, name
        for action in command._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            where = f"{name} {'/'.join(action.option_strings) or action.dest}"
            assert action.help and len(action.help) > 10, where
            # A value is named for what it is (N, AMOUNT, HEX), not after its option.
            takes_value = action.nargs != 0
            if takes_value and action.choices is None:
                assert action.metavar and action.metavar != action.dest.upper(), where
        code, out, _ = run([name, "--help"], capsys)
        assert code == 0 and command.description.split()[0] in out

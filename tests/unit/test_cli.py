"""The ``niuniu-bot`` command line: ``rules``, ``rules --compare`` and ``verify``."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

import pytest

from bot.cli import main
from bot.rules.split import split_envelope


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
    assert (code, err) == (0, "")
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

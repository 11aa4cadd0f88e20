"""Settled rounds to draw: a house-dealt round of a game with N players, played through
the pure engine from a fixed seed (so the same every time), and its picture's model as
the bot builds it. Used by ``bench/bench_pictures.py``, the golden-image tests and the README's
pictures (``python bench/bench_pictures.py --write-docs``)."""

from __future__ import annotations

import hashlib

from bot.engine.round import Round, RoundSettled, ShoeRef, advance, bet, start_round
from bot.engine.settings import Settings
from bot.pictures.model import ResultsPicture
from bot.rules.ruleset import get_ruleset
from bot.service.game import Person
from bot.telegram.pictures import RoundPictures

GAMES = ("envelope68", "bullbull", "poker29", "poker29_vn")
#: Names as groups have them: Latin, Chinese, emoji, long ones.
NAMES = (
    "Alice",
    "陈小明",
    "Bao 🐮",
    "Dewi Lestari",
    "王芳🧧",
    "Eko",
    "Фёдор",
    "山田太郎",
    "Nguyễn Văn An",
    "🔥Lucky🔥",
)
BANK = 1_000_000


def settled_round(
    game: str, players: int, language: str = "en", *, chat_id: int = -100
) -> tuple[Round, RoundSettled]:
    """A round of ``game`` dealt by the house to ``players`` bettors (at most as many as
    the game seats), settled."""
    players = min(players, get_ruleset(game).max_bettors or players)
    settings = Settings(ruleset=game, dealer="house", language=language, max_bet=100_000)
    if not get_ruleset(game).uses_grabs:
        settings = settings.with_table_defaults(settings)  # a card game's own
    seed = hashlib.sha256(f"{game}:{players}".encode()).digest()
    shoe = ShoeRef(1, seed, 0) if get_ruleset(game).shoe_decks else None
    state = start_round(
        round_id=42, chat_id=chat_id, settings=settings, seed=seed, now_ms=0, bank=BANK, shoe=shoe
    ).round
    for user_id in range(1, players + 1):
        stake = 100 * (1 + user_id % 5) * 5
        state = bet(state, user_id, stake, free_chips=10_000_000, now_ms=1).round
    now = state.deadline_ms
    transition = advance(state, now, player_seeds={})
    while transition.round.phase.is_open:
        now = transition.round.deadline_ms
        transition = advance(transition.round, now, player_seeds={})
    ended = next(event for event in transition.events if isinstance(event, RoundSettled))
    return transition.round, ended


def people(players: int) -> dict[int, Person]:
    """The bettors' names."""
    return {
        user_id: Person(user_id, NAMES[(user_id - 1) % len(NAMES)])
        for user_id in range(1, players + 1)
    }


def sample_pictures(game: str, players: int, language: str = "en") -> RoundPictures:
    """The pictures of a settled sample round."""
    state, ended = settled_round(game, players, language)
    return RoundPictures(state, ended, people(len(state.bets)))


def sample_results(game: str, players: int, language: str = "en") -> ResultsPicture:
    """The results picture's model of a settled sample round."""
    return sample_pictures(game, players, language).results()

"""The message catalogues, the views' escaping and the log redaction, without Telegram."""

from __future__ import annotations

import ast
import copy
import html
import logging
import re
import string
from collections.abc import Mapping
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from hypothesis import given
from hypothesis import strategies as st

from bot.engine.autobets import Autobet, place_autobets
from bot.engine.round import advance, bet, bid, start_round
from bot.engine.settings import LANGUAGES, Settings
from bot.rules import bullbull, envelope, poker29
from bot.rules.ruleset import RULESETS, get_ruleset
from bot.service.game import Person
from bot.telegram.i18n import (
    compile_catalogue,
    language_for,
    read_catalogue,
    translate,
    translate_plural,
)
from bot.telegram.message_keys import (
    SHOWN_ERRORS,
    UNSHOWN_ERRORS,
    UnknownKey,
    keys_used,
)
from bot.telegram.messenger import split_message
from bot.telegram.runner import RedactSecrets
from bot.telegram.views import ButtonPress, Views, display_name

ROOT = Path(__file__).resolve().parents[2]

#: Messages each language words with its own choice of the parameters the code gives
#: (key -> their names); every other message has English's placeholders in every language.
CHOSEN_PLACEHOLDERS = {
    # How a hand is named: Chinese players read a special kind by its Chinese name alone
    # (豹子, not "Baozi 豹子"); a language the rules do not name hands in uses its own
    # ``hand.<kind>`` (``Phrasing.hand_name``).
    "kind.special": {"points", "english", "chinese", "name"},
    "kind.cards": {"points", "english", "chinese", "name"},
    "kind.ordinary": {"points", "english", "chinese", "name"},
}
#: Each language's plural forms: how many, and which a number takes.
PLURAL_FORMS = {
    "en": "nplurals=2; plural=(n != 1);",
    "zh": "nplurals=1; plural=0;",
    "zh-Hant": "nplurals=1; plural=0;",
    "vi": "nplurals=1; plural=0;",
    "ms": "nplurals=1; plural=0;",
}

# -- catalogues -------------------------------------------------------------------------


def keys_the_code_uses() -> dict[str, set[bool]]:
    """Each key the code uses, and whether as a plural message (a set: a key used both
    ways is a mistake), as ``pybabel extract -F babel.cfg`` finds them."""
    with (ROOT / "babel.cfg").open() as config:
        method_map, options_map = parse_mapping_cfg(config)  # type: ignore[no-untyped-call]
    uses: dict[str, set[bool]] = {}
    for _, _, message, _, _ in extract_from_dir(ROOT, method_map, options_map):
        key = message[0] if isinstance(message, tuple) else message
        uses.setdefault(key, set()).add(isinstance(message, tuple))
    return uses


def _key(message: Message) -> str:
    """A message's key: its singular for a plural message."""
    key = message.id[0] if isinstance(message.id, tuple | list) else message.id
    assert isinstance(key, str), message
    return key


def _messages(catalogue: Catalog) -> dict[str, Message]:
    return {_key(message): message for message in catalogue if message.id}


def _texts(message: Message) -> list[str]:
    """A message's translations: one, or one per plural form (missing ones empty)."""
    texts = message.string if isinstance(message.string, tuple | list) else [message.string]
    return [text or "" for text in texts]


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def catalogue_problems(
    catalogues: Mapping[str, Catalog], uses: Mapping[str, set[bool]]
) -> list[str]:
    """What is wrong between the code's keys and the catalogues: a message missing,
    untranslated, of the wrong shape (plural or not), or unused; placeholders that differ
    from English."""
    problems = [
        f"{key} is used both as a plural and not" for key, way in uses.items() if len(way) > 1
    ]
    english = _messages(catalogues["en"])
    for language, catalogue in catalogues.items():
        messages = _messages(catalogue)
        for key in sorted(uses):
            message = messages.get(key)
            if message is None:
                problems.append(f"{language}: {key} is missing")
                continue
            plural = True in uses[key]
            if message.pluralizable != plural:
                problems.append(
                    f"{language}: {key} should {'' if plural else 'not '}have plural forms"
                )
            if message.fuzzy or not all(_texts(message)):
                problems.append(f"{language}: {key} is fuzzy or has an empty text")
            if key in english:
                expected = _placeholders(_texts(english[key])[-1])
                for text in _texts(message):
                    found = _placeholders(text)
                    chosen = CHOSEN_PLACEHOLDERS.get(key)
                    if found != expected and not (chosen and found and found <= chosen):
                        problems.append(f"{language}: {key} has placeholders {found}")
        problems.extend(
            f"{language}: {key} is not used" for key in sorted(set(messages) - set(uses))
        )
    return problems


@pytest.fixture(scope="module")
def uses() -> dict[str, set[bool]]:
    return keys_the_code_uses()


@pytest.fixture(scope="module")
def catalogues() -> dict[str, Catalog]:
    return {language: read_catalogue(language) for language in LANGUAGES}


def test_the_code_uses_every_message_of_every_catalogue_and_no_other(
    uses: dict[str, set[bool]], catalogues: dict[str, Catalog]
) -> None:
    assert set(catalogues) == {"en", "zh", "zh-Hant", "vi", "ms"}
    assert len(uses) > 100  # the extraction found the code's keys
    assert "error.not_betting" in uses  # built from a phase, raised in the engine
    assert "board.phase.grabbing" in uses  # built from a phase in views.py
    assert "answer.bet_changed" in uses  # chosen into a variable in app.py
    assert uses["board.shoe"] == {True}
    assert catalogue_problems(catalogues, uses) == []


def test_a_missing_unused_misshapen_or_mismatched_message_is_a_problem(
    uses: dict[str, set[bool]], catalogues: dict[str, Catalog]
) -> None:
    broken = copy.deepcopy(catalogues)
    broken["zh"].delete("table.opened")
    broken["en"].add("table.unused", "Nobody says this.")
    broken["zh"]["error.bet_too_small"].string = "最小下注 {maximum}。"
    broken["en"]["answer.duplicate"].string = ""
    broken["vi"]["hand.bull"].string = "Ngầu"  # the points left out
    broken["ms"]["kind.special"].string = "{amount}"  # not a parameter a hand's kind has
    broken["zh"].delete("board.shoe")
    broken["zh"].add(
        "board.shoe", "牌靴 #{shoe_id} 哈希：<code>{commitment}</code> · 已发 {offset} 张"
    )
    code = {**uses, "answer.grabbed": {False, True}}
    assert catalogue_problems(broken, code) == [
        "answer.grabbed is used both as a plural and not",
        "en: answer.duplicate is fuzzy or has an empty text",
        "en: answer.grabbed should have plural forms",
        "en: table.unused is not used",
        "zh: answer.grabbed should have plural forms",
        "zh: board.shoe should have plural forms",
        "zh: error.bet_too_small has placeholders {'maximum'}",
        "zh: table.opened is missing",
        "zh-Hant: answer.grabbed should have plural forms",
        "vi: answer.grabbed should have plural forms",
        "vi: hand.bull has placeholders set()",
        "ms: answer.grabbed should have plural forms",
        "ms: kind.special has placeholders {'amount'}",
    ]


def test_every_language_has_its_plural_forms_written() -> None:
    assert set(PLURAL_FORMS) == set(LANGUAGES)


@pytest.mark.parametrize(("language", "plural_forms"), sorted(PLURAL_FORMS.items()))
def test_each_catalogue_compiles_with_its_plural_forms(language: str, plural_forms: str) -> None:
    catalogue = read_catalogue(language)
    assert catalogue.plural_forms == plural_forms
    # The header says so itself: Babel takes a file's own Plural-Forms over its locale's.
    assert f"Plural-Forms: {plural_forms}" in _header(language)
    assert not catalogue.obsolete
    # Babel's checks: as many texts as the language has plural forms, among others.
    assert [(message.id, errors) for message, errors in catalogue.check()] == []
    compiled = compile_catalogue(catalogue)
    assert compiled.info()["plural-forms"] == plural_forms
    for key, message in _messages(catalogue).items():
        if message.pluralizable:
            forms = [compiled.ngettext(key, key, n) for n in (1, 2)]
            assert forms == [_texts(message)[0], _texts(message)[-1]], key
        else:
            assert compiled.gettext(key) == message.string, key


def _header(language: str) -> str:
    path = ROOT / "bot/telegram/locale" / language.replace("-", "_") / "LC_MESSAGES/messages.po"
    return path.read_text(encoding="utf-8").split("\n\n", 1)[0]


def test_a_plural_message_takes_the_form_for_its_number() -> None:
    def shoe(language: str, offset: int) -> str:
        return translate_plural(
            language, "board.shoe", offset, shoe_id=3, commitment="ab", offset=offset
        )

    assert shoe("en", 1).endswith(" · 1 card dealt")
    assert shoe("en", 2).endswith(" · 2 cards dealt")
    assert shoe("en", 0).endswith(" · 0 cards dealt")
    assert shoe("zh", 1).endswith(" · 已发 1 张")
    assert shoe("zh", 2).endswith(" · 已发 2 张")
    assert shoe("zh-Hant", 2).endswith(" · 已發 2 張")
    assert shoe("vi", 1).endswith(" · đã chia 1 lá")
    assert shoe("vi", 2).endswith(" · đã chia 2 lá")
    assert shoe("ms", 2).endswith(" · 2 kad sudah diagih")

    def decks(number: int) -> str:
        return translate_plural(
            "en",
            "verify.cards_ok",
            number,
            round_id=7,
            seed="ab",
            decks=number,
            first=1,
            last=10,
            hands="",
        )

    assert "<code>ab</code> · 1 deck, cards 1–10 dealt" in decks(1)
    assert "<code>ab</code> · 6 decks, cards 1–10 dealt" in decks(6)


#: What each game's /rules states, in the order docs/rules.md gives it (§3, §7): the
#: multipliers of its hands from the highest down (Bull Bull's, then what a bet holds).
STATED_MULTIPLIERS = {
    "bullbull": [
        *(bullbull.KIND_MULTIPLIERS[kind] for kind in bullbull.HandKind if kind.rank >= 2),
        2,  # Bull 9-7
        1,  # Bull 6-1
        bullbull.KIND_MULTIPLIERS[bullbull.HandKind.NO_BULL],
        bullbull.LARGEST_MULTIPLIER,
    ],
    "envelope68": list(envelope.SPECIAL_MULTIPLIERS.values()),
    "poker29": [kind.multiplier for kind in poker29.HandKind],
    "poker29_vn": [kind.multiplier for kind in poker29.HandKind],
}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("game", sorted(RULESETS))
def test_rules_state_each_games_multipliers_and_seats_in_every_language(
    game: str, language: str
) -> None:
    text = translate(language, f"rules.{game}", dealer="")
    assert [int(n) for n in re.findall(r"(\d+)\s*(?:×|倍)", text)] == STATED_MULTIPLIERS[game]
    seats = get_ruleset(game).max_bettors
    if seats is not None:
        assert re.search(rf"\b{seats} ?(?:bets|注|cược|taruhan)", text), text
    if language != "en":
        assert text != translate("en", f"rules.{game}", dealer="")  # translated, not copied


def test_money_parameters_are_formatted_with_the_currency() -> None:
    assert (
        translate("en", "error.bet_too_small", "RM", minimum=150) == "The smallest bet is RM1.50."
    )
    assert translate("zh", "error.bet_too_small", "RM", minimum=150) == "最小下注 RM1.50。"


def test_a_key_in_no_catalogue_is_an_error_not_text_and_other_languages_read_english() -> None:
    for language in LANGUAGES:
        with pytest.raises(KeyError):
            translate(language, "error.no_such_error")
        with pytest.raises(KeyError):
            translate_plural(language, "table.opened", 2)  # not a plural message
    assert translate("fr", "table.opened") == translate("en", "table.opened")


@pytest.mark.parametrize(
    ("language_code", "language"),
    [
        ("zh", "zh"),
        ("zh-hans", "zh"),
        ("zh-Hans", "zh"),
        ("zh-CN", "zh"),
        ("zh-SG", "zh"),
        ("zh-Hans-TW", "zh"),
        ("zh-TW", "zh-Hant"),
        ("zh-HK", "zh-Hant"),
        ("zh-MO", "zh-Hant"),
        ("zh-hant", "zh-Hant"),
        ("zh-Hant", "zh-Hant"),
        ("zh-hant-HK", "zh-Hant"),
        ("zh-Hant-SG", "zh-Hant"),
        ("zh_TW", "zh-Hant"),
        ("ZH", "zh"),
        ("vi", "vi"),
        ("vi-VN", "vi"),
        ("ms", "ms"),
        ("ms-MY", "ms"),
        ("ms-Arab", "ms"),
        ("en", "en"),
        ("en-GB", "en"),
        ("de", "en"),
        ("pt-br", "en"),
        ("yue", "en"),
        ("", "en"),
        (None, "en"),
        ("-", "en"),
        ("x-klingon", "en"),
        ("zh-yue", "zh"),
    ],
)
def test_a_telegram_language_code_picks_the_catalogue(
    language_code: str | None, language: str
) -> None:
    assert language_for(language_code) == language


# -- the extraction of keys from the code ----------------------------------------------


def test_the_extractor_finds_literal_chosen_built_and_raised_keys() -> None:
    source = """
def t(self, key, **params):
    return translate(self.language, key, self.currency, **params)  # a wrapper

def render(views, state, changed, error):
    views.t("history.header")
    views.t_plural("board.shoe", 3)
    views.t("table.opened" if changed else "table.already_open")
    key = "answer.bet_changed" if changed else "answer.bet_placed"
    views.t(key)
    views.t(f"rules.dealer.{state.settings.dealer}")
    views.t(f"error.{error.key}")
    raise RuleViolation("stale_button" if changed else "no_round")

def require(phase):
    raise RuleViolation(f"not_{phase.value}")
"""
    found = {(use.key, use.plural) for use in keys_used(source, "x.py", renders=True)}
    assert found == {
        ("history.header", False),
        ("board.shoe", True),
        ("table.opened", False),
        ("table.already_open", False),
        ("answer.bet_changed", False),
        ("answer.bet_placed", False),
        ("rules.dealer.bid", False),
        ("rules.dealer.house", False),
        ("error.stale_button", False),
        ("error.no_round", False),
        ("error.not_bidding", False),
        ("error.not_betting", False),
        ("error.not_grabbing", False),
    }
    # Outside bot/telegram, only raised errors count (SQLAlchemy's text() is no message).
    outside = {use.key for use in keys_used(source, "x.py", renders=False)}
    assert outside == {key for key, _ in found if key.startswith("error.")}


@pytest.mark.parametrize(
    "source",
    [
        "def f(views, key):\n    views.t(key)\n",  # a key from elsewhere
        "def f(views, key=None):\n    key = key or 'help'\n    views.t(key)\n",
        "def f(views, kind):\n    views.t(f'board.kind.{kind}')\n",  # an unknown prefix
        "def f(views, kind):\n    views.t('board.' + kind)\n",
        "def f(views, error):\n    views.t_plural(f'error.{error.key}', 2)\n",
        "def f(views):\n    views.t()\n",
        "def f(key):\n    raise GameError(key)\n",
        "def f(kind):\n    raise RuleViolation(f'bad_{kind}')\n",
    ],
)
def test_the_extractor_refuses_a_key_it_cannot_see(source: str) -> None:
    with pytest.raises(UnknownKey):
        keys_used(source, "x.py", renders=True)


def test_every_error_class_is_shown_or_known_never_to_be(uses: dict[str, set[bool]]) -> None:
    classes = {"GameError"}
    trees = [ast.parse(path.read_text()) for path in (ROOT / "bot").rglob("*.py")]
    defined = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    while new := {
        node.name
        for node in defined
        if node.name not in classes
        and any(isinstance(base, ast.Name) and base.id in classes for base in node.bases)
    }:
        classes |= new
    assert classes == SHOWN_ERRORS | set(UNSHOWN_ERRORS)


def test_names_with_html_are_escaped() -> None:
    people = {7: Person(7, "<b>&")}
    assert display_name(7, people) == "&lt;b&gt;&amp;"
    assert display_name(8, people) == "user 8"


def test_the_board_escapes_bidder_and_bettor_names() -> None:
    settings = Settings(min_bid=100, bid_increment=100)
    state = start_round(round_id=3, chat_id=-1, settings=settings, seed=b"s" * 32, now_ms=0).round
    state = bid(state, 7, 100, free_chips=10_000, now_ms=1).round
    text, markup = Views(settings).board(state, {7: Person(7, "<i>Eve</i>")}, now_ms=1)
    assert "&lt;i&gt;Eve&lt;/i&gt;" in text and "<i>Eve" not in text
    assert markup is not None
    data = [button.callback_data for row in markup.inline_keyboard for button in row]
    assert data == ["3:bid:200", "3:bid:300"]


def test_button_data_round_trips_and_rejects_garbage() -> None:
    for press in [
        ButtonPress(12, "bet", 2_000),
        ButtonPress(12, "bid", 1),
        ButtonPress(12, "cancel"),
        ButtonPress(2**63 - 1, "grab"),
        ButtonPress(1, "bet", 1_000_000_000),
    ]:
        assert ButtonPress.decode(press.encode()) == press
    for garbage in ["", "x", "1:steal:5", "a:bet:1", "1:bet:-5", "1:bet:1:2", "barrier-1"]:
        assert ButtonPress.decode(garbage) is None


@pytest.mark.parametrize(
    "data",
    [
        "1:bet:²",  # isdigit() but int() refuses it: this crashed the handler
        "1:bet:٣",  # int() reads it as 3
        "١:bet:5",
        "1:bet:５",
        "1:bet:+5",
        "1:bet: 5",
        "1:bet:05",  # not how encode writes 5
        "01:bet:5",
        "0:bet:5",  # no round 0
        "1:bet:0",  # a bet button always has an amount
        "1:bid:0",
        "1:cancel:5",  # cancel and grab never have one
        "1:grab:1",
        "9223372036854775808:bet:5",  # beyond a BIGINT round id
        "99999999999999999999:grab:0",
        "1:bet:1000000001",  # beyond what anyone may type
        "1:bet:99999999999999999999",
        "1:bet:" + "9" * 60,
    ],
)
def test_button_data_not_made_by_encode_is_refused(data: str) -> None:
    assert ButtonPress.decode(data) is None


@given(st.text(alphabet=st.sampled_from("0123456789:²٣５+- betcancelgrabid"), max_size=30))
def test_decoding_never_raises_and_accepts_only_what_encode_writes(data: str) -> None:
    press = ButtonPress.decode(data)
    assert press is None or press.encode() == data


def test_betting_board_offers_quick_bets_within_limits_and_cancel() -> None:
    settings = Settings(
        min_bid=100, bid_increment=100, min_bet=100, max_bet=1_500, quick_bets=(500, 1_000, 2_000)
    )
    state = start_round(round_id=4, chat_id=-1, settings=settings, seed=b"s" * 32, now_ms=0).round
    state = bid(state, 7, 100, free_chips=10_000, now_ms=1).round
    state = advance(state, settings.bid_seconds * 1000, player_seeds={}).round
    state = bet(state, 8, 500, free_chips=100_000, now_ms=state.deadline_ms - 1).round
    _, markup = Views(settings).board(state, {}, now_ms=0)
    assert markup is not None
    data = [button.callback_data for row in markup.inline_keyboard for button in row]
    assert data == ["4:bet:500", "4:bet:1000", "4:cancel:0"]


def test_the_token_never_reaches_a_log_line(caplog: pytest.LogCaptureFixture) -> None:
    token = "123456:SECRET-token"
    logger = logging.getLogger("test.redact")
    redact = RedactSecrets([token])
    caplog.handler.addFilter(redact)
    logger.warning("calling https://api.telegram.org/bot%s/getMe", token)
    assert token not in caplog.text
    assert "<redacted>" in caplog.text


def test_long_messages_are_split_between_lines_within_telegrams_limit() -> None:
    lines = [f"• player {i}: RM{i}.00 lose -RM{i}.00" for i in range(400)]
    chunks = split_message("\n".join(lines))
    assert len(chunks) > 1
    assert all(len(chunk) <= 4096 for chunk in chunks)
    assert "\n".join(chunks).split("\n") == lines
    assert split_message("short") == ["short"]


def test_the_board_lists_a_bounded_number_of_bets() -> None:
    settings = Settings(min_bid=100, bid_increment=100, min_bet=100, max_bet=100)
    state = start_round(round_id=5, chat_id=-1, settings=settings, seed=b"s" * 32, now_ms=0).round
    state = bid(state, 1, 100, free_chips=10_000, now_ms=1).round
    state = advance(state, settings.bid_seconds * 1000, player_seeds={}).round
    people: dict[int, Person] = {}
    for user_id in range(100, 300):
        people[user_id] = Person(user_id, "&" * 64)
        state = bet(state, user_id, 100, free_chips=10_000, now_ms=state.deadline_ms - 1).round
    text, _ = Views(settings).board(state, people, now_ms=0)
    assert "…and 160 more" in text
    assert len(html.unescape(re.sub(r"<[^>]+>", "", text))) <= 4096


def test_a_bet_a_standing_bet_placed_is_marked_on_the_board() -> None:
    settings = Settings(min_bid=100, bid_increment=100, min_bet=100, max_bet=1_000)
    state = start_round(round_id=5, chat_id=-1, settings=settings, seed=b"s" * 32, now_ms=0).round
    state = bid(state, 1, 100, free_chips=10_000, now_ms=1).round
    state = advance(state, settings.bid_seconds * 1000, player_seeds={}).round
    run = place_autobets(state, [Autobet(2, 300, settings.ruleset)], {2: 10_000}, 2)
    state = bet(run.round, 3, 200, free_chips=10_000, now_ms=3).round
    people = {2: Person(2, "Ann"), 3: Person(3, "Ben")}
    for views in (Views(settings), Views(Settings(language="zh"))):
        text, _ = views.board(state, people, now_ms=3)
        lines = text.splitlines()
        assert any("Ann" in line and "🔁" in line for line in lines)
        assert any("Ben" in line and "🔁" not in line for line in lines)

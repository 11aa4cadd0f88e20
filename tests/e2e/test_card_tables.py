"""The card tables through the real bot process: Bull Bull and both Niu-Niu Pokers.

For each of ``bullbull``, ``poker29`` and ``poker29_vn`` an admin opens a table and sets
the game, a dealer bids for the seat (``dealer bid``) or the admin funds the group's bank
(``/fund``) and the house deals (``dealer house``), a few players bet, betting closes and
the cards are dealt at once: no grab button, a results message that shows every hand's
cards, and balances that move exactly as ``settle()`` says for the hands that the round's
seed (Bull Bull) or the group's shoe (Niu-Niu Poker) deals. A Bull Bull table seats nine
bets: the tenth is refused and holds nothing.

Each test plays in its own group: the bot answers at most 10 commands per group a minute.
The house-dealt Niu-Niu Poker table plays in an English and in a Chinese group: its
replies, results (hands named in the group's language) and board come from that group's
catalogue.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from bot.engine.round import Phase, Round, deal_seed_of
from bot.engine.settlement import Settlement, Stake, settle
from bot.money import format_signed
from bot.rules.cards import deal_packed, unpack
from bot.rules.hand_view import HandView
from bot.rules.ruleset import get_ruleset
from bot.rules.split import commitment
from bot.service.game import ParticipantResult
from bot.store.models import RoundRow, ShoeRow
from bot.telegram.i18n import DEFAULT_LANGUAGE
from tests.e2e.harness import (
    CREDIT,
    CREDIT_CENTS,
    E2E,
    FAST_GAME,
    LANGUAGES,
    JsonDict,
    Texts,
    change_setting,
    eventually,
    group_in,
    open_table,
    results_title,
    start_round,
    user,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

ADMIN = user(601, "Ada", "ada_admin")
DEALER = user(602, "Bao", "bao")
BETTORS = [user(603, "Chen", "chen"), user(604, "Dewi"), user(605, "Eko", "eko")]
#: Three bets, as commands and as bare numbers: (text, stake in cents).
BETS = [("/bet 5", 500), ("10", 1_000), ("/bet 20", 2_000)]
SUITS = "♠♥♦♣"
#: What switching to a card game sets (seed 001: no commission, bets 1-500).
CARD_TABLE = {"rake_bps": 0, "rebate_bps": 0, "min_bet": 100, "max_bet": 50_000}
MIN_BID = int(FAST_GAME["min_bid"]) * 100
BANK = "300"
BANK_CENTS = 30_000
QUICK_BET = int(FAST_GAME["quick_bets"][0]) * 100


@dataclass(frozen=True)
class Deal:
    """Where a round's cards came from, read from the bot's database."""

    seed: bytes
    decks: int
    offset: int
    #: The shoe's row (Niu-Niu Poker), as it was after the round: (id, dealt, replaced).
    shoe: tuple[int, int, int | None] | None = None
    shoe_commitment: str | None = None


async def deal_of(e2e: E2E, ended: Round) -> Deal:
    """The seed, decks and offset the round was dealt from: its own seed and one fresh
    deck, or the group's shoe (its seed, and ``rounds.deal_offset`` cards dealt before)."""
    async with e2e.database.transaction() as session:
        row = await session.get(RoundRow, ended.id)
        assert row is not None
        if row.shoe_id is None:
            return Deal(bytes(row.seed), 1, 0)
        shoe = await session.get(ShoeRow, row.shoe_id)
        assert shoe is not None and row.deal_offset is not None
        return Deal(
            bytes(shoe.seed),
            shoe.decks,
            row.deal_offset,
            (shoe.id, shoe.dealt, shoe.replaced_at_ms),
            shoe.commitment,
        )


async def check_settlement(
    e2e: E2E,
    group: int,
    ended: Round,
    bettors: list[JsonDict],
    stakes: list[int],
    dealer: JsonDict | None,
) -> tuple[tuple[int, ...], list[ParticipantResult], Settlement]:
    """The round dealt what its seed (or shoe) deals, stored what ``settle()`` computes
    for those hands, and moved every balance (the dealer's, or the bank's) by its net.
    Returns the hands (bettors in bet order, the dealer last), the stored lines and the
    expected settlement."""
    name = ended.settings.ruleset
    ruleset = get_ruleset(name)
    assert ended.phase is Phase.SETTLED, ended
    assert not ended.phase.is_open
    settings = ended.settings
    assert {key: getattr(settings, key) for key in CARD_TABLE} == CARD_TABLE, settings

    # The deal: five cards each, bettors in bet order, the dealer (or the house) last.
    # Its seed (or the shoe's) mixed with the client seeds (seed derivation 2).
    deal = await deal_of(e2e, ended)
    assert ended.fairness == 2
    hands = deal_packed(deal_seed_of(ended), deal.decks, len(bettors) + 1, deal.offset)
    assert ended.shares == hands
    assert commitment(deal.seed) == ended.commitment
    assert [bet.user_id for bet in ended.bets] == [b["id"] for b in bettors]
    assert [bet.amount for bet in ended.bets] == stakes

    # What the bot stored for each participant ...
    lines = await e2e.service.results(ended.id)
    dealer_role = "house" if dealer is None else "dealer"
    assert [line.role for line in lines] == ["player"] * len(bettors) + [dealer_role]
    assert [line.user_id for line in lines[:-1]] == [b["id"] for b in bettors]
    if dealer is not None:
        assert lines[-1].user_id == dealer["id"]
    assert [line.envelope for line in lines] == list(hands)
    assert [line.kind for line in lines] == [ruleset.evaluate(h).kind.value for h in hands]
    assert [line.stake for line in lines[:-1]] == stakes

    # ... is what the settlement rules compute from the dealt hands, stakes and pool ...
    expected = settle(
        dealer_outcome=hands[-1],
        pool=ended.pool,
        stakes=[
            Stake(b["id"], stake, hand)
            for b, stake, hand in zip(bettors, stakes, hands, strict=False)
        ],
        rake_bps=settings.rake_bps,
        rebate_bps=settings.rebate_bps,
        dealer_fees=0 if dealer is None else settings.dealer_fees,
        ruleset=ruleset,
    )
    assert not expected.redeal
    for bettor, line in zip(bettors, lines, strict=False):
        outcome = expected.outcomes[bettor["id"]]
        assert (line.result, line.gross, line.rake, line.rebate, line.net) == (
            outcome.result.value,
            outcome.gross,
            outcome.rake,
            outcome.rebate,
            outcome.net,
        ), bettor
    assert lines[-1].net == expected.dealer_net

    # ... and every balance moved by exactly that net, with nothing left held.
    for bettor, line in zip(bettors, lines, strict=False):
        balance = await e2e.service.balance(group, bettor["id"])
        assert (balance.available, balance.held) == (CREDIT_CENTS + line.net, 0), bettor
    if dealer is None:
        assert await e2e.service.bank_balance(group) == BANK_CENTS + expected.dealer_net
    else:
        balance = await e2e.service.balance(group, dealer["id"])
        assert (balance.available, balance.held) == (CREDIT_CENTS + expected.dealer_net, 0)
        assert await e2e.service.bank_balance(group) == 0
    assert await e2e.service.house_balance(group) == expected.platform_net
    assert sum(line.net for line in lines) + expected.platform_net == 0
    return hands, lines, expected


async def results_message(e2e: E2E, group: int, ended: Round) -> str:
    """The plain text of the one results message of the round."""
    title = results_title(await e2e.texts(group), ended)

    def results() -> list[JsonDict]:
        return [e for e in e2e.sends(group) if e["plain_text"].splitlines()[0] == title]

    await eventually(
        results,
        what=f"the results message of round {ended.id}",
        on_timeout=lambda: "\n".join(e["plain_text"] for e in e2e.sends(group)) + e2e.bot.log(),
    )
    sent = results()
    assert len(sent) == 1, [entry["plain_text"] for entry in e2e.sends(group)]
    return str(sent[0]["plain_text"])


def check_results_text(
    texts: Texts,
    text: str,
    ended: Round,
    hands: tuple[int, ...],
    lines: list[ParticipantResult],
    labels: list[str],
) -> None:
    """Each participant's line (found by ``labels``: names, then the dealer's) shows the
    five cards dealt, the hand they make (named in the group's language) and the net."""
    assert any(suit in text for suit in SUITS), text
    ruleset = get_ruleset(ended.settings.ruleset)
    rows = text.splitlines()
    for label, hand, line in zip(labels, hands, lines, strict=True):
        found = [row for row in rows if label.lower() in row.lower()]
        assert len(found) == 1, (label, rows)
        row = found[0]
        for card in unpack(hand):
            assert str(card) in row, (label, str(card), row)
        view = ruleset.show(ruleset.evaluate(hand))
        kind = texts.message(
            f"kind.{view.kind_key}",
            points=view.points,
            english=view.english,
            chinese=view.chinese,
            name=hand_name(texts, view),
        )
        assert kind in row, (label, kind, row)
        assert format_signed(line.net, texts.currency) in row, (label, row)


def hand_name(texts: Texts, view: HandView) -> str:
    """A hand's name in the group's language: as the rules name it in English and
    Chinese, else as the group's catalogue names its kind."""
    if texts.language in ("en", "zh"):
        return view.english if texts.language == "en" else view.chinese
    return texts.message(f"hand.{view.kind}", points=view.points)


def check_no_grab_button(e2e: E2E, group: int) -> None:
    """No message the bot ever sent or edited in the group offered a Grab button."""
    for entry in e2e.fake.transcript(group):
        for row in (entry.get("reply_markup") or {}).get("inline_keyboard", []):
            for button in row:
                assert ":grab:" not in button.get("callback_data", ""), entry


def offered_bid_button(e2e: E2E, group: int) -> bool:
    """Whether any message the bot sent or edited in the group had a bid button."""
    return any(
        ":bid:" in button.get("callback_data", "")
        for entry in e2e.fake.transcript(group)
        for row in (entry.get("reply_markup") or {}).get("inline_keyboard", [])
        for button in row
    )


async def final_board(e2e: E2E, round_id: int, group: int) -> JsonDict:
    """The round's board once its last edit removed the buttons; it says it is settled."""
    board_id = await e2e.service.board_message(round_id)
    assert board_id is not None

    def settled() -> JsonDict | None:
        shown = e2e.fake.messages(group)[board_id]
        return shown if shown["reply_markup"] is None else None

    board = await eventually(settled, what=f"the board of round {round_id} to settle")
    phase = await e2e.message(group, "board.phase.settled")
    assert phase in board["plain_text"].splitlines(), board["plain_text"]
    return board


async def check_card_table(e2e: E2E, group: int, ruleset: str) -> None:
    settings = await e2e.service.settings(group)
    assert settings.ruleset == ruleset
    assert {key: getattr(settings, key) for key in CARD_TABLE} == CARD_TABLE


async def bid_round(e2e: E2E, group: int, ruleset: str) -> Round:
    """``dealer bid``: the dealer bids, three players bet, and the cards settle it."""
    await open_table(e2e, group, ADMIN, [DEALER, *BETTORS], settings={"ruleset": ruleset})
    await check_card_table(e2e, group, ruleset)
    state = await start_round(e2e, group, DEALER)
    e2e.say(group, DEALER, "/bid 100")
    state = await e2e.wait_phase(group, Phase.BETTING, state.id)
    assert (state.dealer_id, state.pool) == (DEALER["id"], MIN_BID)
    for bettor, (text, _) in zip(BETTORS, BETS, strict=True):
        e2e.say(group, bettor, text)
    state = await e2e.wait_bets(group, len(BETTORS))
    hold = get_ruleset(ruleset).largest_loss_multiplier
    assert [(bet.user_id, bet.amount, bet.hold) for bet in state.bets] == [
        (b["id"], stake, stake * hold) for b, (_, stake) in zip(BETTORS, BETS, strict=True)
    ]
    return await e2e.wait_ended(state.id)


async def make_the_house_deal_at_a_loss(e2e: E2E, group: int) -> None:
    """``/set dealer house`` at a Niu-Niu Poker table (losses at 1x): the bot answers, in
    the group's language, that the table would pay out more than it takes in, with the
    odds ``/odds`` would give and how to confirm, and changes nothing; ``/set dealer house
    confirm`` makes the change."""
    answer = await e2e.ask(group, ADMIN, "/set dealer house")
    texts = await e2e.texts(group)
    lines = answer.splitlines()
    assert lines[0] == texts.message("set.edge_pays_out", percent="30.31%"), answer
    assert texts.message("odds.player", percent="+30.31%") in lines, answer
    assert texts.message("odds.dealer", percent="-30.31%") in lines, answer
    assert lines[-1] == texts.message("set.confirm", name="dealer", value="house"), answer
    assert lines[-1].endswith(("/set dealer house confirm.", "/set dealer house confirm。"))
    assert (await e2e.service.settings(group)).dealer == "bid"
    await change_setting(e2e, group, ADMIN, "dealer", "house confirm")
    assert (await e2e.service.settings(group)).dealer == "house"


async def house_round(
    e2e: E2E, group: int, ruleset: str, language: str = DEFAULT_LANGUAGE
) -> Round:
    """``dealer house``: the admin funds the bank, the round opens for bets at once with
    the bank as its pool, three players bet, and the cards settle it. At a Niu-Niu Poker
    table the bank would lose, so ``/set dealer house`` is confirmed first."""
    await open_table(e2e, group, ADMIN, BETTORS, settings={"ruleset": ruleset}, language=language)
    if ruleset.startswith("poker29"):
        await make_the_house_deal_at_a_loss(e2e, group)
    else:
        await change_setting(e2e, group, ADMIN, "dealer", "house")
    await check_card_table(e2e, group, ruleset)
    assert (await e2e.service.settings(group)).dealer == "house"
    await e2e.expect_reply(
        group, ADMIN, f"/fund {BANK}", "fund.done", amount=BANK_CENTS, balance=BANK_CENTS
    )
    assert await e2e.service.bank_balance(group) == BANK_CENTS
    await e2e.expect_reply(group, BETTORS[0], "/bank", "bank.balance", balance=BANK_CENTS)

    e2e.say(group, BETTORS[0], "/newround")
    state = await e2e.wait_phase(group, Phase.BETTING)
    assert (state.dealer_id, state.high_bidder, state.pool) == (None, None, BANK_CENTS)
    await e2e.wait_button(group, f"{state.id}:bet:{QUICK_BET}")
    for bettor, (text, _) in zip(BETTORS, BETS, strict=True):
        e2e.say(group, bettor, text)
    state = await e2e.wait_bets(group, len(BETTORS))
    hold = get_ruleset(ruleset).largest_loss_multiplier
    assert [(bet.user_id, bet.amount, bet.hold) for bet in state.bets] == [
        (b["id"], stake, stake * hold) for b, (_, stake) in zip(BETTORS, BETS, strict=True)
    ]
    ended = await e2e.wait_ended(state.id)
    assert not offered_bid_button(e2e, group)
    return ended


async def test_bullbull_with_a_bidding_dealer_settles_from_the_rounds_seed(e2e: E2E) -> None:
    group = -1_001_000_000_601
    # A player sets their client seed; a bad one is refused and changes nothing.
    await e2e.expect_reply(group, BETTORS[0], "/seed", "seed.none", most=64)
    await e2e.expect_reply(group, BETTORS[0], "/seed lucky-7", "seed.set", seed="lucky-7")
    await e2e.expect_reply(
        group,
        BETTORS[0],
        "/seed 幸运 <b>",
        "error.bad_client_seed",
        most=64,
        alphabet="A-Z a-z 0-9 _ . -",
    )
    await e2e.expect_reply(group, BETTORS[0], "/seed", "seed.current", seed="lucky-7")
    ended = await bid_round(e2e, group, "bullbull")
    assert ended.client_seeds == ("lucky-7",)  # fixed into the deal as betting closed
    hands, lines, _ = await check_settlement(
        e2e, group, ended, BETTORS, [stake for _, stake in BETS], DEALER
    )
    assert (await deal_of(e2e, ended)).shoe is None  # a fresh deck: no shoe
    text = await results_message(e2e, group, ended)
    labels = [b["first_name"] for b in BETTORS] + [DEALER["first_name"]]
    check_results_text(await e2e.texts(group), text, ended, hands, lines, labels)
    assert ended.seed.hex() in text  # the round's seed is revealed as it ends
    assert "lucky-7" in text.splitlines()[-2]  # and the client seeds mixed in
    check_no_grab_button(e2e, group)
    await final_board(e2e, ended.id, group)

    # /verify deals again from the seed: one deck (the singular form), the cards in order.
    verified = await e2e.ask(group, BETTORS[0], f"/verify {ended.id}")
    texts = await e2e.texts(group)
    checked = texts.match(
        verified,
        "verify.cards_ok",
        1,
        round_id=ended.id,
        seed=ended.seed.hex(),
        decks=1,
        first=1,
        last=5 * len(hands),
    )
    assert checked is not None, verified
    dealt = checked["hands"].splitlines()
    for label, hand in zip(labels, hands, strict=True):
        rows = [row for row in dealt if label in row]
        assert len(rows) == 1, (label, dealt)
        assert all(str(card) in rows[0] for card in unpack(hand)), (label, rows)


@pytest.mark.parametrize("language", LANGUAGES)
async def test_poker29_with_the_house_dealing_settles_from_the_groups_shoe(
    e2e: E2E, language: str
) -> None:
    group = group_in(language, -1_001_000_000_602)
    ended = await house_round(e2e, group, "poker29", language)
    hands, lines, _ = await check_settlement(
        e2e, group, ended, BETTORS, [stake for _, stake in BETS], None
    )
    deal = await deal_of(e2e, ended)
    assert deal.shoe is not None and deal.decks == 6 and deal.offset == 0
    _, dealt, replaced = deal.shoe
    assert (dealt, replaced) == (5 * len(hands), None)
    assert ended.commitment == deal.shoe_commitment

    text = await results_message(e2e, group, ended)
    house = await e2e.message(group, "results.house_name")
    labels = [b["first_name"] for b in BETTORS] + [house]
    check_results_text(await e2e.texts(group), text, ended, hands, lines, labels)
    check_no_grab_button(e2e, group)
    await final_board(e2e, ended.id, group)

    # The shoe deals on: its seed stays secret, even to /verify.
    await e2e.expect_reply(
        group,
        BETTORS[1],
        f"/verify {ended.id}",
        "verify.shoe_secret",
        round_id=ended.id,
        shoe_id=deal.shoe[0],
        commitment=deal.shoe_commitment,
        first=1,
        last=5 * len(hands),
    )
    secret = deal.seed.hex()
    assert all(secret not in (entry["plain_text"] or "") for entry in e2e.fake.transcript(group))


async def test_poker29_vn_with_a_bidding_dealer_settles_from_the_groups_shoe(e2e: E2E) -> None:
    group = -1_001_000_000_603
    ended = await bid_round(e2e, group, "poker29_vn")
    hands, lines, _ = await check_settlement(
        e2e, group, ended, BETTORS, [stake for _, stake in BETS], DEALER
    )
    deal = await deal_of(e2e, ended)
    assert deal.shoe is not None and deal.decks == 6 and deal.offset == 0
    assert deal.shoe[1:] == (5 * len(hands), None)

    text = await results_message(e2e, group, ended)
    labels = [b["first_name"] for b in BETTORS] + [DEALER["first_name"]]
    check_results_text(await e2e.texts(group), text, ended, hands, lines, labels)
    assert deal.seed.hex() not in text
    check_no_grab_button(e2e, group)
    await final_board(e2e, ended.id, group)


FULL_TABLE = [
    user(611 + i, name)
    for i, name in enumerate(
        ["Amir", "Bela", "Cato", "Dana", "Emil", "Fina", "Gabe", "Hana", "Igor", "Juno"]
    )
]


async def test_bullbull_seats_nine_bets_and_refuses_the_tenth(e2e: E2E) -> None:
    group = -1_001_000_000_604
    seated, tenth = FULL_TABLE[:9], FULL_TABLE[9]
    e2e.fake.set_chat_member(group, ADMIN["id"], "administrator")
    hellos = {p["id"]: e2e.say(group, p, f"hi, I am {p['first_name']}") for p in FULL_TABLE}
    await e2e.expect_reply(group, ADMIN, "/open", "table.opened")
    for key, value in [("ruleset", "bullbull"), ("dealer", "house"), ("bet_seconds", "3")]:
        await change_setting(e2e, group, ADMIN, key, value)
    await e2e.expect_reply(
        group, ADMIN, f"/fund {BANK}", "fund.done", amount=BANK_CENTS, balance=BANK_CENTS
    )
    # Ten credits would spend the group's reply budget: read them from the database.
    for player in FULL_TABLE:
        e2e.say(
            group,
            ADMIN,
            f"/credit {CREDIT}",
            reply_to=hellos[player["id"]]["message"]["message_id"],
        )

    async def credited() -> bool | None:
        for player in FULL_TABLE:
            if (await e2e.service.balance(group, player["id"])).available != CREDIT_CENTS:
                return False
        return True

    await eventually(credited, what="ten credits", on_timeout=e2e.bot.log)

    e2e.say(group, ADMIN, "/newround")
    state = await e2e.wait_phase(group, Phase.BETTING)
    data = f"{state.id}:bet:{QUICK_BET}"
    board = await e2e.wait_button(group, data)
    stakes = [100 * (i + 1) for i in range(len(seated))]
    for player, stake in zip(seated, stakes, strict=True):
        e2e.say(group, player, f"/bet {stake // 100}")
    # The chat's updates are handled in order: the tenth comes after the nine. It gets a
    # short refusal naming the limit, a number of bets.
    press = e2e.press(group, board, tenth, data)
    await e2e.expect_toast(group, press, "error.table_full", seats=len(seated))

    state = await e2e.wait_bets(group, len(seated))
    assert [bet.user_id for bet in state.bets] == [p["id"] for p in seated]
    balance = await e2e.service.balance(group, tenth["id"])
    assert (balance.available, balance.held) == (CREDIT_CENTS, 0)

    ended = await e2e.wait_ended(state.id)
    assert [bet.user_id for bet in ended.bets] == [p["id"] for p in seated]
    hands, lines, _ = await check_settlement(e2e, group, ended, seated, stakes, None)
    balance = await e2e.service.balance(group, tenth["id"])
    assert (balance.available, balance.held) == (CREDIT_CENTS, 0)
    assert tenth["id"] not in {line.user_id for line in lines}

    text = await results_message(e2e, group, ended)
    labels = [p["first_name"] for p in seated] + [await e2e.message(group, "results.house_name")]
    check_results_text(await e2e.texts(group), text, ended, hands, lines, labels)
    assert tenth["first_name"] not in text
    check_no_grab_button(e2e, group)
    assert not offered_bid_button(e2e, group)

    # The board lists the nine bets, and not the tenth.
    shown = (await final_board(e2e, ended.id, group))["plain_text"]
    bet_rows = [row for row in shown.splitlines() if re.match(r"^\W*\w+: RM\d", row.strip())]
    for player in seated:
        assert player["first_name"] in shown, shown
    assert tenth["first_name"] not in shown, shown
    assert len(bet_rows) == len(seated), shown

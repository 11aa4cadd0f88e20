"""What the Mini App's page shows of a group's table, as JSON: the open round (its phase,
deadline, dealer, pool, bets and who has grabbed) and the viewer's own chips.

Built from the service's ``TableSnapshot`` of the group: the open round with every bet,
the viewers' balances and the names of the people in the round. The round's
seed is left out (docs/rules.md §6: it is revealed only once the round has ended), and
so are the amounts grabbed: the board says only how many have grabbed.
"""

from __future__ import annotations

from typing import Any

from bot.engine.autobets import Autobet
from bot.engine.round import Phase, Round, minimum_bid
from bot.money import format_amount
from bot.service.game import Balance, Person, TableSnapshot

JsonDict = dict[str, Any]


def shown_name(user_id: int, people: dict[int, Person]) -> str:
    """A person as the page names them: first name, else @username, else their id."""
    person = people.get(user_id)
    if person is None:
        return f"#{user_id}"
    if person.first_name:
        return person.first_name
    return f"@{person.username}" if person.username else f"#{user_id}"


def money(cents: int, currency: str) -> JsonDict:
    """An amount as the page takes it: cents to compute with, text to show."""
    return {"cents": cents, "text": format_amount(cents, currency)}


def round_view(state: Round, people: dict[int, Person]) -> JsonDict:
    """An open round without its secrets."""
    currency = state.settings.currency
    if state.house_deals:
        dealer: JsonDict | None = {"house": True, "name": "The house"}
    elif state.dealer_id is not None:
        dealer = {"house": False, "name": shown_name(state.dealer_id, people)}
    else:
        dealer = None
    high_bid = None
    if state.high_bidder is not None:
        bidder = shown_name(state.high_bidder, people)
        high_bid = {"name": bidder, **money(state.high_bid, currency)}
    return {
        "id": state.id,
        "phase": state.phase.value,
        "deadline_ms": state.deadline_ms,
        "game": state.settings.ruleset,
        "dealer": dealer,
        "high_bid": high_bid,
        "pool": money(state.pool, currency),
        "bets": [
            {
                "name": shown_name(bet.user_id, people),
                "mine": False,
                "standing": bet.standing,
                **money(bet.amount, currency),
            }
            for bet in state.bets
        ],
        "grabbed": [shown_name(grab.user_id, people) for grab in state.grabs],
        "commitment": state.commitment,
        # The board's quick bids: the least the next bid may be, and one step more.
        "bid_steps": (
            [
                money(least, currency)
                for least in (minimum_bid(state), minimum_bid(state) + state.settings.bid_increment)
            ]
            if state.phase is Phase.BIDDING
            else []
        ),
    }


def table_view(snapshot: TableSnapshot, *, viewer: int, now_ms: int) -> JsonDict:
    """The page's whole table for ``viewer``: ``now_ms`` is the server's clock, so that
    the page counts down to the real deadline whatever the phone's clock says;
    ``version`` is where the table stands (the live feed's event id)."""
    state = snapshot.round
    currency = snapshot.settings.currency
    shown = (
        round_view(state, snapshot.people) if state is not None and state.phase.is_open else None
    )
    if shown is not None and state is not None:
        for view, bet in zip(shown["bets"], state.bets, strict=True):
            view["mine"] = bet.user_id == viewer
        # What the viewer may still do in the round: grab once, if they play in it.
        shown["me"] = {
            "plays": viewer in state.participants,
            "grabbed": any(grab.user_id == viewer for grab in state.grabs),
        }
    balance = snapshot.balances.get(viewer, Balance(0, 0))
    return {
        "chat": snapshot.chat_id,
        "version": str(snapshot.key),
        "now_ms": now_ms,
        "round": shown,
        "chips": {
            "available": money(balance.available, currency),
            "held": money(balance.held, currency),
        },
        "quick_bets": [money(amount, currency) for amount in snapshot.settings.quick_bets],
        # Between rounds, the round just ended: "same again" names it.
        "last_round": snapshot.key.round_id if shown is None and snapshot.key.round_id else None,
    }


def standing_view(standing: Autobet | None, currency: str) -> JsonDict | None:
    """The viewer's standing bet (``/autobet``, or "same again" kept for the next round:
    ``once``), if any."""
    if standing is None:
        return None
    return {"once": standing.once, **money(standing.amount, currency)}

"""The hot path's read of a round, built once (``bot.store.round_commands`` runs it; the
write is ``bot.store.round_writers``'s).

The read brings the round row, the player's own bet and grab, the round's counts, the
player's free chips, the ids of the accounts a bid may move chips between, whether the
update was processed, and whether the table is open: the player's ``Seat``. When the
step may settle (the last grab: ``engine.grab`` takes the whole round for it) or is a
deadline's, it brings the round whole instead: every bet and grab and every account of
the round's players, as JSON arrays, and what a deal mixes in (the participants' client
seeds at the close of betting, the shoe's fixed ones): still one statement.

SQL text, one template for both dialects (their JSON functions filled in): the hot path
runs it on the bare drivers, which take text, and a Core construct would be compiled to
this same text once, with its per-dialect JSON aggregates as hand-written functions.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.store.models import OPEN_PHASES_SQL
from bot.store.statements import Positional

_READ = """
SELECT r.id, r.chat_id, r.phase, r.version, r.deadline_ms, r.commitment, r.seed,
       CAST(r.settings AS text) AS settings, r.high_bidder, r.high_bid, r.bid_hold,
       r.dealer_id, r.pool, r.shares,
       r.void_reason, r.shoe_id, r.deal_offset, r.bet_count, r.grab_count,
       r.fairness, r.client_seeds, r.board_message_id,
       (SELECT s.seed FROM shoes AS s WHERE s.id = r.shoe_id) AS shoe_seed,
       CASE WHEN {whole} THEN (SELECT s.client_seeds FROM shoes AS s WHERE s.id = r.shoe_id)
       END AS shoe_client_seeds,
       b.amount AS bet_amount, b.hold AS bet_hold, b.standing AS bet_standing,
       g.amount AS grab_amount, g.auto AS grab_auto,
       av.id AS available_id, av.balance AS free_chips, hd.id AS held_id,
       bav.id AS bidder_available_id, bhd.id AS bidder_held_id,
       {seen} AS seen,
       (SELECT c.is_open FROM chats AS c WHERE c.id = r.chat_id) AS chat_open,
       CASE WHEN {whole} THEN coalesce((
           SELECT {array}({row}(ab.user_id, ab.amount, ab.hold, ab.position, ab.standing))
           FROM bets AS ab WHERE ab.round_id = r.id), {empty}) END AS all_bets,
       CASE WHEN {whole} THEN coalesce((
           SELECT {array}({row}(ag.user_id, ag.amount, ag.auto, ag.position))
           FROM grabs AS ag WHERE ag.round_id = r.id), {empty}) END AS all_grabs,
       CASE WHEN {whole} THEN coalesce((
           SELECT {array}({row}(aa.kind, aa.user_id, aa.id))
           FROM accounts AS aa
           WHERE aa.chat_id = r.chat_id AND (
               aa.kind IN ('house', 'bank') OR aa.user_id = r.dealer_id
               OR aa.user_id IN (SELECT ab.user_id FROM bets AS ab WHERE ab.round_id = r.id))
           ), {empty}) END AS all_accounts,
       CASE WHEN {whole} AND r.phase = 'betting' THEN coalesce((
           SELECT {array}({row}(cs.user_id, cs.seed))
           FROM client_seeds AS cs
           WHERE cs.user_id = r.dealer_id
              OR cs.user_id IN (SELECT ab.user_id FROM bets AS ab WHERE ab.round_id = r.id)
           ), {empty}) END AS player_seeds
FROM rounds AS r
LEFT JOIN bets AS b ON b.round_id = r.id AND b.user_id = :user_id
LEFT JOIN grabs AS g ON g.round_id = r.id AND g.user_id = :user_id
LEFT JOIN accounts AS av
       ON av.chat_id = r.chat_id AND av.kind = 'available' AND av.user_id = :user_id
LEFT JOIN accounts AS hd
       ON hd.chat_id = r.chat_id AND hd.kind = 'held' AND hd.user_id = :user_id
LEFT JOIN accounts AS bav
       ON bav.chat_id = r.chat_id AND bav.kind = 'available' AND bav.user_id = r.high_bidder
LEFT JOIN accounts AS bhd
       ON bhd.chat_id = r.chat_id AND bhd.kind = 'held' AND bhd.user_id = r.high_bidder
WHERE {where} {lock}
"""

#: A player's command is located by chat; every bet is read for what may be the last grab.
_BY_CHAT = f"r.chat_id = :chat_id AND r.{OPEN_PHASES_SQL}"
_LAST_GRAB = (
    "r.phase = 'grabbing' AND r.grab_count + 1 >= "
    "r.bet_count + CASE WHEN r.dealer_id IS NULL THEN 0 ELSE 1 END"
)
#: Whether the command's update was processed.
_SEEN_ONE = (
    "EXISTS (SELECT 1 FROM processed_updates AS p"
    " WHERE p.bot_id = :bot_id AND p.update_id = :update_id)"
)
#: Which of several commands' updates were processed (PostgreSQL: an array of their ids).
_SEEN_OF_MANY = (
    "ARRAY(SELECT p.update_id FROM processed_updates AS p"
    " WHERE p.bot_id = :bot_id AND p.update_id = ANY(CAST(:update_ids AS bigint[])))"
)
#: A deadline (or a window moved) is located by the round's id, and reads it whole.
_BY_ID = "r.id = :round_id"
_WHOLE = "1 = 1"

_POSTGRES_JSON = {"array": "json_agg", "row": "json_build_array", "empty": "CAST('[]' AS json)"}
_SQLITE_JSON = {"array": "json_group_array", "row": "json_array", "empty": "'[]'"}


def _read(json: Mapping[str, str], *, by_chat: bool, lock: str) -> str:
    where, whole = (_BY_CHAT, _LAST_GRAB) if by_chat else (_BY_ID, _WHOLE)
    return _READ.format(where=where, whole=whole, lock=lock, seen=_SEEN_ONE, **json)


#: PostgreSQL's read by (by chat, holding the round). A command's read locks nothing (the
#: write's compare-and-set is what keeps it right), nor does a deadline's; one that deals
#: reads again holding the round for its transaction, so that a second worker sweeping the
#: same round passes over it.
POSTGRES_READS = {
    (True, False): Positional.of(_read(_POSTGRES_JSON, by_chat=True, lock="")),
    (False, False): Positional.of(_read(_POSTGRES_JSON, by_chat=False, lock="")),
    (False, True): Positional.of(
        _read(_POSTGRES_JSON, by_chat=False, lock="FOR UPDATE OF r SKIP LOCKED")
    ),
}
#: PostgreSQL's read of a chat's open round whole for several players' commands written
#: together (``RoundCommands._postgres_joined``), locking nothing: ``seen`` lists which of their
#: updates (``update_ids``) were processed.
POSTGRES_JOINED_READ = Positional.of(
    _READ.format(where=_BY_CHAT, whole=_WHOLE, lock="", seen=_SEEN_OF_MANY, **_POSTGRES_JSON)
)
#: SQLite's read, by chat or not: BEGIN IMMEDIATE already made this the only writer.
SQLITE_READS = {
    True: _read(_SQLITE_JSON, by_chat=True, lock=""),
    False: _read(_SQLITE_JSON, by_chat=False, lock=""),
}

#: A round whole, by id, locking nothing: what its board or results show.
POSTGRES_WHOLE = POSTGRES_READS[(False, False)]
SQLITE_WHOLE = SQLITE_READS[False]
#: A group's latest round (open or ended) whole, locking nothing: what the live feed shows.
_LATEST = (
    "r.id = (SELECT l.id FROM rounds AS l WHERE l.chat_id = :chat_id ORDER BY l.id DESC LIMIT 1)"
)
#: (PostgreSQL's as text with named parameters: ``bot.store.table_reads`` builds on it.)
POSTGRES_LATEST_WHOLE_SQL = _READ.format(
    where=_LATEST, whole=_WHOLE, lock="", seen=_SEEN_ONE, **_POSTGRES_JSON
)
SQLITE_LATEST_WHOLE = _READ.format(
    where=_LATEST, whole=_WHOLE, lock="", seen=_SEEN_ONE, **_SQLITE_JSON
)
#: The parameters a read without a player or an update takes.
NOBODY = {"chat_id": None, "user_id": None, "bot_id": 0, "update_id": None}

#: Whether an update was processed, when the read found no round to say so.
SEEN = "SELECT 1 FROM processed_updates WHERE bot_id = :bot_id AND update_id = :update_id"
POSTGRES_SEEN = Positional.of(SEEN)

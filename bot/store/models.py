"""Tables. Money columns are BIGINT cents; times are BIGINT milliseconds since the epoch
(portable across SQLite and PostgreSQL, and what the engine works in)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

OPEN_PHASES_SQL = "phase IN ('bidding', 'betting', 'grabbing')"
#: Rounds whose results have not gone out: the open ones and, for a moment, those just
#: ended; the index the delivery sweep reads every second stays small.
UNANNOUNCED_SQL = "announced_at_ms IS NULL"
#: Rounds whose board may still show live buttons: the open ones and, for a moment,
#: those just ended (until the board's last edit took them away).
UNCLOSED_SQL = "board_closed_at_ms IS NULL"
#: Rounds with a board message replaced by a new phase's and not yet deleted (or disarmed).
REPLACED_BOARD_SQL = "replaced_board_message_id IS NOT NULL"
#: Row ids: BIGINT on PostgreSQL (postings pass 2^31 long before an operator's last round);
#: on SQLite an INTEGER PRIMARY KEY is already 64-bit, and only it autoincrements.
ID_TYPE = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {int: BigInteger, dict[str, Any]: JSON, list[Any]: JSON}  # noqa: RUF012


class Chat(Base):
    """A Telegram chat the bot has seen; groups carry a table and their settings."""

    __tablename__ = "chats"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    title: Mapped[str] = mapped_column(String(256), default="")
    is_group: Mapped[bool] = mapped_column(Boolean, default=True)
    is_open: Mapped[bool] = mapped_column(Boolean, default=False)
    #: Only the settings an admin changed; the rest come from the configured defaults.
    settings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    next_round_at_ms: Mapped[int | None] = mapped_column(nullable=True)
    created_at_ms: Mapped[int]
    #: The bot that serves the group (a token's numeric prefix); ``None`` until one is
    #: bound (``bot.store.chat_bots``).
    bot_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class User(Base):
    """A Telegram user the bot has seen."""

    __tablename__ = "users"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    username: Mapped[str | None] = mapped_column(String(64), index=True)
    first_name: Mapped[str] = mapped_column(String(256), default="")
    last_name: Mapped[str | None] = mapped_column(String(256))
    seen_at_ms: Mapped[int]


class Account(Base):
    """A ledger account of a group: a player's available or held chips, the house (rake),
    the mint (admins' credits come from it) or the bank (the dealer when the house deals).

    ``balance`` is the sum of the account's postings, kept by the database: a trigger adds
    each new posting, and any other change of it is refused (migration 0021).
    """

    __tablename__ = "accounts"
    __table_args__ = (
        UniqueConstraint("chat_id", "kind", "user_id", name="uq_accounts_owner"),
        CheckConstraint("kind IN ('available', 'held', 'house', 'mint', 'bank')", name="kind"),
        CheckConstraint("kind IN ('house', 'mint') OR balance >= 0", name="not_negative"),
    )
    id: Mapped[int] = mapped_column(ID_TYPE, primary_key=True, autoincrement=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id"))
    kind: Mapped[str] = mapped_column(String(16))
    #: 0 for the group's house and mint accounts.
    user_id: Mapped[int] = mapped_column(default=0)
    balance: Mapped[int] = mapped_column(default=0)


class LedgerTransaction(Base):
    """One balanced movement of chips: its postings sum to zero (the database refuses a
    commit where they do not: migration 0021)."""

    __tablename__ = "ledger_transactions"
    __table_args__ = (
        # The console: a group's ledger in order (CSV export), and totals by day. The
        # first serves the lookups by group too (no index on chat_id alone: migration 0014).
        Index("ix_ledger_transactions_chat_id_id", "chat_id", "id"),
        Index("ix_ledger_transactions_created_at_ms", "created_at_ms"),
    )
    id: Mapped[int] = mapped_column(ID_TYPE, primary_key=True, autoincrement=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id"))
    kind: Mapped[str] = mapped_column(String(32))
    round_id: Mapped[int | None] = mapped_column(ForeignKey("rounds.id"), index=True)
    actor_id: Mapped[int | None]
    memo: Mapped[str] = mapped_column(String(256), default="")
    created_at_ms: Mapped[int]
    #: The postings as ``[[account_id, amount], ...]``, written with the row: the database
    #: turns them into ``postings`` and clears them (on SQLite the only way to write any).
    legs: Mapped[list[Any] | None] = mapped_column(JSON(none_as_null=True))


class Posting(Base):
    """One leg of a ledger transaction."""

    __tablename__ = "postings"
    __table_args__ = (
        CheckConstraint("amount <> 0", name="not_zero"),
        # A statement walks an account's postings newest first and stops (/ledger).
        Index("ix_postings_account_id_transaction_id", "account_id", "transaction_id"),
    )
    id: Mapped[int] = mapped_column(ID_TYPE, primary_key=True, autoincrement=True)
    transaction_id: Mapped[int] = mapped_column(ForeignKey("ledger_transactions.id"), index=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id"))
    amount: Mapped[int]


class RoundRow(Base):
    """A round; every update is compare-and-set on ``version``."""

    __tablename__ = "rounds"
    __table_args__ = (
        # At most one open round per chat, whatever two workers try at once.
        Index(
            "uq_rounds_one_open_per_chat",
            "chat_id",
            unique=True,
            sqlite_where=text(OPEN_PHASES_SQL),
            postgresql_where=text(OPEN_PHASES_SQL),
        ),
        Index("ix_rounds_phase_deadline", "phase", "deadline_ms"),
        # A group's latest rounds (/history) without reading its whole history.
        Index("ix_rounds_chat_id_id", "chat_id", "id"),
        # Ended rounds whose results have not gone out (start-up): only the few rounds
        # not announced yet are in it, open ones included, however long the history. Led
        # by phase, so that SQLite (without statistics) prefers it to the index on
        # (phase, deadline_ms), which would read every settled round.
        Index(
            "ix_rounds_unannounced",
            "phase",
            "ended_at_ms",
            sqlite_where=text(UNANNOUNCED_SQL),
            postgresql_where=text(UNANNOUNCED_SQL),
        ),
        # Ended rounds whose board's last edit has not been made (the sweep): as small.
        Index(
            "ix_rounds_unclosed",
            "phase",
            "ended_at_ms",
            sqlite_where=text(UNCLOSED_SQL),
            postgresql_where=text(UNCLOSED_SQL),
        ),
        # Old boards still to be deleted (the sweep): only the few replaced just now.
        Index(
            "ix_rounds_replaced_board",
            "board_replaced_at_ms",
            sqlite_where=text(REPLACED_BOARD_SQL),
            postgresql_where=text(REPLACED_BOARD_SQL),
        ),
        # The console: rounds by start date and totals by day of their end.
        Index("ix_rounds_started_at_ms", "started_at_ms"),
        Index("ix_rounds_ended_at_ms", "ended_at_ms"),
        # The console: a game's rounds, newest first.
        Index("ix_rounds_ruleset_id", "ruleset", "id"),
        # /top: a group's rounds that ended in the last days.
        Index("ix_rounds_chat_id_ended_at_ms", "chat_id", "ended_at_ms"),
        CheckConstraint(
            "phase IN ('bidding', 'betting', 'grabbing', 'settled', 'void')", name="phase"
        ),
    )
    id: Mapped[int] = mapped_column(ID_TYPE, primary_key=True, autoincrement=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id"))
    phase: Mapped[str] = mapped_column(String(16))
    version: Mapped[int] = mapped_column(Integer)
    deadline_ms: Mapped[int]
    commitment: Mapped[str] = mapped_column(String(64))
    #: Secret until the round ends; never shown before.
    seed: Mapped[bytes] = mapped_column(LargeBinary(64))
    settings: Mapped[dict[str, Any]]
    #: The game (``settings``' ruleset, by its current name), for lists by game.
    ruleset: Mapped[str] = mapped_column(String(32), server_default="envelope68")
    high_bidder: Mapped[int | None]
    high_bid: Mapped[int] = mapped_column(default=0)
    bid_hold: Mapped[int] = mapped_column(default=0)
    dealer_id: Mapped[int | None]
    pool: Mapped[int] = mapped_column(default=0)
    shares: Mapped[list[Any]] = mapped_column(default=list)
    void_reason: Mapped[str | None] = mapped_column(String(16))
    #: The message that shows the round's live board once Telegram has it; ``NULL`` until
    #: then (the round row is the intent to post it), 0 if Telegram refused it.
    board_message_id: Mapped[int | None]
    #: Until when a worker that is posting the board holds the job (its lease); another
    #: worker, or this one restarted, may take the job over once it has passed.
    board_claimed_until_ms: Mapped[int | None]
    #: The newest message id in the chat that the worker that first took that job knew
    #: of: a board it sent and never recorded (it died) came after it.
    board_known_before: Mapped[int | None]
    started_at_ms: Mapped[int]
    ended_at_ms: Mapped[int | None]
    #: The shoe a card round deals from, and how many of its cards were dealt before it.
    shoe_id: Mapped[int | None] = mapped_column(ForeignKey("shoes.id"))
    deal_offset: Mapped[int | None] = mapped_column(Integer)
    #: When Telegram took the results message; an ended round without it still has its
    #: results to go out (at start-up, or by the sweep once no worker holds the job).
    announced_at_ms: Mapped[int | None]
    #: Until when a worker that is sending the results holds the job (its lease).
    announcement_claimed_until_ms: Mapped[int | None]
    #: When the board's last edit (the round over, no buttons) was made, or found
    #: nothing to edit; an ended round without it may still show live buttons, and the
    #: sweep edits it once no worker is about to.
    board_closed_at_ms: Mapped[int | None]
    #: The open phase the board last showed once Telegram took it: an open round whose
    #: phase it does not show is shown again by the sweep once no worker is about to.
    board_phase: Mapped[str | None] = mapped_column(String(16))
    #: The board message a new phase's replaced, until it is deleted or its buttons are
    #: taken off, and since when: the sweep does that for a worker that died first.
    replaced_board_message_id: Mapped[int | None]
    board_replaced_at_ms: Mapped[int | None]
    #: How many bets and grabs the round has (so a command loads only its player's own).
    bet_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    grab_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: How the deal seed derives from the seed (``bot.rules.fairness``): 1 before client
    #: seeds; and the client seeds it was derived with, fixed as the round was dealt.
    fairness: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    client_seeds: Mapped[list[Any] | None] = mapped_column(nullable=True)


class ShoeRow(Base):
    """A group's shoe of several decks, dealt across rounds (Niu-Niu Poker).

    Its commitment is published when it is shuffled; its seed stays secret until it is
    replaced (``replaced_at_ms``), after which every round dealt from it can be verified.
    """

    __tablename__ = "shoes"
    __table_args__ = (
        Index(
            "uq_shoes_one_current_per_chat",
            "chat_id",
            unique=True,
            sqlite_where=text("replaced_at_ms IS NULL"),
            postgresql_where=text("replaced_at_ms IS NULL"),
        ),
        CheckConstraint("dealt >= 0 AND dealt <= decks * 52", name="dealt"),
    )
    id: Mapped[int] = mapped_column(ID_TYPE, primary_key=True, autoincrement=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id"))
    decks: Mapped[int] = mapped_column(Integer)
    seed: Mapped[bytes] = mapped_column(LargeBinary(64))
    commitment: Mapped[str] = mapped_column(String(64))
    dealt: Mapped[int] = mapped_column(Integer, default=0)
    created_at_ms: Mapped[int]
    replaced_at_ms: Mapped[int | None]
    #: The shoe's seed derivation (``bot.rules.fairness``), and the client seeds its order
    #: derives from: those of its first round's participants, fixed as it was dealt.
    fairness: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    client_seeds: Mapped[list[Any] | None] = mapped_column(nullable=True)


class ClientSeedRow(Base):
    """A player's client seed (``/seed``): one per player, for every group they play in,
    mixed into each deal they take part in (``bot.rules.fairness``)."""

    __tablename__ = "client_seeds"
    user_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    seed: Mapped[str] = mapped_column(String(64))
    updated_at_ms: Mapped[int]


class BidRow(Base):
    """Every bid placed (the history; the round row holds the highest)."""

    __tablename__ = "bids"
    id: Mapped[int] = mapped_column(ID_TYPE, primary_key=True, autoincrement=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("rounds.id"), index=True)
    user_id: Mapped[int]
    amount: Mapped[int]
    placed_at_ms: Mapped[int]


class BetRow(Base):
    """A live bet; ``position`` is the bet order (a changed bet keeps its place)."""

    __tablename__ = "bets"
    __table_args__ = (
        UniqueConstraint("round_id", "user_id", name="uq_bets_round_user"),
        CheckConstraint("amount > 0 AND hold >= amount", name="positive"),
    )
    id: Mapped[int] = mapped_column(ID_TYPE, primary_key=True, autoincrement=True)
    #: Looked up by the unique key on (round_id, user_id), which starts with it.
    round_id: Mapped[int] = mapped_column(ForeignKey("rounds.id"))
    user_id: Mapped[int]
    amount: Mapped[int]
    hold: Mapped[int]
    position: Mapped[int] = mapped_column(Integer)
    placed_at_ms: Mapped[int]
    #: Placed by the player's standing bet (``/autobet``); a bet they change is theirs.
    standing: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class GrabRow(Base):
    """An envelope share taken; ``position`` is the grab order."""

    __tablename__ = "grabs"
    __table_args__ = (
        UniqueConstraint("round_id", "user_id", name="uq_grabs_round_user"),
        UniqueConstraint("round_id", "position", name="uq_grabs_round_position"),
    )
    id: Mapped[int] = mapped_column(ID_TYPE, primary_key=True, autoincrement=True)
    #: Looked up by the unique key on (round_id, user_id), which starts with it.
    round_id: Mapped[int] = mapped_column(ForeignKey("rounds.id"))
    user_id: Mapped[int]
    amount: Mapped[int]
    position: Mapped[int] = mapped_column(Integer)
    auto: Mapped[bool] = mapped_column(Boolean, default=False)


class OutcomeRow(Base):
    """A participant's result in a settled round (the dealer's too, with role 'dealer')."""

    __tablename__ = "outcomes"
    __table_args__ = (
        UniqueConstraint("round_id", "user_id", name="uq_outcomes_round_user"),
        # The console: a player's rounds, newest first.
        Index("ix_outcomes_user_id_round_id", "user_id", "round_id"),
    )
    id: Mapped[int] = mapped_column(ID_TYPE, primary_key=True, autoincrement=True)
    #: Looked up by the unique key on (round_id, user_id), which starts with it.
    round_id: Mapped[int] = mapped_column(ForeignKey("rounds.id"))
    user_id: Mapped[int]
    role: Mapped[str] = mapped_column(String(8))
    stake: Mapped[int]
    envelope: Mapped[int]
    kind: Mapped[str] = mapped_column(String(16))
    points: Mapped[int] = mapped_column(Integer)
    multiplier: Mapped[int] = mapped_column(Integer)
    result: Mapped[str] = mapped_column(String(8))
    gross: Mapped[int]
    rake: Mapped[int]
    rebate: Mapped[int]
    net: Mapped[int]


class PlayerStats(Base):
    """A player's totals in a group over their settled rounds (as dealer or bettor).

    Kept by the database: a trigger on ``outcomes`` (migration 0010) adds each new outcome
    in the transaction that writes it. ``net`` is the sum of the outcomes' nets (what the
    ledger moved for the player in those rounds), ``won`` the rounds with a positive net,
    ``best_*`` the first hand that paid the most (its multiplier, dealt outcome and game).
    """

    __tablename__ = "player_stats"
    __table_args__ = (
        # /top: a group's best nets, read from the top and stopped after ten.
        Index("ix_player_stats_chat_id_net", "chat_id", "net", "user_id"),
    )
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id"), primary_key=True)
    user_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    rounds: Mapped[int]
    won: Mapped[int]
    net: Mapped[int]
    biggest_win: Mapped[int]
    best_multiplier: Mapped[int] = mapped_column(Integer)
    best_outcome: Mapped[int]
    best_ruleset: Mapped[str] = mapped_column(String(32))


class ProcessedUpdate(Base):
    """A Telegram update already applied; recorded in the transaction of its effect.

    Keyed by the bot (a token's numeric prefix) and the update id, and pruned after a
    window: Telegram restarts update ids after a week without updates, and another
    token may be pointed at the same database.
    """

    __tablename__ = "processed_updates"
    bot_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    update_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    processed_at_ms: Mapped[int] = mapped_column(index=True)


class AuditEntry(Base):
    """An admin action: who, what, and the old and new values."""

    __tablename__ = "audit_log"
    id: Mapped[int] = mapped_column(ID_TYPE, primary_key=True, autoincrement=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id"), index=True)
    actor_id: Mapped[int]
    action: Mapped[str] = mapped_column(String(32))
    details: Mapped[dict[str, Any]]
    created_at_ms: Mapped[int]


class ConsoleLinkUse(Base):
    """A console sign-in link already used: its nonce, so that a link signs in once, across
    restarts and workers. Kept until the link would have expired anyway."""

    __tablename__ = "console_link_uses"
    nonce: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int]
    used_at_ms: Mapped[int]
    expires_at_ms: Mapped[int] = mapped_column(index=True)


class ConsoleSessionRow(Base):
    """A console session signed in and not signed out: its cookie names it, and a cookie
    whose session is gone signs nobody in (signing out, an operator ending a user's
    sessions). Expired rows are deleted as sessions start."""

    __tablename__ = "console_sessions"
    session_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(index=True)
    started_at_ms: Mapped[int]
    expires_at_ms: Mapped[int] = mapped_column(index=True)


class AutobetRow(Base):
    """A player's standing bet in a group (``docs/rules.md`` §1: the bet stays in the box), placed
    for them as each round's betting opens. ``ruleset`` is the game it was set for (a
    table that changes game stops it); ``once`` is the results' "same again", for one
    round; ``last_round_id`` is the last round it was considered for, so that no round
    places it twice (a restart, a second worker)."""

    __tablename__ = "autobets"
    __table_args__ = (CheckConstraint("amount > 0", name="positive"),)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id"), primary_key=True)
    user_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    amount: Mapped[int]
    ruleset: Mapped[str] = mapped_column(String(32))
    once: Mapped[bool] = mapped_column(Boolean, default=False)
    set_at_ms: Mapped[int]
    last_round_id: Mapped[int | None]


#: The id of ``readiness_probe``'s one row.
READINESS_PROBE_ID = 1


class ReadinessProbe(Base):
    """One row that ``/readyz`` writes: a write the database must take for the bot to be
    ready (a trivial read passes on a full disk or a read-only server)."""

    __tablename__ = "readiness_probe"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    probed_at_ms: Mapped[int]


class KeptAnswer(Base):
    """An answer to a person in a group that waits for the group's share of Telegram's
    limit, kept until Telegram has it: whom it answers (the name as shown, HTML-escaped;
    empty for what is told the whole group), its text, the message it replies to (0:
    none). The worker sending it holds it until ``claimed_until_ms`` and renews that
    while it waits; once that passed (the worker died), another worker or the restarted
    one sends it. Per bot (``bot_id``): only the group's own bot speaks there."""

    __tablename__ = "kept_answers"
    id: Mapped[int] = mapped_column(ID_TYPE, primary_key=True, autoincrement=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    chat_id: Mapped[int] = mapped_column(BigInteger)
    name: Mapped[str] = mapped_column(String(400))
    text: Mapped[str]
    reply_to: Mapped[int] = mapped_column(BigInteger)
    created_at_ms: Mapped[int]
    claimed_until_ms: Mapped[int]
    __table_args__ = (Index("ix_kept_answers_claim", "bot_id", "claimed_until_ms"),)


class GroupSend(Base):
    """One of a group's slots in Telegram's limit on messages a bot sends it a minute
    (``GROUP_SENDS_PER_MINUTE`` slots a group): when it was last used. Every worker of a
    bot takes its slots here, so that however many workers there are, and across their
    restarts, a group gets no more than Telegram allows."""

    __tablename__ = "group_sends"
    bot_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    chat_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    slot: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    sent_at_ms: Mapped[int]

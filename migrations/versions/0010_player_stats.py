"""Each player's totals in each group (``/stats``, ``/top``), kept by the database itself,
and an index on a group's rounds by their end (``/top`` over the last days).

``player_stats`` has a row per group and user (the house, user 0, has none) with their
settled rounds, the rounds they came out ahead in, their net (the sum of their outcomes'
nets, which is what the ledger moved for them), their biggest win and the first hand that
paid the most. A trigger on ``outcomes`` adds every new outcome to its row, so every way
the bot writes a settled round (the SQLite writer, PostgreSQL's one statement, the unit of
work) keeps the totals without a line of Python, in the same transaction; reading them is
one row however long the history. The rows are filled from the outcomes already there.

On SQLite the trigger names ``rounds``: a later migration must alter ``rounds`` in place
(``op.add_column``), not with batch mode's copy of the table, whose renaming back to
``rounds`` the trigger refuses (as 0012 found).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 07:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = (
    "chat_id, user_id, rounds, won, net, biggest_win, best_multiplier, best_outcome, best_ruleset"
)
# Where the new outcome's totals are added to the old: a better hand replaces the best
# only if it pays more (the first of equal hands stays).
_SQLITE_TRIGGER = f"""
CREATE TRIGGER player_stats_after_outcome AFTER INSERT ON outcomes WHEN NEW.user_id <> 0
BEGIN
    INSERT INTO player_stats ({_COLUMNS})
    SELECT chat_id, NEW.user_id, 1, NEW.net > 0, NEW.net, max(NEW.net, 0), NEW.multiplier,
           NEW.envelope, ruleset
    FROM rounds WHERE id = NEW.round_id
    ON CONFLICT (chat_id, user_id) DO UPDATE SET
        rounds = rounds + 1,
        won = won + excluded.won,
        net = net + excluded.net,
        biggest_win = max(biggest_win, excluded.biggest_win),
        best_outcome = CASE WHEN excluded.best_multiplier > best_multiplier
                            THEN excluded.best_outcome ELSE best_outcome END,
        best_ruleset = CASE WHEN excluded.best_multiplier > best_multiplier
                            THEN excluded.best_ruleset ELSE best_ruleset END,
        best_multiplier = max(best_multiplier, excluded.best_multiplier);
END
"""
_POSTGRES_FUNCTION = f"""
CREATE FUNCTION player_stats_after_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO player_stats AS s ({_COLUMNS})
    SELECT r.chat_id, NEW.user_id, 1, CASE WHEN NEW.net > 0 THEN 1 ELSE 0 END, NEW.net,
           GREATEST(NEW.net, 0), NEW.multiplier, NEW.envelope, r.ruleset
    FROM rounds AS r WHERE r.id = NEW.round_id
    ON CONFLICT (chat_id, user_id) DO UPDATE SET
        rounds = s.rounds + 1,
        won = s.won + EXCLUDED.won,
        net = s.net + EXCLUDED.net,
        biggest_win = GREATEST(s.biggest_win, EXCLUDED.biggest_win),
        best_outcome = CASE WHEN EXCLUDED.best_multiplier > s.best_multiplier
                            THEN EXCLUDED.best_outcome ELSE s.best_outcome END,
        best_ruleset = CASE WHEN EXCLUDED.best_multiplier > s.best_multiplier
                            THEN EXCLUDED.best_ruleset ELSE s.best_ruleset END,
        best_multiplier = GREATEST(s.best_multiplier, EXCLUDED.best_multiplier);
    RETURN NULL;
END
$$
"""
_POSTGRES_TRIGGER = """
CREATE TRIGGER player_stats_after_outcome AFTER INSERT ON outcomes
FOR EACH ROW WHEN (NEW.user_id <> 0) EXECUTE FUNCTION player_stats_after_outcome()
"""
_FILL = f"""
INSERT INTO player_stats ({_COLUMNS})
SELECT r.chat_id, o.user_id, count(*), sum(CASE WHEN o.net > 0 THEN 1 ELSE 0 END),
       sum(o.net), max(CASE WHEN o.net > 0 THEN o.net ELSE 0 END), max(o.multiplier), 0, ''
FROM outcomes AS o JOIN rounds AS r ON r.id = o.round_id
WHERE o.user_id <> 0
GROUP BY r.chat_id, o.user_id
"""
_BEST = """
SELECT {column} FROM outcomes AS o JOIN rounds AS r ON r.id = o.round_id
WHERE r.chat_id = player_stats.chat_id AND o.user_id = player_stats.user_id
  AND o.multiplier = player_stats.best_multiplier
ORDER BY o.round_id LIMIT 1
"""


def upgrade() -> None:
    op.create_table(
        "player_stats",
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("rounds", sa.BigInteger(), nullable=False),
        sa.Column("won", sa.BigInteger(), nullable=False),
        sa.Column("net", sa.BigInteger(), nullable=False),
        sa.Column("biggest_win", sa.BigInteger(), nullable=False),
        sa.Column("best_multiplier", sa.Integer(), nullable=False),
        sa.Column("best_outcome", sa.BigInteger(), nullable=False),
        sa.Column("best_ruleset", sa.String(32), nullable=False),
        sa.ForeignKeyConstraint(["chat_id"], ["chats.id"], name="fk_player_stats_chat_id_chats"),
        sa.PrimaryKeyConstraint("chat_id", "user_id", name="pk_player_stats"),
    )
    op.create_index("ix_player_stats_chat_id_net", "player_stats", ["chat_id", "net", "user_id"])
    op.create_index("ix_rounds_chat_id_ended_at_ms", "rounds", ["chat_id", "ended_at_ms"])
    op.execute(_FILL)
    op.execute(
        "UPDATE player_stats SET best_outcome = ({}), best_ruleset = ({})".format(
            _BEST.format(column="o.envelope"), _BEST.format(column="r.ruleset")
        )
    )
    if op.get_bind().dialect.name == "sqlite":
        op.execute(_SQLITE_TRIGGER)
    else:
        op.execute(_POSTGRES_FUNCTION)
        op.execute(_POSTGRES_TRIGGER)


def downgrade() -> None:
    op.execute(
        "DROP TRIGGER IF EXISTS player_stats_after_outcome"
        + ("" if op.get_bind().dialect.name == "sqlite" else " ON outcomes")
    )
    if op.get_bind().dialect.name != "sqlite":
        op.execute("DROP FUNCTION IF EXISTS player_stats_after_outcome()")
    op.drop_index("ix_rounds_chat_id_ended_at_ms", table_name="rounds")
    op.drop_index("ix_player_stats_chat_id_net", table_name="player_stats")
    op.drop_table("player_stats")

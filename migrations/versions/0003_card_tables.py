"""Card tables: shoes dealt across rounds, and the group's bank as an account.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_KINDS = "kind IN ('available', 'held', 'house', 'mint')"
NEW_KINDS = "kind IN ('available', 'held', 'house', 'mint', 'bank')"


def upgrade() -> None:
    op.create_table(
        "shoes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("decks", sa.Integer(), nullable=False),
        sa.Column("seed", sa.LargeBinary(length=64), nullable=False),
        sa.Column("commitment", sa.String(length=64), nullable=False),
        sa.Column("dealt", sa.Integer(), nullable=False),
        sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("replaced_at_ms", sa.BigInteger(), nullable=True),
        sa.CheckConstraint("dealt >= 0 AND dealt <= decks * 52", name=op.f("ck_shoes_dealt")),
        sa.ForeignKeyConstraint(["chat_id"], ["chats.id"], name=op.f("fk_shoes_chat_id_chats")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_shoes")),
    )
    op.create_index(
        "uq_shoes_one_current_per_chat",
        "shoes",
        ["chat_id"],
        unique=True,
        sqlite_where=sa.text("replaced_at_ms IS NULL"),
        postgresql_where=sa.text("replaced_at_ms IS NULL"),
    )
    with op.batch_alter_table("rounds", schema=None) as batch_op:
        batch_op.add_column(sa.Column("shoe_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("deal_offset", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_rounds_shoe_id_shoes"), "shoes", ["shoe_id"], ["id"]
        )
    with op.batch_alter_table("accounts", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("ck_accounts_kind"), type_="check")
        batch_op.create_check_constraint(batch_op.f("ck_accounts_kind"), sa.text(NEW_KINDS))


def downgrade() -> None:
    with op.batch_alter_table("accounts", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("ck_accounts_kind"), type_="check")
        batch_op.create_check_constraint(batch_op.f("ck_accounts_kind"), sa.text(OLD_KINDS))
    with op.batch_alter_table("rounds", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_rounds_shoe_id_shoes"), type_="foreignkey")
        batch_op.drop_column("deal_offset")
        batch_op.drop_column("shoe_id")
    op.drop_index("uq_shoes_one_current_per_chat", table_name="shoes")
    op.drop_table("shoes")

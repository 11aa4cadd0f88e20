"""Row ids are BIGINT on PostgreSQL (SQLite's INTEGER PRIMARY KEY is already 64-bit).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 12:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Tables whose ``id`` is a SERIAL (INTEGER) before this revision.
TABLES = (
    "accounts",
    "ledger_transactions",
    "postings",
    "rounds",
    "shoes",
    "bids",
    "bets",
    "grabs",
    "outcomes",
    "audit_log",
)
#: Columns that refer to those ids and were INTEGER too: (table, column, nullable).
REFERENCES = (
    ("bets", "round_id", False),
    ("bids", "round_id", False),
    ("grabs", "round_id", False),
    ("ledger_transactions", "round_id", True),
    ("outcomes", "round_id", False),
    ("postings", "transaction_id", False),
    ("postings", "account_id", False),
    ("rounds", "shoe_id", True),
)


def _retype(new: type[sa.types.TypeEngine[int]], sequence_type: str) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in TABLES:
        op.alter_column(table, "id", type_=new(), existing_nullable=False)
        op.execute(f"ALTER SEQUENCE {table}_id_seq AS {sequence_type}")
    for table, column, nullable in REFERENCES:
        op.alter_column(table, column, type_=new(), existing_nullable=nullable)


def upgrade() -> None:
    _retype(sa.BigInteger, "bigint")


def downgrade() -> None:
    _retype(sa.Integer, "integer")

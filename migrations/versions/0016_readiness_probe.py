"""A one-row table for ``/readyz`` to write to: a trivial read passes while the database
refuses writes (SQLite's disk full, PostgreSQL read-only or in recovery), an update of
this row does not (the probe writes the row if it is missing).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "readiness_probe",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("probed_at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_readiness_probe")),
    )


def downgrade() -> None:
    op.drop_table("readiness_probe")

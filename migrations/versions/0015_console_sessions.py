"""Console sessions kept on the server (``console_sessions``): a session cookie signs in
only while its row exists, so signing out ends it for every copy of the cookie, and an
operator can end every session of a user.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-01 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "console_sessions",
        sa.Column("session_id", sa.String(32), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("started_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("expires_at_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("session_id", name="pk_console_sessions"),
    )
    op.create_index("ix_console_sessions_user_id", "console_sessions", ["user_id"])
    op.create_index("ix_console_sessions_expires_at_ms", "console_sessions", ["expires_at_ms"])


def downgrade() -> None:
    op.drop_index("ix_console_sessions_expires_at_ms", table_name="console_sessions")
    op.drop_index("ix_console_sessions_user_id", table_name="console_sessions")
    op.drop_table("console_sessions")

"""A round's game as a column of its own, indexed with the id: the console lists the
rounds of one game newest first without reading the settings (JSON) of every round.

The column is filled from each round's settings; the game's old name (``red_envelope``)
becomes the current one, as ``Settings.from_dict`` reads it.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("rounds", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("ruleset", sa.String(32), nullable=False, server_default="envelope68")
        )
    stored = (
        "json_extract(settings, '$.ruleset')"
        if op.get_bind().dialect.name == "sqlite"
        else "(settings ->> 'ruleset')"
    )
    op.execute(
        f"UPDATE rounds SET ruleset = CASE WHEN {stored} = 'red_envelope' THEN 'envelope68' "
        f"ELSE {stored} END WHERE {stored} IS NOT NULL AND {stored} <> 'envelope68'"
    )
    op.create_index("ix_rounds_ruleset_id", "rounds", ["ruleset", "id"])


def downgrade() -> None:
    op.drop_index("ix_rounds_ruleset_id", table_name="rounds")
    with op.batch_alter_table("rounds", schema=None) as batch_op:
        batch_op.drop_column("ruleset")

"""failed charges

Revision ID: 0006
Revises: 0011
Owner while being written: billing (issue 18).

`failed_charges`: a charge the recorder could not write even alone (the batch writer
isolates it and keeps charging everyone else), with the reason, for an operator to settle.
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "failed_charges",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("request_id", sa.String(64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("token_id", sa.Integer(), nullable=True),
        sa.Column("cost", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("failed_at", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_failed_charges_failed", "failed_charges", ["failed_at"])


def downgrade() -> None:
    op.drop_index("ix_failed_charges_failed", table_name="failed_charges")
    op.drop_table("failed_charges")

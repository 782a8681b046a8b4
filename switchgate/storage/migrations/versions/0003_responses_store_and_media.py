"""responses store and media

Revision ID: 0003
Revises: 0002
Owner while being written: the OpenAI surface helper.
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "responses",
        sa.Column("id", sa.String(length=100), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("passthrough", sa.Boolean(), nullable=False),
        sa.Column("response", sa.Text(), nullable=False),
        sa.Column("conversation", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_responses_user_created", "responses", ["user_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_responses_user_created", table_name="responses")
    op.drop_table("responses")

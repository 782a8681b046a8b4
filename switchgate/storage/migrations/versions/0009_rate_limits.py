"""rate limits: tokens per minute per token, requests and tokens per minute per user

Revision ID: 0009
Revises: 0007

Expand only (docs/deploy.md): three nullable columns; NULL means no limit.
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tokens") as batch:
        batch.add_column(sa.Column("tpm_limit", sa.Integer(), nullable=True))
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("rpm_limit", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("tpm_limit", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("tpm_limit")
        batch.drop_column("rpm_limit")
    with op.batch_alter_table("tokens") as batch:
        batch.drop_column("tpm_limit")

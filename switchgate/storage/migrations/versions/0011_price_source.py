"""price source

Revision ID: 0011
Revises: 0004

`prices.source`: where a price came from. NULL is the operator's own price (CLI, config
file, console); `catalogue:<date>` marks one imported from the shipped model catalogue,
which a later import may refresh but which never replaces an operator's price.
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("prices") as batch:
        batch.add_column(sa.Column("source", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("prices") as batch:
        batch.drop_column("source")

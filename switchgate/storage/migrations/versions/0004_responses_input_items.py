"""responses input items

Revision ID: 0004
Revises: 0003
Owner while being written: the Responses input items helper.

`responses.input_items`: the input items of a stored response as
`GET /v1/responses/{id}/input_items` lists them (JSON, each item with an `id`). Nullable:
rows written before this revision have none, and the store derives them from
`conversation` when listed.
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.add_column(sa.Column("input_items", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.drop_column("input_items")

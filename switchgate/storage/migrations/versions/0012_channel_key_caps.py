"""per-key concurrency and requests-per-minute caps

Revision ID: 0012
Revises: 0005
Owner while being written: keys (issue 14).

`channel_keys.max_concurrency` (calls in flight on the key at once) and
`channel_keys.rpm` (sends in any 60 s); NULL means no cap (routing/key_caps.py).
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("channel_keys") as batch:
        batch.add_column(sa.Column("max_concurrency", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("rpm", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("channel_keys") as batch:
        batch.drop_column("rpm")
        batch.drop_column("max_concurrency")

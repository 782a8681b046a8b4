"""channel keys

Revision ID: 0005
Revises: 0008
Owner while being written: routing (issue 14).

`channel_keys`: every API key of a channel (a channel may hold many, used in turn by
weight), each with its own status; a key the upstream refused with 401/403 is disabled
with the reason and the time, and shown to the operator. Existing channels get their one
key copied in as position 0. `channels.api_key_enc` stays (the first key) for older
readers.
"""

import time

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "channel_keys",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "channel_id",
            sa.Integer(),
            sa.ForeignKey("channels.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("key_enc", sa.Text(), nullable=False),
        sa.Column("weight", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("status", sa.String(length=16), nullable=False, server_default="enabled"),
        sa.Column("disabled_reason", sa.Text(), nullable=True),
        sa.Column("disabled_at", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.UniqueConstraint("channel_id", "position", name="uq_channel_keys_position"),
    )
    now = int(time.time() * 1000)
    op.execute(
        sa.text(
            "INSERT INTO channel_keys (channel_id, position, key_enc, weight, status, created_at)"
            " SELECT id, 0, api_key_enc, 1, 'enabled', :now FROM channels"
        ).bindparams(now=now)
    )


def downgrade() -> None:
    op.drop_table("channel_keys")

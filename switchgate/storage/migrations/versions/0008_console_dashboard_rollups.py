"""console dashboard rollups

Revision ID: 0008
Revises: 0009
Owner while being written: the console (issue 19).

Hourly summaries of the request log for the admin dashboard (`usage_hourly`,
`latency_hourly`, and `rollup_hours`: which hours are summarised); for the request detail
view (`GET /api/logs/{request_id}`), an index on `request_logs.request_id` and the column
`request_logs.upstream_attempts` (requests sent upstream, failovers and retries included;
0 for rows written before).
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "usage_hourly",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("hour", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("requests", sa.Integer(), nullable=False),
        sa.Column("errors", sa.Integer(), nullable=False),
        sa.Column("stopped", sa.Integer(), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cost", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_usage_hourly_hour", "usage_hourly", ["hour"])
    op.create_table(
        "latency_hourly",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("hour", sa.BigInteger(), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("channel_id", sa.Integer(), nullable=False),
        sa.Column("metric", sa.String(8), nullable=False),
        sa.Column("bucket", sa.Integer(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
    )
    op.create_index("ix_latency_hourly_hour", "latency_hourly", ["hour"])
    op.create_table(
        "rollup_hours",
        sa.Column("hour", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("rolled_at", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_logs_request_id", "request_logs", ["request_id"])
    with op.batch_alter_table("request_logs") as batch:
        batch.add_column(
            sa.Column("upstream_attempts", sa.SmallInteger(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("request_logs") as batch:
        batch.drop_column("upstream_attempts")
    op.drop_index("ix_logs_request_id", table_name="request_logs")
    op.drop_table("rollup_hours")
    op.drop_index("ix_latency_hourly_hour", table_name="latency_hourly")
    op.drop_table("latency_hourly")
    op.drop_index("ix_usage_hourly_hour", table_name="usage_hourly")
    op.drop_table("usage_hourly")

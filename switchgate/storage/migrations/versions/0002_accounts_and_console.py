"""accounts and console

Revision ID: 0002
Revises: 0001
Owner while being written: the console helper.
"""


revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass

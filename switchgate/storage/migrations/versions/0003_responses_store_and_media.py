"""responses store and media

Revision ID: 0003
Revises: 0002
Owner while being written: the OpenAI surface helper.
"""


revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass

"""The audit log of admin actions (see actions.py)."""

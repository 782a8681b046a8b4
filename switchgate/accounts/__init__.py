"""Users, passwords and API tokens."""

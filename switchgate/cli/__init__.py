"""The operator CLI: `switchgate ...` (also `python -m switchgate`)."""

"""Requests-per-minute limits per token."""

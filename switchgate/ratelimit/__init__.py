"""Requests and tokens per minute, per token and per user (docs/scaling.md)."""

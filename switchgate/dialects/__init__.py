"""Inbound dialects: each client wire format <-> canonical model (pure, no I/O)."""

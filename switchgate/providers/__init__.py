"""Outbound adapters: canonical model <-> each upstream provider's wire format (pure, no I/O)."""

"""Metrics (Prometheus text format)."""

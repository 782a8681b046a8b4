"""Test helpers shipped with switchgate (the fake upstream used by tests and benchmarks)."""

from .mock_upstream import MockConfig, MockUpstream, create_app, run, start_mock_upstream

__all__ = ["MockConfig", "MockUpstream", "create_app", "run", "start_mock_upstream"]

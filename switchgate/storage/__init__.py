"""Persistence: tables, the async engine, migrations."""

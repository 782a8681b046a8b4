"""Prices, holds, settlement and the ledger: exact integer money."""

"""API token generation and hashing. Tokens are shown once and stored as SHA-256."""

import hashlib
import secrets
from typing import Final

TOKEN_PREFIX: Final = "sk-"
VISIBLE_PREFIX_LENGTH: Final = 7  # "sk-" + 4 characters, shown in lists


def generate_token() -> str:
    """A new token: "sk-" followed by 48 URL-safe random characters (288 bits)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(36)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def visible_prefix(token: str) -> str:
    return token[:VISIBLE_PREFIX_LENGTH]

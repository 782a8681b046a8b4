"""Encrypts upstream keys at rest (AES-256-GCM).

The key comes from SWITCHGATE_SECRET_KEY (base64 of 32 bytes) or, failing that, from
`<data_dir>/secret.key`, created on first use with mode 0600. Every process that
shares a database must share this key.

While a key is being rotated (docs/deploy.md), SWITCHGATE_SECRET_KEY_PREVIOUS lists the
old key(s), comma-separated: values are always encrypted with the current key and
decrypted with whichever key sealed them; `switchgate secret-key rotate` re-encrypts
everything stored with the current one (storage/rotate_secrets.py).
"""

import base64
import os
import secrets
from collections.abc import Sequence
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

_PREFIX = "v1:"


def _key(encoded: str) -> bytes:
    key = base64.b64decode(encoded)
    if len(key) != 32:
        raise ValueError("the secret key must be 32 bytes (base64-encoded)")
    return key


def new_key() -> str:
    return base64.b64encode(secrets.token_bytes(32)).decode()


class SecretBox:
    def __init__(self, key: bytes, previous: Sequence[bytes] = ()) -> None:
        if len(key) != 32 or any(len(k) != 32 for k in previous):
            raise ValueError("the secret key must be 32 bytes (base64-encoded)")
        self._aead = AESGCM(key)
        self._previous = [AESGCM(k) for k in previous if k != key]

    @classmethod
    def load(
        cls, configured: str | None, data_dir: Path, previous: Sequence[str] = ()
    ) -> "SecretBox":
        old = [_key(p) for p in previous]
        if configured:
            return cls(_key(configured), old)
        path = data_dir / "secret.key"
        if not path.exists():
            data_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(new_key())
        return cls(_key(path.read_text().strip()), old)

    def encrypt(self, plain: str) -> str:
        nonce = secrets.token_bytes(12)
        sealed = self._aead.encrypt(nonce, plain.encode(), None)
        return _PREFIX + base64.b64encode(nonce + sealed).decode()

    def decrypt(self, token: str) -> str:
        if not token.startswith(_PREFIX):
            raise ValueError("unknown secret format")
        raw = base64.b64decode(token[len(_PREFIX) :])
        try:
            return self._aead.decrypt(raw[:12], raw[12:], None).decode()
        except InvalidTag:
            for aead in self._previous:
                try:
                    return aead.decrypt(raw[:12], raw[12:], None).decode()
                except InvalidTag:
                    continue
            raise

    def is_current(self, token: str) -> bool:
        """Whether `token` was sealed with the current key."""
        raw = base64.b64decode(token[len(_PREFIX) :])
        try:
            self._aead.decrypt(raw[:12], raw[12:], None)
        except InvalidTag:
            return False
        return True

"""Encrypts upstream keys at rest (AES-256-GCM).

The key comes from SWITCHGATE_SECRET_KEY (base64 of 32 bytes) or, failing that, from
`<data_dir>/secret.key`, created on first use with mode 0600. Every process that
shares a database must share this key.
"""

import base64
import os
import secrets
from pathlib import Path

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

_PREFIX = "v1:"


class SecretBox:
    def __init__(self, key: bytes) -> None:
        if len(key) != 32:
            raise ValueError("the secret key must be 32 bytes (base64-encoded)")
        self._aead = AESGCM(key)

    @classmethod
    def load(cls, configured: str | None, data_dir: Path) -> "SecretBox":
        if configured:
            return cls(base64.b64decode(configured))
        path = data_dir / "secret.key"
        if not path.exists():
            data_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(base64.b64encode(secrets.token_bytes(32)).decode())
        return cls(base64.b64decode(path.read_text().strip()))

    def encrypt(self, plain: str) -> str:
        nonce = secrets.token_bytes(12)
        sealed = self._aead.encrypt(nonce, plain.encode(), None)
        return _PREFIX + base64.b64encode(nonce + sealed).decode()

    def decrypt(self, token: str) -> str:
        if not token.startswith(_PREFIX):
            raise ValueError("unknown secret format")
        raw = base64.b64decode(token[len(_PREFIX) :])
        return self._aead.decrypt(raw[:12], raw[12:], None).decode()

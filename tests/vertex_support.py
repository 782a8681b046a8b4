"""Service-account keys for the vertex tests: a fresh RSA key pair per account (made with
`cryptography`), the JSON key file google-auth reads (its `token_uri` pointing at the fake
token endpoint), and its registration with the fake (switchgate/testing/mock_upstream/
google_token.py) the way a Google project knows its service accounts' public keys."""

import json
import secrets
import urllib.request
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa


@dataclass(frozen=True)
class ServiceAccountKey:
    info: dict[str, Any]  # the JSON key file
    public_pem: str

    @property
    def key(self) -> str:
        """The channel key: the JSON key file as text."""
        return json.dumps(self.info)

    @property
    def email(self) -> str:
        return str(self.info["client_email"])

    def registration(self, token_ttl: int = 3600) -> dict[str, Any]:
        return {
            "client_email": self.email,
            "private_key_id": self.info["private_key_id"],
            "public_key": self.public_pem,
            "project_id": self.info["project_id"],
            "token_ttl": token_ttl,
        }


def make_service_account(
    mock_url: str, project: str = "test-project", name: str | None = None
) -> ServiceAccountKey:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public_pem = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    account = name or f"gateway-{secrets.token_hex(3)}"
    info = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": secrets.token_hex(20),
        "private_key": private_pem,
        "client_email": f"{account}@{project}.iam.gserviceaccount.com",
        "client_id": str(secrets.randbelow(10**20)),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": f"{mock_url}/token",
        "universe_domain": "googleapis.com",
    }
    return ServiceAccountKey(info, public_pem)


def _post(url: str, payload: dict[str, Any] | None = None) -> Any:
    data = json.dumps(payload or {}).encode()
    request = urllib.request.Request(
        url, data=data, method="POST", headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def register(mock_url: str, account: ServiceAccountKey, token_ttl: int = 3600) -> None:
    _post(f"{mock_url}/_mock/google/service-accounts", account.registration(token_ttl))


def tokens_issued(mock_url: str, account: ServiceAccountKey) -> int:
    with urllib.request.urlopen(f"{mock_url}/_mock/google/service-accounts", timeout=10) as r:
        rows = json.loads(r.read())
    return next(int(row["tokens_issued"]) for row in rows if row["client_email"] == account.email)


def expire_tokens(mock_url: str) -> None:
    _post(f"{mock_url}/_mock/google/expire-tokens")

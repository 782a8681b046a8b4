"""CSRF tokens. A signed-in session has its own token (sent as the X-CSRF-Token header by
the console's scripts and as a hidden field by its forms); forms shown before sign-in use a
double-submit cookie. Cookies are SameSite=Lax as well."""

import hmac
import secrets
from typing import Final

PRE_COOKIE: Final = "sg_csrf"  # the double-submit cookie for signed-out forms
HEADER: Final = "x-csrf-token"
FIELD: Final = "csrf"


def new_token() -> str:
    return secrets.token_urlsafe(32)


def matches(expected: str | None, given: str | None) -> bool:
    if not expected or not given:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())

"""Who may call what: token checks, IP and model allowlists, the model catalogue."""

import ipaddress
import time

from switchgate.accounts.auth import Principal
from switchgate.billing.pricing import Price, charges_nothing
from switchgate.billing.token_spend import TokenSpend
from switchgate.catalog import Catalog
from switchgate.errors import ErrorKind, GatewayError


def require_token(token: str | None) -> str:
    if not token:
        raise GatewayError(
            ErrorKind.AUTHENTICATION,
            "Missing API key. Send it as 'Authorization: Bearer sk-...'.",
            code="invalid_api_key",
        )
    if token != token.strip():
        raise GatewayError(
            ErrorKind.AUTHENTICATION,
            "Invalid API key: it has leading or trailing whitespace.",
            code="invalid_api_key",
        )
    return token


def check_principal(
    principal: Principal | None, client_ip: str | None, spend: TokenSpend
) -> Principal:
    if principal is None or not principal.active:
        raise GatewayError(
            ErrorKind.AUTHENTICATION,
            "Invalid API key, or the key was revoked.",
            code="invalid_api_key",
        )
    if principal.expires_at is not None and principal.expires_at <= time.time() * 1000:
        raise GatewayError(
            ErrorKind.AUTHENTICATION, "This API key has expired.", code="token_expired"
        )
    if principal.allowed_networks is not None:
        try:
            address = ipaddress.ip_address(client_ip or "")
        except ValueError:
            address = None
        if address is None or not any(address in net for net in principal.allowed_networks):
            raise GatewayError(
                ErrorKind.PERMISSION,
                f"This API key may not be used from {client_ip or 'an unknown address'}.",
                code="ip_not_allowed",
            )
    if (
        principal.quota_limit is not None
        and principal.quota_used + spend.since(principal.token_id, principal.spend_mark)
        >= principal.quota_limit
    ):
        raise GatewayError(
            ErrorKind.INSUFFICIENT_BALANCE,
            "This API key has reached its spending limit.",
            code="token_quota_exceeded",
        )
    return principal


def check_model(principal: Principal, model: str, catalog: Catalog) -> None:
    if principal.allowed_models is not None and model not in principal.allowed_models:
        raise GatewayError(
            ErrorKind.PERMISSION,
            f"This API key may not use the model '{model}'.",
            param="model",
            code="model_not_allowed",
        )
    if not catalog.is_served(model):
        raise GatewayError(
            ErrorKind.NOT_FOUND,
            f"The model '{model}' does not exist or you do not have access to it.",
            param="model",
            code="model_not_found",
        )


def price_of(model: str, catalog: Catalog) -> Price:
    """The served model's price; a price with nothing above zero (e.g. an image model whose
    per-image price was never set) is refused as unpriced rather than served for free."""
    price = catalog.prices[model]
    if charges_nothing(price):
        raise GatewayError(
            ErrorKind.NOT_FOUND,
            f"The model '{model}' has no price for this kind of request yet; "
            "an admin sets it under Models in the console.",
            param="model",
            code="model_not_priced",
        )
    return price


def may_use(principal: Principal, model: str) -> bool:
    return principal.allowed_models is None or model in principal.allowed_models

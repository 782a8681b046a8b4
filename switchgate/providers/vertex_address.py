"""Vertex AI addresses (pure): which publisher serves a model, the regional host, the
project and location of a channel, and the method URLs.

    {root}/v1/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method}

Publisher rule: a model whose name starts with `claude-` (after any
`publishers/anthropic/models/` prefix) is Anthropic's, served through `rawPredict` /
`streamRawPredict`; every other model is Google's (`generateContent`,
`streamGenerateContent?alt=sse`, `predict`). The channel option `publisher` ("google" or
"anthropic") overrides the rule for every model of the channel, and a model named
`publishers/{publisher}/models/{id}` names its publisher itself.

Host: Google's own hosts (`aiplatform.googleapis.com`, `{region}-aiplatform.googleapis.com`,
`aiplatform.{us|eu}.rep.googleapis.com`) are replaced by the location's host:
`https://aiplatform.googleapis.com` for `global`, `https://aiplatform.{us|eu}.rep.googleapis.com`
for the `us` / `eu` multi-regions, else `https://{location}-aiplatform.googleapis.com`.
Any other base URL (a proxy, a Private Service Connect endpoint, a test double) is used as
it is.
"""

import re
from typing import Final, Literal
from urllib.parse import quote

from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target
from switchgate.providers.vertex_auth import parse_service_account

Publisher = Literal["google", "anthropic"]

DEFAULT_BASE_URL: Final = "https://aiplatform.googleapis.com"
DEFAULT_LOCATION: Final = "us-central1"
PUBLISHERS: Final[tuple[Publisher, ...]] = ("google", "anthropic")
_GOOGLE_HOST: Final = re.compile(
    r"^https://(?:[a-z0-9-]+-)?aiplatform(?:\.(?:us|eu)\.rep)?\.googleapis\.com(?:/.*)?$"
)
_VERSION_SUFFIX: Final = re.compile(r"/v1(?:beta1)?$")
_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9-]*$")  # project ids and locations
_QUALIFIED: Final = re.compile(r"^publishers/([a-z0-9-]+)/models/(.+)$")


def _config_error(message: str) -> GatewayError:
    return GatewayError(ErrorKind.UPSTREAM_ERROR, f"vertex channel: {message}")


def split_model(target: Target) -> tuple[Publisher, str]:
    """(publisher, bare model id) for the target's upstream model."""
    model = target.upstream_model
    named: str | None = None
    qualified = _QUALIFIED.match(model)
    if qualified:
        named, model = qualified.group(1), qualified.group(2)
    chosen = target.options.get("publisher") or named
    if chosen is None:
        return ("anthropic" if model.startswith("claude-") else "google"), model
    if chosen not in PUBLISHERS:
        raise _config_error(f"publisher {str(chosen)[:40]!r} is not one of google, anthropic")
    return chosen, model


def location(target: Target) -> str:
    value = target.options.get("location") or DEFAULT_LOCATION
    if not isinstance(value, str) or not _NAME.match(value):
        raise _config_error(f"location {str(value)[:40]!r} is not a Vertex AI location")
    return value


def project(target: Target) -> str:
    """The channel option `project`, else the service-account key's `project_id`."""
    value = target.options.get("project")
    if not value:
        account = parse_service_account(target.api_key)
        value = account.project_id if account is not None else None
    if not value:
        raise _config_error(
            "no project: set the channel option project (the key has no project_id)"
        )
    if not isinstance(value, str) or not _NAME.match(value):
        raise _config_error(f"project {str(value)[:40]!r} is not a project id")
    return value


def api_root(target: Target) -> str:
    """`{host}/v1` for the target's location (see the module docstring)."""
    base = _VERSION_SUFFIX.sub("", (target.base_url or DEFAULT_BASE_URL).rstrip("/"))
    if not base or _GOOGLE_HOST.match(base):
        where = location(target)
        if where == "global":
            base = DEFAULT_BASE_URL
        elif where in ("us", "eu"):
            base = f"https://aiplatform.{where}.rep.googleapis.com"
        else:
            base = f"https://{where}-aiplatform.googleapis.com"
    return base + "/v1"


def method_url(target: Target, publisher: Publisher, model: str, method: str) -> str:
    name = quote(model, safe="-._~@")
    path = (
        f"/projects/{project(target)}/locations/{location(target)}"
        f"/publishers/{publisher}/models/{name}:{method}"
    )
    return api_root(target) + path + ("?alt=sse" if method == "streamGenerateContent" else "")


def bearer_headers(target: Target) -> dict[str, str]:
    """content-type and the channel's headers, which must by now hold the access token
    (VertexProvider.authorize): the channel key (a private key) is never sent."""
    headers = {"content-type": "application/json", **target.extra_headers}
    if not any(name.lower() == "authorization" for name in headers):
        raise GatewayError(
            ErrorKind.INTERNAL, "vertex: the request has no access token (not authorized)"
        )
    return headers

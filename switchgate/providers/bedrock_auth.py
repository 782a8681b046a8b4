"""Where a Bedrock request goes and how it is authenticated (pure; botocore does the
signing and is imported only when a SigV4 channel first signs a request).

Channel settings:
- base URL: `https://bedrock-runtime.<region>.amazonaws.com` (or a VPC endpoint / proxy);
- key: `ACCESS_KEY_ID:SECRET_ACCESS_KEY` or `ACCESS_KEY_ID:SECRET_ACCESS_KEY:SESSION_TOKEN`
  (an IAM user's or role's credentials: requests are signed with SigV4, service
  `bedrock`), or a Bedrock API key (no colon: sent as `Authorization: Bearer KEY`);
- options (`channels.extra`): `region` (else parsed from the base URL).
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote, urlsplit

from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target

SERVICE: Final = "bedrock"  # SigV4 signing name of bedrock-runtime
DEFAULT_BASE_URL: Final = "https://bedrock-runtime.us-east-1.amazonaws.com"
JSON_TYPE: Final = "application/json"
EVENT_STREAM_TYPE: Final = "application/vnd.amazon.eventstream"
# bedrock-runtime.<region>.amazonaws.com, -fips, VPC endpoints (...vpce.amazonaws.com), China
_REGION_HOST: Final = re.compile(
    r"bedrock-runtime(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-\d+)\.(?:vpce\.)?amazonaws\.com(?:\.cn)?",
    re.IGNORECASE,
)
_REGION: Final = re.compile(r"^[a-z]{2}(?:-[a-z]+)+-\d+$")


@dataclass(frozen=True, slots=True)
class AwsKeys:
    access_key: str
    secret_key: str
    token: str | None = None


def _config_error(message: str) -> GatewayError:
    # The channel is misconfigured: fail over to the next one (never echo the key).
    return GatewayError(ErrorKind.UPSTREAM_ERROR, f"bedrock channel: {message}")


def parse_key(key: str) -> AwsKeys | None:
    """SigV4 credentials from `ACCESS_KEY_ID:SECRET[:SESSION_TOKEN]`; None for an API key
    (no colon). Neither an access key id, a secret nor a session token has a colon."""
    key = key.strip()
    if ":" not in key:
        return None
    parts = key.split(":")
    if len(parts) not in (2, 3) or not all(parts):
        raise _config_error(
            "the key must be ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN] or a Bedrock API key"
        )
    return AwsKeys(parts[0], parts[1], parts[2] if len(parts) == 3 else None)


def region_of(target: Target) -> str:
    """The channel's `region` option, else the region in a bedrock-runtime host name."""
    option = target.options.get("region")
    if isinstance(option, str) and option.strip():
        region = option.strip().lower()
        if not _REGION.match(region):
            raise _config_error(f"region {option!r} is not an AWS region name")
        return region
    found = _REGION_HOST.search(target.base_url)
    if found is None:
        raise _config_error(
            "no region: set the channel option `region` or use a "
            "bedrock-runtime.<region>.amazonaws.com base URL"
        )
    return found.group(1).lower()


def model_url(target: Target, operation: str) -> str:
    """`{base}/model/{modelId}/{operation}`; the model id (an ARN may hold `:` and `/`)
    is one percent-encoded path segment, as the AWS SDKs send it."""
    base = target.base_url.rstrip("/")
    return f"{base}/model/{quote(target.upstream_model, safe='')}/{operation}"


def signed_headers(
    method: str, url: str, body: bytes, target: Target, accept: str = JSON_TYPE
) -> dict[str, str]:
    """The request headers with the channel's authentication: SigV4 (`Authorization`,
    `X-Amz-Date`, `X-Amz-Security-Token`) over method, path, host, headers and body, or
    the API key as a bearer token. The channel's extra headers are signed too."""
    headers: dict[str, str] = {"content-type": JSON_TYPE, "accept": accept}
    headers.update(target.extra_headers)
    keys = parse_key(target.api_key)
    if keys is None:
        if not target.api_key.strip():
            raise _config_error("no key")
        headers["authorization"] = "Bearer " + target.api_key.strip()
        return headers
    return sign_v4(method, url, body, headers, keys, region_of(target))


def sign_v4(
    method: str,
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    keys: AwsKeys,
    region: str,
) -> dict[str, str]:
    """`headers` plus the SigV4 ones, computed by botocore for service `bedrock`. The
    signed `host` is the URL's host as written (port included), which is what the HTTP
    client sends; it is left out of the returned headers (the client adds it)."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    signed = {**headers, "host": urlsplit(url).netloc.rpartition("@")[2]}
    request = AWSRequest(method=method, url=url, data=body, headers=signed)
    credentials = Credentials(keys.access_key, keys.secret_key, keys.token)
    SigV4Auth(credentials, SERVICE, region).add_auth(request)
    return {str(name): str(value) for name, value in request.headers.items() if name != "host"}

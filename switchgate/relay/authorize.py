"""Credentials fetched before a call, for the kinds that need them (an Authorizer in
providers/capabilities.py, e.g. an OAuth access token minted from a service account).
Every path that sends to a channel (the attempt pipeline, probe, token counting, the
Realtime bridge) completes its Target here after `target_for` and before building."""

from collections.abc import Mapping

from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target
from switchgate.providers.registry import ProviderKind


async def authorized(kinds: Mapping[str, ProviderKind], kind: str, target: Target) -> Target:
    """`target` as the kind's Authorizer completes it (unchanged for kinds without one).
    Raises GatewayError: the channel's failure (the caller fails over), whatever the
    adapter raised."""
    spec = kinds.get(kind)
    authorizer = spec.authorizer() if spec is not None else None
    if authorizer is None:
        return target
    try:
        return await authorizer.authorize(target)
    except GatewayError:
        raise
    except Exception as exc:  # an adapter's own failure is the channel's, not the call's
        raise GatewayError(
            ErrorKind.UPSTREAM_ERROR,
            f"Could not get the channel's credentials ({type(exc).__name__}).",
        ) from exc

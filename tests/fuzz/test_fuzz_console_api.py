"""Schemathesis on the management API's own OpenAPI document: every operation, with
bodies, paths and queries generated from the schema (and beyond it), sent with an
admin's token to a gateway of this module's own: no 5xx, ever.

Three operations that reach out of the machine are left out (a channel's test and a
channel key's test call the channel's upstream, test mail connects to the SMTP host):
fuzzed addresses must not become traffic. Budget: SWITCHGATE_FUZZ_API_EXAMPLES (default 3
per operation, about twenty seconds); docs/security.md gives the longer run."""

import os
from collections.abc import Iterator

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from switchgate.console.api import openapi
from switchgate.console.app import API_ROUTES
from tests.conftest import Gateway, _start_gateway
from tests.support import Process

EXAMPLES = int(os.environ.get("SWITCHGATE_FUZZ_API_EXAMPLES", "3"))
SESSION = requests.Session()  # one keep-alive connection for every call

schema = (
    schemathesis.openapi.from_dict(openapi.build(API_ROUTES))
    .exclude(path_regex=r"/api/channels/\{id\}/test$")
    .exclude(path_regex=r"/api/channels/\{id\}/keys/\{position\}/test$")
    .exclude(path="/api/settings/test-mail")
)


@pytest.fixture(scope="module")
def fuzz_gateway(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process
) -> Iterator[tuple[Gateway, str]]:
    gateway = _start_gateway(tmp_path_factory, mock_upstream, None)
    _, admin_token = gateway.new_user(admin=True)
    gateway.new_user()  # someone to find under /api/users/{id}
    yield gateway, admin_token
    gateway.process.stop()


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=os.environ.get("SWITCHGATE_FUZZ_RANDOM") != "1",
)
def test_no_operation_answers_5xx(
    case: schemathesis.Case, fuzz_gateway: tuple[Gateway, str]
) -> None:
    gateway, token = fuzz_gateway
    response = case.call(
        base_url=gateway.url,
        session=SESSION,
        headers={"authorization": f"Bearer {token}"},
        timeout=30,
    )
    case.validate_response(response, checks=[not_a_server_error])

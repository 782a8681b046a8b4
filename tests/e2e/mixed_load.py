"""A mixed load of known composition, sent with the official SDKs, and the helpers that
read a /metrics scrape. Shared by the metrics test (tests/e2e/test_metrics.py) and the
admin dashboard's browser test (tests/e2e/test_console_ui.py): both check what they show
against the same composition.

The load, against the test gateway's channels (tests/conftest.py config_toml):
- gpt-mock on mock-openai: 3 answers, 2 streams, 2 upstream 429s (each retried once on
  the same channel, then passed on to the client), 2 answers after them;
- fallback-model: 3 answers, each failing over from dead-primary (refuses connections)
  to mock-fallback;
- claude-mock on mock-anthropic: 1 stream through the Anthropic SDK;
- a second user with a 1-request-per-minute token: 1 answer, then 2 refused by the
  gateway's rate limit before the body is read (no model, no channel);
- 1 request with an unknown key (401: no user, model or channel).
"""

import urllib.request
from dataclasses import dataclass
from typing import Final

import anthropic
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from switchgate.cli.ops import Ops
from tests.conftest import Gateway

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]

# Requests by (model, channel, dialect, HTTP status) as /metrics labels them.
REQUESTS: Final[dict[tuple[str, str, str, str], int]] = {
    ("gpt-mock", "mock-openai", "openai", "200"): 3 + 2 + 2 + 1,
    ("gpt-mock", "mock-openai", "openai", "429"): 2,
    ("fallback-model", "mock-fallback", "openai", "200"): 3,
    ("claude-mock", "mock-anthropic", "anthropic", "200"): 1,
    ("none", "none", "openai", "429"): 2,  # refused by the rpm limit before the body
    ("none", "none", "openai", "401"): 1,  # unknown key
}
TOTAL: Final = sum(REQUESTS.values())  # 17
STREAMS: Final = {"gpt-mock": 2, "claude-mock": 1}  # requests with a time to first token
FAILOVERS: Final = 3  # fallback-model: dead-primary -> mock-fallback
BALANCE_USD: Final = 10  # each user's starting balance


@dataclass(frozen=True)
class Load:
    email: str  # the main user: every request above but the rate-limited user's
    limited_email: str  # the user whose 1-rpm token admitted 1 request and refused 2

    @property
    def emails(self) -> tuple[str, str]:
        return self.email, self.limited_email


def scrape(url: str, headers: dict[str, str] | None = None) -> Samples:
    request = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(request, timeout=5) as response:
        text = response.read().decode()
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum over every series of `name` whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)


def new_user(gateway: Gateway, rpm: int | None = None) -> tuple[str, str]:
    """(email, token): a user with BALANCE_USD; with rpm, the token is limited to it."""
    email, token = gateway.new_user(balance_usd=BALANCE_USD)
    if rpm is None:
        return email, token

    async def job(ops: Ops) -> str:
        return (await ops.create_token(email, "limited", rpm_limit=rpm)).token

    return email, gateway.ops(job)


def mixed_load(gateway: Gateway) -> Load:
    """Send the load described above; every SDK call's outcome is checked on the way."""
    email, token = new_user(gateway)
    oa = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=token, max_retries=0)
    hi = [{"role": "user", "content": "hello metrics"}]
    for _ in range(3):
        oa.chat.completions.create(model="gpt-mock", messages=hi)
    for _ in range(2):
        for _chunk in oa.chat.completions.create(model="gpt-mock", messages=hi, stream=True):
            pass
    for _ in range(2):  # the upstream answers 429; the only channel: the client gets 429
        with pytest.raises(openai.RateLimitError):
            oa.chat.completions.create(
                model="gpt-mock", messages=[{"role": "user", "content": "[[mock:error=429]]"}]
            )
        oa.chat.completions.create(model="gpt-mock", messages=hi)  # closes the breaker
    for _ in range(3):  # dead-primary refuses connections: each fails over
        oa.chat.completions.create(model="fallback-model", messages=hi)
    claude = anthropic.Anthropic(base_url=gateway.url, api_key=token, max_retries=0)
    with claude.messages.stream(
        model="claude-mock", max_tokens=50, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        for _text in stream.text_stream:
            pass
    limited_email, limited = new_user(gateway, rpm=1)
    lim = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=limited, max_retries=0)
    lim.chat.completions.create(model="gpt-mock", messages=hi)
    for _ in range(2):
        with pytest.raises(openai.RateLimitError):
            lim.chat.completions.create(model="gpt-mock", messages=hi)
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(
            base_url=f"{gateway.url}/v1", api_key="sk-nope", max_retries=0
        ).chat.completions.create(model="gpt-mock", messages=hi)
    return Load(email, limited_email)

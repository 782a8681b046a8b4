"""Issue 14 #5: an upstream stream that ends cleanly (the HTTP response is complete) but
without its terminator - OpenAI chat without `[DONE]` or a finish_reason, Anthropic
without `message_stop`, Gemini without a finishReason, Responses without
`response.completed` - is not a finished answer. The client's stream ends with an error
event in its own dialect (the SDK raises, or sees an `error` event), on the passthrough
and on the translated path, and what was delivered is charged (estimated). Real
sockets, the fake upstream's `end_after` fault, the three official SDKs."""

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from switchgate.money import UNITS_PER_USD
from tests.conftest import Gateway
from tests.e2e.billing_support import charges, logs
from tests.e2e.routing_support import Upstream, start_gateway, start_upstream
from tests.support import wait_for

MODELS = {"end-gpt": "openai", "end-claude": "anthropic", "end-gemini": "gemini"}
PATHS = {"openai": "/v1", "anthropic": "", "gemini": ""}


def _config(url: str) -> str:
    out = []
    for model, kind in MODELS.items():
        native = "responses = true\n" if kind == "openai" else ""
        out.append(
            f'[[channels]]\nname = "{model}"\nkind = "{kind}"\nbase_url = "{url}{PATHS[kind]}"\n'
            f'key = "mock-key"\nmodels = ["{model}"]\n{native}'
            f'[prices."{model}"]\ninput = "1"\noutput = "2"\n'
        )
    return "\n".join(out)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Gateway, Upstream]]:
    tmp = tmp_path_factory.mktemp("unfinished")
    upstream = start_upstream(tmp)
    try:
        gw = start_gateway(tmp_path_factory.mktemp("unfinished-gw"), _config(upstream.url))
        try:
            upstream.faults(end_after=6)  # of 8 text chunks and their framing
            yield gw, upstream
        finally:
            gw.process.stop()
    finally:
        upstream.process.stop()


def _oai(gw: Gateway, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=30)


def _chat_openai(gw: Gateway, token: str, model: str) -> str:
    got: list[str] = []
    with pytest.raises(openai.APIError, match="ended before the answer was finished"):
        for chunk in _oai(gw, token).chat.completions.create(
            model=model, messages=[{"role": "user", "content": "hello"}], stream=True
        ):
            got += [c.delta.content or "" for c in chunk.choices]
    return "".join(got)


def _chat_anthropic(gw: Gateway, token: str, model: str) -> str:
    client = anthropic.Anthropic(base_url=gw.url, api_key=token, max_retries=0, timeout=30)
    got: list[str] = []
    with (
        pytest.raises(anthropic.APIError, match="ended before the answer was finished"),
        client.messages.stream(
            model=model, max_tokens=50, messages=[{"role": "user", "content": "hello"}]
        ) as stream,
    ):
        got.extend(stream.text_stream)
    return "".join(got)


def _chat_gemini(gw: Gateway, token: str, model: str) -> str:
    client = genai.Client(
        api_key=token, http_options=types.HttpOptions(base_url=gw.url, timeout=30_000)
    )
    got: list[str] = []
    with pytest.raises(genai_errors.APIError, match="ended before the answer was finished"):
        for part in client.models.generate_content_stream(model=model, contents="hello"):
            got.append(part.text or "")
    return "".join(got)


def _responses(gw: Gateway, token: str, model: str) -> str:
    events = list(_oai(gw, token).responses.create(model=model, input="hello", stream=True))
    kinds = [e.type for e in events]
    assert "response.completed" not in kinds
    assert kinds[-1] == "error", kinds
    last: Any = events[-1]
    assert "ended before the answer was finished" in last.message
    return "".join(getattr(e, "delta", "") for e in events if e.type.endswith("text.delta"))


def _completions(gw: Gateway, token: str, model: str) -> str:
    got: list[str] = []
    with pytest.raises(openai.APIError, match="ended before the answer was finished"):
        for chunk in _oai(gw, token).completions.create(model=model, prompt="hi", stream=True):
            got += [c.text for c in chunk.choices]
    return "".join(got)


CLIENTS = {
    "completions": _completions,
    "openai": _chat_openai,
    "anthropic": _chat_anthropic,
    "gemini": _chat_gemini,
    "responses": _responses,
}
# (client, model): the same dialect passed through, and translated across dialects
CASES = [
    ("openai", "end-gpt"),
    ("anthropic", "end-claude"),
    ("gemini", "end-gemini"),
    ("responses", "end-gpt"),
    ("openai", "end-gemini"),
    ("openai", "end-claude"),
    ("anthropic", "end-gpt"),
    ("gemini", "end-gpt"),
    ("responses", "end-claude"),
    ("completions", "end-gpt"),  # the legacy endpoint, passed through
]


@pytest.mark.parametrize(("client", "model"), CASES)
def test_a_stream_ending_without_its_terminator_is_an_error_and_is_charged(
    setup: tuple[Gateway, Upstream], client: str, model: str
) -> None:
    gw, _ = setup
    email, token = gw.new_user(balance_usd=5)
    delivered = CLIENTS[client](gw, token, model)
    assert delivered, "what came before the end was delivered"
    assert wait_for(lambda: len(logs(gw, email)) == 1, timeout=15)
    row = logs(gw, email)[0]
    assert row.usage_estimated and row.output_tokens > 0 and row.cost > 0
    assert row.error and "ended before the answer was finished" in row.error
    assert wait_for(lambda: charges(gw, email) == (1, row.cost), timeout=15), "one charge row"
    assert gw.balance(email) == 5 * UNITS_PER_USD - row.cost  # and the ledger sums to it

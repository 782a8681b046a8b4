"""`switchgate catalogue import` onto a running gateway: the models are served and billed at
the catalogue's price, an operator's own price is kept, and mistakes get a clear error."""

import json
import secrets
from collections.abc import Iterator
from decimal import Decimal

import anthropic
import openai
import pytest

from switchgate.billing.pricing import token_cost
from switchgate.catalogue.entries import shipped_catalogue
from switchgate.core.usage import Usage
from tests.conftest import Gateway, _start_gateway
from tests.support import Process, mock_requests, run_cli, wait_for


@pytest.fixture(scope="module")
def fresh_gateway(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process
) -> Iterator[Gateway]:
    gw = _start_gateway(tmp_path_factory, mock_upstream, None)
    yield gw
    gw.process.stop()


def _wait_for_model(sdk: openai.OpenAI, model: str) -> None:
    import time

    deadline = time.monotonic() + 5
    while model not in {m.id for m in sdk.models.list()}:
        assert time.monotonic() < deadline, f"{model} was not offered within 5 s"
        time.sleep(0.05)


def test_import_by_provider_serves_and_bills_at_the_catalogue_price(
    fresh_gateway: Gateway,
) -> None:
    gw = fresh_gateway
    # The operator's own price for one Claude model must survive the import.
    run_cli(gw.env, "prices", "set", "claude-haiku-4-5", "--input", "7", "--output", "7")
    out = run_cli(gw.env, "catalogue", "import", "--provider", "anthropic").stdout
    catalogue = shipped_catalogue()
    claude = catalogue.select(vendor="anthropic")
    assert f"channel mock-anthropic: {len(claude)} model(s) added" in out
    assert "operator price(s) kept (not overwritten): claude-haiku-4-5" in out
    listed = run_cli(gw.env, "prices", "list").stdout
    sonnet_line = next(
        line for line in listed.splitlines() if line.startswith("claude-sonnet-4-5\t")
    )
    assert f"(from catalogue:{catalogue.as_of})" in sonnet_line
    haiku_line = next(line for line in listed.splitlines() if line.startswith("claude-haiku-4-5\t"))
    assert "input 7\t" in haiku_line and "from catalogue" not in haiku_line

    email, token = gw.new_user(balance_usd=10)
    _wait_for_model(openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token), "claude-sonnet-4-5")
    before = gw.balance(email)
    client = anthropic.Anthropic(base_url=gw.url, api_key=token, max_retries=0)
    reply = client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=64,
        messages=[{"role": "user", "content": "hello there"}],
    )
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0
    usage = Usage(
        input_tokens=reply.usage.input_tokens
        + (reply.usage.cache_read_input_tokens or 0)
        + (reply.usage.cache_creation_input_tokens or 0),
        output_tokens=reply.usage.output_tokens,
        cache_read_tokens=reply.usage.cache_read_input_tokens or 0,
        cache_write_tokens=reply.usage.cache_creation_input_tokens or 0,
    )
    expected = token_cost(catalogue.get("claude-sonnet-4-5").price, usage)
    assert wait_for(lambda: before - gw.balance(email) == expected)

    # Importing again refreshes the catalogue's prices and adds nothing twice.
    again = run_cli(gw.env, "catalogue", "import", "--provider", "anthropic").stdout
    assert "channel mock-anthropic: 0 model(s) added (all were already served)" in again


def test_openai_compatible_vendor_needs_its_channel(fresh_gateway: Gateway) -> None:
    gw = fresh_gateway
    refused = run_cli(gw.env, "catalogue", "import", "--provider", "deepseek", check=False)
    assert refused.returncode == 2
    assert "add a channel of kind deepseek at https://api.deepseek.com/v1" in refused.stderr
    assert "or pass --channel NAME" in refused.stderr
    done = run_cli(
        gw.env, "catalogue", "import", "--models", "deepseek-chat", "--channel", "mock-openai"
    ).stdout
    assert "channel mock-openai: 1 model(s) added" in done
    _, token = gw.new_user()
    sdk = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0)
    _wait_for_model(sdk, "deepseek-chat")
    reply = sdk.chat.completions.create(
        model="deepseek-chat", messages=[{"role": "user", "content": "hi"}]
    )
    assert reply.choices[0].message.content


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["import", "--provider", "nope"], "unknown provider 'nope'"),
        (["import", "--models", "no-such-*"], "no catalogue model matches"),
        (["import", "--models", "gpt-4o", "--channel", "ghost"], "no channel named 'ghost'"),
        (["show", "ghost-model"], "not in the catalogue"),
    ],
)
def test_catalogue_mistakes_get_a_clear_error(
    fresh_gateway: Gateway, args: list[str], message: str
) -> None:
    result = run_cli(fresh_gateway.env, "catalogue", *args, check=False)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def _import_deepseek(gw: Gateway) -> openai.OpenAI:
    run_cli(gw.env, "catalogue", "import", "--models", "deepseek-*", "--channel", "mock-openai")
    _, token = gw.new_user()
    sdk = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0)
    _wait_for_model(sdk, "deepseek-chat")
    return sdk


def test_a_prompt_over_the_context_window_is_refused_before_the_upstream(
    fresh_gateway: Gateway,
) -> None:
    sdk = _import_deepseek(fresh_gateway)
    window = shipped_catalogue().get("deepseek-chat").context_window
    assert window is not None
    marker = "ctx-marker-" + secrets.token_hex(4)
    huge = marker + " " + "word " * (window + window // 5)
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.chat.completions.create(
            model="deepseek-chat", messages=[{"role": "user", "content": huge}]
        )
    assert caught.value.code == "context_length_exceeded"
    assert f"maximum context length is {window} tokens" in caught.value.message
    assert not [r for r in mock_requests(fresh_gateway.mock_url) if marker in json.dumps(r)]

    client = anthropic.Anthropic(base_url=fresh_gateway.url, api_key=sdk.api_key, max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(
            model="deepseek-chat", max_tokens=16, messages=[{"role": "user", "content": huge}]
        )
    assert "prompt is too long" in refused.value.message
    # A prompt that fits (by bytes, without counting) goes through.
    fine = sdk.chat.completions.create(
        model="deepseek-chat", messages=[{"role": "user", "content": "word " * 1000}]
    )
    assert fine.choices[0].message.content


def test_a_capability_the_model_lacks_is_refused_and_details_are_listed(
    fresh_gateway: Gateway,
) -> None:
    sdk = _import_deepseek(fresh_gateway)
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    with pytest.raises(openai.BadRequestError) as caught:
        sdk.chat.completions.create(
            model="deepseek-chat",
            messages=[{"role": "user", "content": [{"type": "text", "text": "what?"}, image]}],
        )
    assert caught.value.code == "unsupported_capability"
    assert "does not support image input" in caught.value.message
    # The same model takes tools, which the catalogue says it supports.
    tools = sdk.chat.completions.create(
        model="deepseek-chat",
        messages=[{"role": "user", "content": "hi"}],
        tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    )
    assert tools.choices[0].finish_reason

    plain = sdk.models.list().data
    assert all(not hasattr(m, "context_length") for m in plain)
    detailed = {m.id: m for m in sdk.models.list(extra_query={"details": "true"}).data}
    entry = detailed["deepseek-chat"].model_dump()
    model = shipped_catalogue().get("deepseek-chat")
    assert entry["context_length"] == model.context_window
    assert entry["top_provider"]["max_completion_tokens"] == model.max_output
    assert "tools" in entry["capabilities"] and "vision" not in entry["capabilities"]
    assert Decimal(entry["pricing"]["prompt"]) * 1_000_000 == Decimal("0.28")


def test_import_finds_cloud_channels_and_maps_the_models_id_there(
    fresh_gateway: Gateway,
) -> None:
    """A model the catalogue names on Bedrock is imported onto a bedrock channel (no
    --channel) under its Bedrock id, and a call reaches Bedrock's Converse with it."""
    from switchgate.testing.mock_upstream.bedrock_wire import ACCESS_KEY_ID, SECRET_ACCESS_KEY

    gw = fresh_gateway
    run_cli(gw.env, "channels", "add", "cloud-bedrock", "--kind", "bedrock",
            "--base-url", gw.mock_url, "--key", f"{ACCESS_KEY_ID}:{SECRET_ACCESS_KEY}",
            "--models", "placeholder", "--option", "region=us-west-2")  # fmt: skip
    out = run_cli(gw.env, "catalogue", "import", "--models", "llama-3.3-70b").stdout
    assert "channel cloud-bedrock: 1 model(s) added" in out
    _, token = gw.new_user()
    sdk = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0)
    _wait_for_model(sdk, "llama-3.3-70b")
    reply = sdk.chat.completions.create(
        model="llama-3.3-70b", messages=[{"role": "user", "content": "hi"}]
    )
    assert reply.choices[0].message.content
    paths = [r.get("path", "") for r in mock_requests(gw.mock_url)]
    assert "/model/meta.llama3-3-70b-instruct-v1:0/converse" in paths
    # A model the catalogue names nowhere on Bedrock is not put there.
    refused = run_cli(gw.env, "catalogue", "import", "--models", "qwen*", check=False)
    assert refused.returncode == 2 and "add a channel of kind qwen" in refused.stderr

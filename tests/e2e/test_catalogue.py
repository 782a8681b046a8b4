"""`switchgate catalogue import` onto a running gateway: the models are served and billed at
the catalogue's price, an operator's own price is kept, and mistakes get a clear error."""

from collections.abc import Iterator

import anthropic
import openai
import pytest

from switchgate.billing.pricing import token_cost
from switchgate.catalogue.entries import shipped_catalogue
from switchgate.core.usage import Usage
from tests.conftest import Gateway, _start_gateway
from tests.support import Process, run_cli, wait_for


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
    assert "add a channel of kind openai at https://api.deepseek.com/v1" in refused.stderr
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

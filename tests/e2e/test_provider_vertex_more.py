"""`vertex` channels end to end (tests/e2e/vertex_gateway.py), beyond chat: embeddings
through :predict (openai and google-genai SDKs, batch sizes per model), a channel whose
service account the token endpoint refuses, and `channels add --option`."""

import asyncio
from collections.abc import Iterator

import pytest
from google.genai import types

from switchgate.routing.channels import Channel, load_channels
from switchgate.storage.db import Database
from switchgate.storage.secrets import SecretBox
from switchgate.testing.mock_upstream.assets import embed_vector
from tests.conftest import Gateway
from tests.e2e.vertex_gateway import (
    EMBED,
    FAILOVER,
    TEXT_EMBED,
    genai_client,
    new_account,
    oai,
    running_gateway,
    vertex_calls,
)
from tests.support import (
    Process,
    clear_mock_requests,
    gateway_env,
    mock_requests,
    run_cli,
    wait_for,
)
from tests.vertex_support import ServiceAccountKey, tokens_issued


@pytest.fixture(scope="module")
def account(mock_upstream: Process) -> ServiceAccountKey:
    return new_account(mock_upstream)


@pytest.fixture(scope="module")
def vertex_gateway(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process, account: ServiceAccountKey
) -> Iterator[Gateway]:
    with running_gateway(tmp_path_factory, mock_upstream, account) as gw:
        yield gw


def test_cli_channel_with_options(
    tmp_path_factory: pytest.TempPathFactory, account: ServiceAccountKey
) -> None:
    data_dir = tmp_path_factory.mktemp("vertex-cli")
    env = gateway_env(data_dir, None)
    run_cli(
        env,
        *("channels", "add", "vx", "--kind", "vertex"),
        *("--base-url", "https://aiplatform.googleapis.com", "--key", account.key),
        *("--models", "gemini-2.5-flash", "--option", "location=europe-west4"),
        *("--option", "project=other-project"),
    )
    listed = run_cli(env, "channels", "list").stdout
    assert "vx" in listed and "PRIVATE KEY" not in listed

    async def channels() -> list[Channel]:
        db = Database(f"sqlite+aiosqlite:///{data_dir / 'switchgate.db'}")
        try:
            async with db.begin() as conn:
                return await load_channels(conn, SecretBox.load(None, data_dir))
        finally:
            await db.dispose()

    (channel,) = asyncio.run(channels())
    assert channel.kind == "vertex" and channel.api_key == account.key
    assert channel.extra == {"location": "europe-west4", "project": "other-project"}


def test_token_endpoint_refusal_fails_over(
    vertex_gateway: Gateway, mock_upstream: Process, account: ServiceAccountKey
) -> None:
    """The higher-priority channel's key is unknown to the token endpoint: that attempt
    fails as the channel's failure and the call is served by the other channel."""
    _, token = vertex_gateway.new_user()
    clear_mock_requests(vertex_gateway.mock_url)
    issued = tokens_issued(mock_upstream.base_url, account)
    for _ in range(3):
        reply = oai(vertex_gateway, token).chat.completions.create(
            model=FAILOVER, messages=[{"role": "user", "content": "fail over"}]
        )
        assert "fail over" in (reply.choices[0].message.content or "")
    paths = [c["path"] for c in vertex_calls(vertex_gateway)]
    assert len(paths) == 3 and all("/projects/vertex-e2e/" in p for p in paths)
    asked = [r for r in mock_requests(vertex_gateway.mock_url) if r["path"] == "/token"]
    granted = tokens_issued(mock_upstream.base_url, account) - issued
    assert len(asked) > granted  # the unknown account asked, and was refused


def test_embeddings(vertex_gateway: Gateway) -> None:
    email, token = vertex_gateway.new_user()
    before = vertex_gateway.balance(email)
    clear_mock_requests(vertex_gateway.mock_url)
    reply = oai(vertex_gateway, token).embeddings.create(
        model=EMBED, input=["first text", "second text here"], dimensions=32
    )
    assert [len(d.embedding) for d in reply.data] == [32, 32]
    assert reply.usage.prompt_tokens == 5
    calls = [c for c in vertex_calls(vertex_gateway) if c["path"].endswith(":predict")]
    assert len(calls) == 2 and all(len(c["json"]["instances"]) == 1 for c in calls)
    assert wait_for(lambda: vertex_gateway.balance(email) < before)


def test_genai_embed_content(vertex_gateway: Gateway) -> None:
    _, token = vertex_gateway.new_user()
    clear_mock_requests(vertex_gateway.mock_url)
    sdk = genai_client(vertex_gateway, token)  # keep a reference: a collected client closes
    texts = ["a first document", "the second"]
    result = sdk.models.embed_content(
        model=EMBED,
        contents=[types.Content(parts=[types.Part.from_text(text=t)]) for t in texts],
        config=types.EmbedContentConfig(output_dimensionality=16),
    )
    assert result.embeddings is not None
    assert [len(e.values or []) for e in result.embeddings] == [16, 16]
    calls = [c for c in vertex_calls(vertex_gateway) if c["path"].endswith(":predict")]
    assert sorted(c["json"]["instances"][0]["content"] for c in calls) == sorted(texts)
    assert all(c["json"]["parameters"] == {"outputDimensionality": 16} for c in calls)


def test_text_embedding_models_take_eight_texts_per_request(vertex_gateway: Gateway) -> None:
    _, token = vertex_gateway.new_user()
    clear_mock_requests(vertex_gateway.mock_url)
    texts = [f"text number {i}" for i in range(10)]
    reply = oai(vertex_gateway, token).embeddings.create(model=TEXT_EMBED, input=texts)
    assert [d.index for d in reply.data] == list(range(10))
    for text, item in zip(texts, reply.data, strict=True):  # in input order, batches merged
        assert item.embedding == pytest.approx(embed_vector(text, 768), abs=1e-6)
    assert reply.usage.prompt_tokens == 30
    calls = [c for c in vertex_calls(vertex_gateway) if c["path"].endswith(":predict")]
    sizes = sorted(len(c["json"]["instances"]) for c in calls)
    assert sizes == [2, 8]
    sent = [i["content"] for c in calls for i in c["json"]["instances"]]
    assert sorted(sent) == sorted(texts)

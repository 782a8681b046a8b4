"""The fake upstream's Bedrock Runtime surface, exercised with AWS's own client
(botocore's `bedrock-runtime` client: its serializer, SigV4 signer, event-stream parser and
error parser), and with the gateway's provider."""

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError
from botocore.session import get_session

from switchgate import jsonutil
from switchgate.testing import MockConfig, MockUpstream, start_mock_upstream
from switchgate.testing.mock_upstream.bedrock_wire import (
    ACCESS_KEY_ID,
    SECRET_ACCESS_KEY,
    SESSION_ACCESS_KEY_ID,
    SESSION_SECRET,
    SESSION_TOKEN,
)

CLAUDE = "anthropic.claude-3-5-haiku-20241022-v1:0"
TOOLS: Any = {
    "tools": [
        {
            "toolSpec": {
                "name": "get_weather",
                "description": "Weather for a city",
                "inputSchema": {
                    "json": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                    }
                },
            }
        }
    ]
}


@pytest.fixture(scope="module")
async def upstream() -> AsyncIterator[MockUpstream]:
    up = await start_mock_upstream(config=MockConfig(chunk_count=3))
    yield up
    await up.close()


def _client(upstream: MockUpstream, key: str, secret: str, token: str | None = None) -> Any:
    return get_session().create_client(
        "bedrock-runtime",
        region_name="us-west-2",
        endpoint_url=upstream.base_url,
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        aws_session_token=token,
        config=Config(retries={"max_attempts": 1, "mode": "standard"}),
    )


@pytest.fixture(scope="module")
def aws(upstream: MockUpstream) -> Any:
    return _client(upstream, ACCESS_KEY_ID, SECRET_ACCESS_KEY)


async def call(fn: Callable[..., Any], **kwargs: Any) -> Any:
    return await asyncio.to_thread(fn, **kwargs)  # botocore is blocking


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"text": text}]}]


async def test_converse(aws: Any) -> None:
    reply = await call(aws.converse, modelId=CLAUDE, messages=user("hi there"))
    assert reply["output"]["message"]["content"] == [
        {"text": "Hello from mock! You said: hi there"}
    ]
    assert reply["stopReason"] == "end_turn"
    assert reply["usage"] == {"inputTokens": 2, "outputTokens": 7, "totalTokens": 9}


async def test_converse_stream_with_tools(aws: Any) -> None:
    reply = await call(
        aws.converse_stream,
        modelId=CLAUDE,
        messages=user("weather? [[mock:tool]]"),
        toolConfig=TOOLS,
    )
    events = await asyncio.to_thread(lambda: list(reply["stream"]))
    names = [next(iter(e)) for e in events]
    assert names[0] == "messageStart" and names[-2:] == ["messageStop", "metadata"]
    start = next(e["contentBlockStart"] for e in events if "contentBlockStart" in e)
    assert start["start"]["toolUse"]["name"] == "get_weather"
    args = "".join(
        e["contentBlockDelta"]["delta"]["toolUse"]["input"]
        for e in events
        if "toolUse" in e.get("contentBlockDelta", {}).get("delta", {})
    )
    assert jsonutil.loads(args) == {"city": "Oslo"}
    assert events[-2]["messageStop"]["stopReason"] == "tool_use"


async def test_stream_exception_event(aws: Any) -> None:
    reply = await call(
        aws.converse_stream, modelId=CLAUDE, messages=user("x [[mock:midstream_error=429]]")
    )
    with pytest.raises(EventStreamError) as info:
        await asyncio.to_thread(lambda: list(reply["stream"]))
    assert info.value.response["Error"]["Code"] == "throttlingException"


async def test_session_credentials(upstream: MockUpstream) -> None:
    client = _client(upstream, SESSION_ACCESS_KEY_ID, SESSION_SECRET, SESSION_TOKEN)
    reply = await call(client.converse, modelId=CLAUDE, messages=user("hi"))
    assert reply["stopReason"] == "end_turn"
    other = _client(upstream, SESSION_ACCESS_KEY_ID, SESSION_SECRET, "stolen-token")
    with pytest.raises(ClientError) as info:
        await call(other.converse, modelId=CLAUDE, messages=user("hi"))
    assert info.value.response["Error"]["Code"] == "UnrecognizedClientException"


@pytest.mark.parametrize(
    ("key", "secret", "code"),
    [
        (ACCESS_KEY_ID, "wrong-secret", "InvalidSignatureException"),
        ("AKIAUNKNOWN000000000", SECRET_ACCESS_KEY, "UnrecognizedClientException"),
    ],
)
async def test_wrong_credentials_are_refused(
    upstream: MockUpstream, key: str, secret: str, code: str
) -> None:
    client = _client(upstream, key, secret)
    with pytest.raises(ClientError) as info:
        await call(client.converse, modelId=CLAUDE, messages=user("hi"))
    assert info.value.response["Error"]["Code"] == code
    assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (400, "ValidationException"),
        (403, "AccessDeniedException"),
        (404, "ResourceNotFoundException"),
        (408, "ModelTimeoutException"),
        (429, "ThrottlingException"),
        (503, "ServiceUnavailableException"),
    ],
)
async def test_scripted_errors(aws: Any, status: int, code: str) -> None:
    with pytest.raises(ClientError) as info:
        await call(aws.converse, modelId=CLAUDE, messages=user(f"[[mock:error={status}]]"))
    error = info.value.response
    assert error["Error"]["Code"] == code
    assert error["ResponseMetadata"]["HTTPStatusCode"] == status


@pytest.mark.parametrize(
    ("messages", "extra", "wording"),
    [
        ([{"role": "assistant", "content": [{"text": "x"}]}], {}, "start with a user message"),
        (user("a") + user("b"), {}, "alternate between user and assistant"),
        (user("  "), {}, "is blank"),
        (
            [
                *user("a"),
                {
                    "role": "assistant",
                    "content": [{"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}}],
                },
            ],
            {},
            "toolConfig field must be defined",
        ),
        (
            user("a"),
            {
                "additionalModelRequestFields": {
                    "thinking": {"type": "enabled", "budget_tokens": 10}
                }
            },
            "budget_tokens",
        ),
    ],
)
async def test_what_bedrock_refuses(
    aws: Any, messages: list[dict[str, Any]], extra: dict[str, Any], wording: str
) -> None:
    with pytest.raises(ClientError) as info:
        await call(aws.converse, modelId=CLAUDE, messages=messages, **extra)
    assert info.value.response["Error"]["Code"] == "ValidationException"
    assert wording in info.value.response["Error"]["Message"]


def _invoke(aws: Any, model: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = aws.invoke_model(
        modelId=model, body=jsonutil.dumps(body), contentType="application/json"
    )
    result: dict[str, Any] = jsonutil.loads(reply["body"].read())
    return result


async def test_embeddings(aws: Any) -> None:
    titan = await asyncio.to_thread(
        _invoke, aws, "amazon.titan-embed-text-v2:0", {"inputText": "a b c", "dimensions": 256}
    )
    assert len(titan["embedding"]) == 256 and titan["inputTextTokenCount"] == 3
    cohere = await asyncio.to_thread(
        _invoke,
        aws,
        "cohere.embed-english-v3",
        {"texts": ["a", "b"], "input_type": "search_document"},
    )
    assert len(cohere["embeddings"]) == 2 and len(cohere["embeddings"][0]) == 1024
    with pytest.raises(ClientError) as info:
        await asyncio.to_thread(
            _invoke, aws, "amazon.titan-embed-text-v2:0", {"inputText": "a", "dimensions": 7}
        )
    assert info.value.response["Error"]["Code"] == "ValidationException"


async def test_api_key_bearer(upstream: MockUpstream) -> None:
    import aiohttp

    url = f"{upstream.base_url}/model/{CLAUDE}/converse"
    body = {"messages": user("hi")}
    async with aiohttp.ClientSession() as session:
        headers = {"Authorization": "Bearer mock-key"}
        async with session.post(url, json=body, headers=headers) as resp:
            assert resp.status == 200
        headers = {"Authorization": "Bearer wrong"}
        async with session.post(url, json=body, headers=headers) as resp:
            assert resp.status == 403
            assert resp.headers["x-amzn-errortype"].startswith("UnrecognizedClientException")


def test_frames_are_real_eventstream() -> None:
    """botocore's parser reads the encoder's frames, checksums included."""
    from botocore.eventstream import ChecksumMismatch, EventStreamBuffer

    from switchgate.testing.mock_upstream.bedrock_wire import event_frame

    data = event_frame("messageStart", {"role": "assistant"})
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    (message,) = list(buffer)
    assert message.headers[":event-type"] == "messageStart"
    assert jsonutil.loads(message.payload) == {"role": "assistant"}
    broken = EventStreamBuffer()
    broken.add_data(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(ChecksumMismatch):
        list(broken)

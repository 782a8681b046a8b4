"""Legacy completions and embeddings end to end: the official openai and google-genai SDKs
against the real gateway, relaying to the fake upstream's OpenAI and Gemini routes."""

import base64
import struct

import openai
import pytest
from google import genai
from google.genai import types

from switchgate.testing.mock_upstream.reply import count_words
from switchgate.tokenizer import Tokenizer
from tests.conftest import Gateway
from tests.e2e.media_helpers import PER_TOKEN, client, log_rows
from tests.support import clear_mock_requests, http_json, mock_requests, wait_for

GPT_IN, GPT_OUT = PER_TOKEN, 2 * PER_TOKEN  # gpt-mock: $1 / $2 per 1M tokens
EMBED = PER_TOKEN // 10  # embed-mock: $0.1 per 1M tokens
GEMINI_EMBED = PER_TOKEN * 15 // 100  # gemini-embed: $0.15 per 1M tokens
TOKENIZER = Tokenizer()


# ---------------------------------------------------------------- completions


def test_completions_bill_the_reported_usage(gateway_any: Gateway) -> None:
    email, token = gateway_any.new_user()
    before = gateway_any.balance(email)
    reply = client(gateway_any, token).completions.create(
        model="gpt-mock", prompt="complete this line", max_tokens=50
    )
    assert reply.object == "text_completion"
    assert reply.choices[0].text == "Hello from mock! You said: complete this line"
    assert reply.usage is not None
    cost = reply.usage.prompt_tokens * GPT_IN + reply.usage.completion_tokens * GPT_OUT
    assert cost > 0
    assert wait_for(lambda: gateway_any.balance(email) == before - cost)
    rows = wait_for(lambda: log_rows(gateway_any, email))
    assert [(r["endpoint"], r["status"], r["cost"]) for r in rows] == [("completions", 200, cost)]


def test_completions_stream_with_and_without_usage(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    sdk = client(gateway, token)
    prompt = "stream a completion [[mock:chunks=4]]"
    chunks = list(
        sdk.completions.create(
            model="gpt-mock", prompt=prompt, stream=True, stream_options={"include_usage": True}
        )
    )
    text = "".join(c.choices[0].text for c in chunks if c.choices)
    assert text.startswith("Hello from mock! You said: stream a completion")
    usage_chunks = [c for c in chunks if not c.choices]
    assert len(usage_chunks) == 1 and usage_chunks[0].usage is not None
    usage = usage_chunks[0].usage
    cost = usage.prompt_tokens * GPT_IN + usage.completion_tokens * GPT_OUT
    assert wait_for(lambda: gateway.balance(email) == 10 * 10**12 - cost)

    clear_mock_requests(gateway.mock_url)
    plain = list(sdk.completions.create(model="gpt-mock", prompt=prompt, stream=True))
    assert plain and all(c.choices for c in plain), "no usage chunk the client didn't ask for"
    sent = [r for r in mock_requests(gateway.mock_url) if r["path"] == "/v1/completions"]
    assert sent[-1]["json"]["stream_options"] == {"include_usage": True}
    assert wait_for(lambda: gateway.balance(email) == 10 * 10**12 - 2 * cost)


def test_completions_stream_cut_by_an_upstream_error_bills_what_was_sent(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    prompt = "fail halfway [[mock:chunks=6]][[mock:midstream_error]]"
    text = ""
    with pytest.raises(openai.APIError):
        for chunk in client(gateway, token).completions.create(
            model="gpt-mock", prompt=prompt, stream=True
        ):
            text += chunk.choices[0].text if chunk.choices else ""
    assert text, "some text arrived before the error"
    cost = TOKENIZER.count(prompt) * GPT_IN + TOKENIZER.count(text) * GPT_OUT
    assert wait_for(lambda: gateway.balance(email) == 10 * 10**12 - cost)
    assert wait_for(lambda: log_rows(gateway, email))[0]["usage_estimated"] is True


def test_completions_errors_use_the_openai_shape(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    sdk = client(gateway, token)
    with pytest.raises(openai.NotFoundError) as missing:
        sdk.completions.create(model="no-such-model", prompt="x")
    assert missing.value.code == "model_not_found"
    status, body = http_json(
        "POST",
        f"{gateway.url}/v1/completions",
        {"model": "gpt-mock", "prompt": {"not": "valid"}},
        {"authorization": f"Bearer {token}"},
    )
    assert status == 400 and body["error"]["param"] == "prompt"
    status, body = http_json("POST", f"{gateway.url}/v1/completions", {"model": "gpt-mock"})
    assert status == 401 and body["error"]["code"] == "invalid_api_key"


# ---------------------------------------------------------------- embeddings, OpenAI channel


def test_embeddings_default_base64_and_float_agree(gateway_any: Gateway) -> None:
    email, token = gateway_any.new_user()
    sdk = client(gateway_any, token)
    clear_mock_requests(gateway_any.mock_url)
    texts = ["the quick brown fox", "jumps"]
    default = sdk.embeddings.create(model="embed-mock", input=texts)
    sent = [r for r in mock_requests(gateway_any.mock_url) if r["path"] == "/v1/embeddings"]
    assert sent[-1]["json"]["encoding_format"] == "base64", "the SDK asks for base64"
    floats = sdk.embeddings.create(model="embed-mock", input=texts, encoding_format="float")
    assert [d.index for d in default.data] == [0, 1]
    assert len(default.data[0].embedding) == 1536
    assert default.data[0].embedding == floats.data[0].embedding
    assert default.usage.prompt_tokens == sum(count_words(t) for t in texts)
    cost = 2 * default.usage.prompt_tokens * EMBED
    assert wait_for(lambda: gateway_any.balance(email) == 10 * 10**12 - cost)
    rows = wait_for(lambda: len(log_rows(gateway_any, email)) == 2 and log_rows(gateway_any, email))
    assert {r["endpoint"] for r in rows} == {"embeddings"}


def test_embeddings_dimensions_and_token_input(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    sdk = client(gateway, token)
    small = sdk.embeddings.create(model="embed-mock", input="hello", dimensions=64)
    assert len(small.data[0].embedding) == 64
    tokens = sdk.embeddings.create(model="embed-mock", input=[[1, 2, 3], [4, 5]])
    assert len(tokens.data) == 2 and tokens.usage.prompt_tokens == 5
    cost = (small.usage.prompt_tokens + 5) * EMBED
    assert wait_for(lambda: gateway.balance(email) == 10 * 10**12 - cost)


def test_embeddings_fail_over_before_the_first_byte(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    reply = client(gateway, token).embeddings.create(model="fallback-model", input="hi there")
    assert len(reply.data) == 1


def test_embeddings_for_a_model_no_channel_can_embed_is_404(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    with pytest.raises(openai.NotFoundError) as err:
        client(gateway, token).embeddings.create(model="claude-mock", input="hi")
    assert err.value.code == "model_not_found"
    assert "not available for embeddings" in str(err.value)
    with pytest.raises(openai.BadRequestError) as bad:
        client(gateway, token).embeddings.create(model="embed-mock", input="")
    assert bad.value.param == "input"  # type: ignore[attr-defined]
    assert gateway.balance(email) == 10 * 10**12


def test_media_calls_hold_the_worst_case_first(gateway: Gateway) -> None:
    email, token = gateway.new_user(balance_usd=0)
    sdk = client(gateway, token)
    with pytest.raises(openai.APIStatusError) as err:
        sdk.embeddings.create(model="embed-mock", input="no money")
    assert err.value.status_code == 402 and err.value.code == "insufficient_quota"
    with pytest.raises(openai.APIStatusError) as err:
        sdk.audio.speech.create(model="tts-mock", voice="alloy", input="no money")
    assert err.value.status_code == 402
    rows = wait_for(lambda: len(log_rows(gateway, email)) == 2 and log_rows(gateway, email))
    assert [r["status"] for r in rows] == [402, 402]
    assert gateway.balance(email) == 0


# ---------------------------------------------------------------- embeddings, Gemini channel


def test_embeddings_on_a_gemini_channel(gateway_any: Gateway) -> None:
    email, token = gateway_any.new_user()
    sdk = client(gateway_any, token)
    clear_mock_requests(gateway_any.mock_url)
    texts = ["hello world", "a second text"]
    default = sdk.embeddings.create(model="gemini-embed", input=texts, dimensions=32)
    floats = sdk.embeddings.create(
        model="gemini-embed", input=texts, dimensions=32, encoding_format="float"
    )
    assert [len(d.embedding) for d in default.data] == [32, 32]
    assert default.data[1].embedding == floats.data[1].embedding
    assert default.model == "gemini-embed"
    sent = [r for r in mock_requests(gateway_any.mock_url) if ":batchEmbedContents" in r["path"]]
    requests = sent[-1]["json"]["requests"]
    assert [r["content"]["parts"][0]["text"] for r in requests] == texts
    assert {r["outputDimensionality"] for r in requests} == {32}
    counted = sum(TOKENIZER.count(t) for t in texts)
    assert default.usage.prompt_tokens == counted
    assert wait_for(lambda: gateway_any.balance(email) == 10 * 10**12 - 2 * counted * GEMINI_EMBED)


def test_embeddings_base64_from_a_gemini_channel_is_float32(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    status, body = http_json(
        "POST",
        f"{gateway.url}/v1/embeddings",
        {"model": "gemini-embed", "input": "x", "dimensions": 4, "encoding_format": "base64"},
        {"authorization": f"Bearer {token}"},
    )
    assert status == 200
    raw = base64.b64decode(body["data"][0]["embedding"])
    assert len(raw) == 16 and len(struct.unpack("<4f", raw)) == 4


def test_token_input_is_decoded_for_a_gemini_channel(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    clear_mock_requests(gateway.mock_url)
    hello = TOKENIZER._encoding.encode("Hello world")
    reply = client(gateway, token).embeddings.create(model="gemini-embed", input=[hello])
    assert len(reply.data) == 1
    sent = [r for r in mock_requests(gateway.mock_url) if ":batchEmbedContents" in r["path"]]
    assert sent[-1]["json"]["requests"][0]["content"]["parts"][0]["text"] == "Hello world"


# ---------------------------------------------------------------- Gemini dialect


def genai_client(gw: Gateway, token: str) -> genai.Client:
    return genai.Client(
        api_key=token, http_options=types.HttpOptions(base_url=gw.url, timeout=30_000)
    )


def contents(texts: list[str]) -> list[types.Content]:
    """One content per text (a plain list of strings becomes ONE content of many parts)."""
    return [types.Content(parts=[types.Part(text=t)]) for t in texts]


def test_genai_embed_content_passthrough_to_gemini(gateway_any: Gateway) -> None:
    email, token = gateway_any.new_user()
    texts = ["first document", "second one here"]
    sdk = genai_client(gateway_any, token)  # keep a reference: a collected client closes
    result = sdk.models.embed_content(
        model="gemini-embed",
        contents=contents(texts),
        config=types.EmbedContentConfig(output_dimensionality=16, task_type="RETRIEVAL_DOCUMENT"),
    )
    assert result.embeddings is not None
    assert [len(e.values or []) for e in result.embeddings] == [16, 16]
    cost = sum(TOKENIZER.count(t) for t in texts) * GEMINI_EMBED
    assert wait_for(lambda: gateway_any.balance(email) == 10 * 10**12 - cost)
    rows = wait_for(lambda: log_rows(gateway_any, email))
    assert rows[0]["endpoint"] == "batchEmbedContents" and rows[0]["dialect"] == "gemini"


def test_genai_embed_content_translated_to_an_openai_channel(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    clear_mock_requests(gateway.mock_url)
    texts = ["translate me please", "and me"]
    sdk = genai_client(gateway, token)
    result = sdk.models.embed_content(
        model="embed-mock", contents=contents(texts), config={"output_dimensionality": 8}
    )
    assert result.embeddings is not None
    assert [len(e.values or []) for e in result.embeddings] == [8, 8]
    sent = [r for r in mock_requests(gateway.mock_url) if r["path"] == "/v1/embeddings"]
    assert sent[-1]["json"] == {
        "model": "embed-mock",
        "input": texts,
        "encoding_format": "float",
        "dimensions": 8,
    }
    cost = sum(count_words(t) for t in texts) * EMBED  # the upstream reported usage
    assert wait_for(lambda: gateway.balance(email) == 10 * 10**12 - cost)


def test_gemini_embed_content_single_and_errors(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    url = f"{gateway.url}/v1beta/models/embed-mock:embedContent"
    headers = {"x-goog-api-key": token}
    body = {"content": {"parts": [{"text": "one"}]}, "outputDimensionality": 4}
    status, reply = http_json("POST", url, body, headers)
    assert status == 200 and len(reply["embedding"]["values"]) == 4
    status, reply = http_json("POST", url, {"content": {}}, headers)
    assert status == 400 and reply["error"]["status"] == "INVALID_ARGUMENT"
    missing = f"{gateway.url}/v1beta/models/claude-mock:embedContent"
    status, reply = http_json("POST", missing, body, headers)
    assert status == 404 and reply["error"]["status"] == "NOT_FOUND"
    status, reply = http_json("POST", url, body, {})
    assert status == 401

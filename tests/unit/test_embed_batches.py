"""Embedding batches: the pure split/merge (providers/embed_batches.py), the bounded
fan-out (relay/fanout.py), the Gemini-dialect limit, and the fake upstream's own
100-request limit of `:batchEmbedContents`."""

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest

from switchgate import jsonutil
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target
from switchgate.providers.embed_batches import (
    GEMINI_BATCH_LIMIT,
    MAX_BATCHES_IN_FLIGHT,
    BatchAnswer,
    merge_batches,
    split_batches,
)
from switchgate.providers.embeddings import parse_gemini_embed
from switchgate.providers.gemini_embed import build_embed_request
from switchgate.relay.fanout import gather_bounded
from switchgate.testing import MockUpstream, start_mock_upstream
from switchgate.testing.mock_upstream.assets import embed_vector

# ---------------------------------------------------------------- split


def test_split_in_batches_of_at_most_100() -> None:
    assert GEMINI_BATCH_LIMIT == 100 and MAX_BATCHES_IN_FLIGHT == 4
    assert split_batches(250) == [range(0, 100), range(100, 200), range(200, 250)]
    assert split_batches(100) == [range(0, 100)]
    assert split_batches(101) == [range(0, 100), range(100, 101)]
    assert split_batches(1) == [range(0, 1)]
    assert split_batches(0) == []
    assert split_batches(2048)[-1] == range(2000, 2048) and len(split_batches(2048)) == 21
    assert split_batches(5, limit=2) == [range(0, 2), range(2, 4), range(4, 5)]
    with pytest.raises(ValueError):
        split_batches(5, limit=0)


def test_split_covers_every_index_once_in_order() -> None:
    for count in (1, 99, 100, 199, 200, 201, 777, 2048):
        batches = split_batches(count)
        assert [i for batch in batches for i in batch] == list(range(count))
        assert all(1 <= len(batch) <= GEMINI_BATCH_LIMIT for batch in batches)


# ---------------------------------------------------------------- merge


def _answer(batch: range, tokens: int) -> BatchAnswer:
    return BatchAnswer([[float(i), -float(i)] for i in batch], tokens)


def test_merge_keeps_input_order_and_sums_tokens() -> None:
    batches = split_batches(250)
    merged = merge_batches(batches, [_answer(b, 10 + n) for n, b in enumerate(batches)])
    assert merged.vectors == [[float(i), -float(i)] for i in range(250)]
    assert merged.input_tokens == 10 + 11 + 12


def test_merge_of_one_batch_is_that_batch() -> None:
    answer = _answer(range(0, 3), 7)
    assert merge_batches([range(0, 3)], [answer]) == answer


def test_merge_rejects_wrong_counts_and_order() -> None:
    batches = split_batches(150)
    short = BatchAnswer([[1.0]] * 49, 1)
    with pytest.raises(ValueError, match="wrong number of embeddings"):
        merge_batches(batches, [_answer(batches[0], 1), short])
    with pytest.raises(ValueError):
        merge_batches(batches, [_answer(batches[0], 1)])
    with pytest.raises(ValueError, match="out of order"):
        merge_batches(batches[::-1], [_answer(b, 1) for b in batches[::-1]])


# ---------------------------------------------------------------- bounded fan-out


class Probe:
    """Jobs that record how many run at once."""

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0
        self.started: list[int] = []
        self.cancelled: list[int] = []

    def job(
        self, index: int, delay: float, fail: Exception | None = None
    ) -> Callable[[], Awaitable[int]]:
        async def run() -> int:
            self.started.append(index)
            self.running += 1
            self.peak = max(self.peak, self.running)
            try:
                await asyncio.sleep(delay)
                if fail is not None:
                    raise fail
                return index * 10
            except asyncio.CancelledError:
                self.cancelled.append(index)
                raise
            finally:
                self.running -= 1

        return run


async def test_gather_bounded_keeps_order_and_the_bound() -> None:
    probe = Probe()
    # later jobs finish first: the results still come back in the jobs' order
    jobs = [probe.job(i, 0.002 * (10 - i)) for i in range(10)]
    assert await gather_bounded(jobs, 4) == [i * 10 for i in range(10)]
    assert probe.peak == 4
    assert probe.started[:4] == [0, 1, 2, 3]
    assert sorted(probe.started) == list(range(10))


async def test_gather_bounded_with_fewer_jobs_than_the_bound() -> None:
    probe = Probe()
    assert await gather_bounded([probe.job(0, 0), probe.job(1, 0)], 4) == [0, 10]
    assert await gather_bounded([], 4) == []
    with pytest.raises(ValueError):
        await gather_bounded([probe.job(0, 0)], 0)


async def test_gather_bounded_raises_the_first_failure_and_cancels_the_rest() -> None:
    probe = Probe()
    error = GatewayError(ErrorKind.UPSTREAM_OVERLOADED, "overloaded")
    jobs = [probe.job(0, 0.5), probe.job(1, 0.01, fail=error), *(probe.job(i, 0.5) for i in (2, 3))]
    jobs += [probe.job(i, 0.5) for i in range(4, 10)]
    with pytest.raises(GatewayError) as raised:
        await gather_bounded(jobs, 4)
    assert raised.value is error, "the job's own exception, not an ExceptionGroup"
    assert sorted(probe.cancelled) == [0, 2, 3]
    assert probe.running == 0
    assert max(probe.started) <= 4, "nothing more is started after a failure"


async def test_cancelling_the_caller_cancels_the_jobs() -> None:
    probe = Probe()
    task = asyncio.ensure_future(gather_bounded([probe.job(i, 5) for i in range(6)], 4))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sorted(probe.cancelled) == [0, 1, 2, 3] and probe.running == 0


# ---------------------------------------------------------------- requests


def test_a_gemini_request_holds_at_most_100_texts() -> None:
    target = Target("https://generativelanguage.googleapis.com/", "k", "gemini-embedding-001")
    body = jsonutil.loads(build_embed_request(["t"] * 100, target).body)
    assert len(body["requests"]) == 100
    with pytest.raises(ValueError):
        build_embed_request(["t"] * 101, target)


def _batch(count: int) -> dict[str, Any]:
    return {"requests": [{"content": {"parts": [{"text": f"t{i}"}]}} for i in range(count)]}


def test_the_gemini_dialect_keeps_geminis_limit() -> None:
    assert len(parse_gemini_embed(_batch(100), "batchEmbedContents", "m").texts) == 100
    with pytest.raises(GatewayError) as err:
        parse_gemini_embed(_batch(101), "batchEmbedContents", "m")
    assert err.value.status == 400 and err.value.param == "requests"
    assert err.value.message == (
        "* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch"
    )


# ---------------------------------------------------------------- the fake upstream


@pytest.fixture(scope="module")
async def upstream() -> AsyncIterator[MockUpstream]:
    up = await start_mock_upstream()
    yield up
    await up.close()


async def _post(upstream: MockUpstream, body: dict[str, Any]) -> tuple[int, Any]:
    url = f"{upstream.base_url}/v1beta/models/gemini-embedding-001:batchEmbedContents"
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, json=body, headers={"x-goog-api-key": "mock-key"}) as response,
    ):
        return response.status, await response.json()


async def test_the_fake_upstream_takes_at_most_100_requests(upstream: MockUpstream) -> None:
    status, body = await _post(upstream, _batch(100))
    assert status == 200 and len(body["embeddings"]) == 100
    assert body["embeddings"][7]["values"] == embed_vector("t7", 3072)
    status, body = await _post(upstream, _batch(101))
    assert status == 400
    assert body == {
        "error": {
            "code": 400,
            "message": "* BatchEmbedContentsRequest.requests: at most 100 requests "
            "can be in one batch",
            "status": "INVALID_ARGUMENT",
        }
    }


async def test_the_fake_upstream_applies_directives_of_any_request(
    upstream: MockUpstream,
) -> None:
    batch = _batch(5)
    batch["requests"][2]["content"]["parts"][0]["text"] = "fail [[mock:error=503]]"
    status, body = await _post(upstream, batch)
    assert status == 503 and body["error"]["status"] == "UNAVAILABLE"

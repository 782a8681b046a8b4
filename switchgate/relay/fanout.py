"""Run a few upstream calls of one client call concurrently, with a bound on how many are
in flight (used to send an embeddings call's batches to one channel)."""

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


async def gather_bounded(jobs: Sequence[Callable[[], Awaitable[T]]], limit: int) -> list[T]:
    """Await every job, at most `limit` at a time, started in order; the results come
    back in the jobs' order. The first job to fail cancels the others (nothing more is
    started) and its exception is raised as is. Cancelling the caller cancels them all."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    results: dict[int, T] = {}
    pending = iter(range(len(jobs)))

    async def worker() -> None:
        for index in pending:  # shared by the workers: each index is taken once
            results[index] = await jobs[index]()

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(min(limit, len(jobs))):
                group.create_task(worker())
    except BaseExceptionGroup as failed:
        raise _first_leaf(failed) from None
    return [results[i] for i in range(len(jobs))]

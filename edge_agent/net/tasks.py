"""Time limits and shutdown for the tasks of a long-running process (agent service, file peer, bridge)."""
from __future__ import annotations

import asyncio
import contextlib
from typing import Awaitable, Iterable, TypeVar

T = TypeVar("T")


async def cancel_and_wait(tasks: Iterable[asyncio.Task]) -> None:
    """Cancel every task, then wait for each to finish; their errors do not stop the shutdown."""
    tasks = list(tasks)
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


async def within(aw: Awaitable[T], timeout_s: float | None) -> T:
    """Await `aw` for at most `timeout_s` (None: no limit); TimeoutError past it.

    Python 3.11's asyncio.wait_for returns the result when a cancel arrives just as the awaited
    future completes, so the cancelled task carries on (gh-86296): a bridge closed at that moment
    then waited forever for its connection loop. asyncio.timeout lets the cancel through.
    """
    async with asyncio.timeout(timeout_s):
        return await aw

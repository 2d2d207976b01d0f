"""Ending the background tasks of a long-running process (agent service, file peer)."""
from __future__ import annotations

import asyncio
import contextlib
from typing import Iterable


async def cancel_and_wait(tasks: Iterable[asyncio.Task]) -> None:
    """Cancel every task, then wait for each to finish; their errors do not stop the shutdown."""
    tasks = list(tasks)
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task

"""GenerationLock: a FIFO async lock with an explicit waiter queue and wait statistics."""
from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from dataclasses import dataclass
from typing import AsyncIterator, Callable, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class LockStats:
    """A snapshot of the lock for status reports."""

    held: bool
    """Whether a generation is running now."""
    queue_depth: int
    """Waiters not yet served."""
    acquisitions: int
    """Generations served since start."""
    total_wait_ms: float
    """Sum of all waits."""
    max_wait_ms: float
    """Longest single wait."""


class GenerationLock:
    """Serves generations one at a time, strictly in arrival order.

    asyncio.Lock does not promise FIFO hand-off when a waiter is cancelled at the wrong moment,
    and it cannot say how many are waiting; this lock keeps its own queue of futures so both are
    explicit. A cancelled waiter removes itself, and if it had already been handed the lock it
    passes it on, so the queue never stalls.
    """

    def __init__(self) -> None:
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._held = False
        self._acquisitions = 0
        self._total_wait_ms = 0.0
        self._max_wait_ms = 0.0

    @property
    def queue_depth(self) -> int:
        """Waiters still queued (not counting the holder)."""
        return sum(1 for w in self._waiters if not w.done())

    @property
    def held(self) -> bool:
        return self._held

    def stats(self) -> LockStats:
        return LockStats(self._held, self.queue_depth, self._acquisitions,
                         self._total_wait_ms, self._max_wait_ms)

    async def acquire(self, on_queued: Callable[[int], None] | None = None) -> float:
        """Wait for the lock; returns the wait in ms. `on_queued(position)` fires if it must wait."""
        start = time.perf_counter()
        if not self._held and not self._waiters:
            self._held = True
        else:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            if on_queued is not None:
                on_queued(len(self._waiters))
            try:
                await fut
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    # We were handed the lock but are leaving: hand it on.
                    self._held = True
                    self.release()
                else:
                    with contextlib.suppress(ValueError):
                        self._waiters.remove(fut)
                raise
        waited = (time.perf_counter() - start) * 1000
        self._acquisitions += 1
        self._total_wait_ms += waited
        self._max_wait_ms = max(self._max_wait_ms, waited)
        return waited

    def release(self) -> None:
        if not self._held:
            raise RuntimeError("GenerationLock released while not held")
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)  # ownership passes directly; _held stays True
                return
        self._held = False

    @contextlib.asynccontextmanager
    async def hold(self, on_queued: Callable[[int], None] | None = None) -> AsyncIterator[float]:
        """`async with lock.hold() as wait_ms:` — the body runs alone."""
        waited = await self.acquire(on_queued)
        try:
            yield waited
        finally:
            self.release()


async def finish_thread(fut: "asyncio.Future[T]", on_cancel: Callable[[], None]) -> T:
    """Await a worker thread's future. If the awaiting task is cancelled, tell the thread to stop
    (`on_cancel`), wait until it has really returned — further cancellations included — and only
    then re-raise: whoever holds a lock around this keeps it while native code still runs."""
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        on_cancel()
        while not fut.done():
            try:
                await asyncio.wait({fut})
            except asyncio.CancelledError:
                continue
        if not fut.cancelled():
            fut.exception()  # retrieved: the caller is leaving, its result no longer matters
        raise

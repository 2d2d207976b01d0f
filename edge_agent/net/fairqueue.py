"""The agent's request queue: first in, first out within one asker, round robin between askers.

One asker who sends many questions waits behind their own, never in front of everyone else's:
the worker takes the oldest question of the next asker in turn. `pending(sender)` counts what an
asker has queued or running, for the per-asker limit.
"""
from __future__ import annotations

import asyncio
import collections
from typing import Generic, TypeVar

T = TypeVar("T")


class FairQueue(Generic[T]):
    """Items keyed by their sender; get() serves senders in turn."""

    def __init__(self) -> None:
        self._by_sender: dict[str, collections.deque[T]] = {}
        self._turns: collections.deque[str] = collections.deque()  # senders with items, next first
        self._running: collections.Counter[str] = collections.Counter()
        self._ready = asyncio.Event()
        self._size = 0

    def qsize(self) -> int:
        """Items waiting (not the ones running)."""
        return self._size

    def pending(self, sender: str) -> int:
        """Items of `sender` waiting or running."""
        return len(self._by_sender.get(sender, ())) + self._running[sender]

    def position(self, sender: str) -> int:
        """How many waiting items get served before a new item of `sender` would: round robin means
        each other sender contributes at most as many as `sender` already has waiting, plus one."""
        own = len(self._by_sender.get(sender, ()))
        return own + sum(min(len(q), own + 1) for s, q in self._by_sender.items() if s != sender)

    def put_nowait(self, sender: str, item: T) -> None:
        queue = self._by_sender.setdefault(sender, collections.deque())
        if not queue:
            self._turns.append(sender)
        queue.append(item)
        self._size += 1
        self._ready.set()

    async def get(self) -> tuple[str, T]:
        """The next (sender, item); the item counts as running for its sender until done(sender)."""
        while not self._turns:
            self._ready.clear()
            await self._ready.wait()
        sender = self._turns.popleft()
        queue = self._by_sender[sender]
        item = queue.popleft()
        if queue:
            self._turns.append(sender)  # its next item waits for everyone else's turn
        else:
            del self._by_sender[sender]
        self._size -= 1
        self._running[sender] += 1
        return sender, item

    def done(self, sender: str) -> None:
        """The item get() returned for `sender` has finished."""
        self._running[sender] -= 1
        if self._running[sender] <= 0:
            del self._running[sender]

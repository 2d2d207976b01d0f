"""GenerationLock: FIFO order, cancellation, statistics (no model needed)."""
import asyncio

import pytest

from edge_agent.llm.lock import GenerationLock


async def test_fifo_order_under_contention():
    lock = GenerationLock()
    order = []

    async def worker(i):
        async with lock.hold():
            order.append(("start", i))
            await asyncio.sleep(0.01)
            order.append(("end", i))

    tasks = []
    for i in range(5):
        tasks.append(asyncio.create_task(worker(i)))
        await asyncio.sleep(0)  # arrival order = creation order
    await asyncio.gather(*tasks)
    assert order == [(k, i) for i in range(5) for k in ("start", "end")]


async def test_cancelled_waiter_leaves_queue_and_next_runs():
    lock = GenerationLock()
    ran = []
    await lock.acquire()
    a = asyncio.create_task(lock.acquire())
    await asyncio.sleep(0)
    b_done = asyncio.Event()

    async def b():
        async with lock.hold():
            ran.append("b")
            b_done.set()

    bt = asyncio.create_task(b())
    await asyncio.sleep(0)
    assert lock.queue_depth == 2
    a.cancel()
    with pytest.raises(asyncio.CancelledError):
        await a
    assert lock.queue_depth == 1
    lock.release()
    await asyncio.wait_for(b_done.wait(), 1)
    await bt
    assert ran == ["b"] and not lock.held


async def test_waiter_cancelled_after_handoff_passes_lock_on():
    lock = GenerationLock()
    await lock.acquire()
    a = asyncio.create_task(lock.acquire())
    await asyncio.sleep(0)
    c = asyncio.create_task(lock.acquire())
    await asyncio.sleep(0)
    lock.release()  # hands the lock to a's future...
    a.cancel()      # ...but a is cancelled before it resumes
    with pytest.raises(asyncio.CancelledError):
        await a
    await asyncio.wait_for(c, 1)  # c must get it
    assert lock.held
    lock.release()
    assert not lock.held and lock.queue_depth == 0


async def test_stats_report_depth_and_wait():
    lock = GenerationLock()
    positions = []
    await lock.acquire()
    t = asyncio.create_task(lock.acquire(on_queued=positions.append))
    await asyncio.sleep(0.02)
    assert lock.stats().queue_depth == 1 and positions == [1]
    lock.release()
    waited = await t
    assert waited >= 15
    lock.release()
    s = lock.stats()
    assert s.acquisitions == 2 and s.max_wait_ms >= 15 and s.queue_depth == 0


def test_release_unheld_is_an_error():
    with pytest.raises(RuntimeError):
        GenerationLock().release()

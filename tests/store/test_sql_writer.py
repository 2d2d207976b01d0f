"""Two coroutines writing on one connection never commit or roll back each other's work."""
import asyncio

import pytest

from edge_agent.store.sql import fetch_all, transaction


async def _table(store) -> None:
    await store.conn.execute("CREATE TABLE IF NOT EXISTS t (who TEXT NOT NULL)")


async def _rows(store) -> list[str]:
    return sorted(r[0] for r in await fetch_all(store.conn, "SELECT who FROM t"))


class Boom(Exception):
    pass


async def test_a_failing_writer_does_not_roll_back_a_concurrent_one(store):
    await _table(store)
    a_inside = asyncio.Event()

    async def failing():
        async with transaction(store.conn):
            await store.conn.execute("INSERT INTO t VALUES ('a')")
            a_inside.set()
            await asyncio.sleep(0.05)  # b runs meanwhile
            raise Boom

    async def succeeding():
        await a_inside.wait()
        async with transaction(store.conn):
            await store.conn.execute("INSERT INTO t VALUES ('b')")

    results = await asyncio.gather(failing(), succeeding(), return_exceptions=True)
    assert isinstance(results[0], Boom) and results[1] is None
    assert await _rows(store) == ["b"]


async def test_a_committing_writer_does_not_commit_a_concurrent_failure(store):
    await _table(store)
    a_inside = asyncio.Event()

    async def committing():
        async with transaction(store.conn):
            await store.conn.execute("INSERT INTO t VALUES ('a')")
            a_inside.set()
            await asyncio.sleep(0.05)

    async def failing():
        await a_inside.wait()
        async with transaction(store.conn):
            await store.conn.execute("INSERT INTO t VALUES ('b')")
            raise Boom

    results = await asyncio.gather(committing(), failing(), return_exceptions=True)
    assert results[0] is None and isinstance(results[1], Boom)
    assert await _rows(store) == ["a"]


async def test_nested_use_in_one_task_joins_the_outer_transaction(store):
    await _table(store)
    with pytest.raises(Boom):
        async with transaction(store.conn):
            await store.conn.execute("INSERT INTO t VALUES ('outer')")
            async with transaction(store.conn):
                await store.conn.execute("INSERT INTO t VALUES ('inner')")
            raise Boom
    assert await _rows(store) == []
    async with transaction(store.conn):
        async with transaction(store.conn):
            await store.conn.execute("INSERT INTO t VALUES ('inner')")
    assert await _rows(store) == ["inner"]

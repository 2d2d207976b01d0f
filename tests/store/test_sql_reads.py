"""A read on a shared connection leaves no statement open for another coroutine's write to trip on.

aiosqlite runs each call of a connection on its thread, in turn: a cursor read in three calls
(execute, fetch, close) holds a read transaction across two awaits. A write another coroutine
queues on the same connection in between cannot wait for a lock (SQLite refuses to upgrade an
open read transaction and skips the busy timeout): "database is locked" at once, when a second
connection (the harness's, beside the request log's) writes meanwhile.
"""
import asyncio
import sqlite3
import threading
import time

import aiosqlite

from edge_agent.store.db import connect
from edge_agent.store.sql import fetch_all, fetch_one

ROUNDS = 300


async def test_reads_and_writes_on_one_connection_never_see_a_lock_while_another_connection_writes(tmp_path):
    path = tmp_path / "shared.db"
    conn = await connect(path)
    try:
        await conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v INTEGER NOT NULL)")
        await conn.execute("CREATE TABLE other (v INTEGER)")
        await conn.execute("INSERT INTO t VALUES (1, 0)")
        stop = threading.Event()

        def other_writer() -> None:
            """Another connection committing a small write every half millisecond (the harness's traces)."""
            db = sqlite3.connect(path, timeout=5, isolation_level=None)
            while not stop.is_set():
                db.execute("INSERT INTO other VALUES (1)")
                time.sleep(0.0005)
            db.close()

        thread = threading.Thread(target=other_writer)
        thread.start()
        errors: list[str] = []

        async def write() -> None:
            try:
                await (await conn.execute("UPDATE t SET v = v + 1 WHERE k = 1")).close()
            except sqlite3.OperationalError as err:
                errors.append(str(err))

        try:
            for _ in range(ROUNDS):
                await asyncio.gather(fetch_one(conn, "SELECT v FROM t WHERE k = 1"), write(),
                                     fetch_all(conn, "SELECT k FROM t"), write())
        finally:
            stop.set()
            thread.join()
        assert errors == []
        row = await fetch_one(conn, "SELECT v FROM t WHERE k = 1")
        assert row[0] == 2 * ROUNDS
    finally:
        await conn.close()


async def test_fetch_one_takes_the_first_row_and_a_returning_write_is_done(tmp_path):
    conn = await aiosqlite.connect(str(tmp_path / "one.db"), isolation_level=None)
    try:
        await conn.execute("CREATE TABLE t (k INTEGER PRIMARY KEY)")
        assert await fetch_one(conn, "SELECT k FROM t") is None
        got = await fetch_one(conn, "INSERT INTO t VALUES (?), (?) RETURNING k", (5, 6))
        assert got[0] in (5, 6)
        assert [r[0] for r in await fetch_all(conn, "SELECT k FROM t ORDER BY k")] == [5, 6]  # both rows written
        assert conn.in_transaction is False
    finally:
        await conn.close()

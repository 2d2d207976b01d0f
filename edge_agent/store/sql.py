"""Small SQL helpers shared by the store's repositories."""
from __future__ import annotations

import asyncio
import contextlib
import weakref
from typing import Any, AsyncIterator, Iterable

import aiosqlite


class _WriterLock:
    """One writer at a time on a connection, re-entrant for the task that holds it.

    aiosqlite runs every statement of a connection on one thread, so two coroutines sharing it
    share one SQLite transaction: without this, a coroutine's BEGIN..COMMIT would silently take
    in (and commit, or roll back) another coroutine's statements.
    """

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.owner: asyncio.Task | None = None
        self.depth = 0


_WRITERS: "weakref.WeakKeyDictionary[aiosqlite.Connection, _WriterLock]" = weakref.WeakKeyDictionary()


@contextlib.asynccontextmanager
async def writer(conn: aiosqlite.Connection) -> AsyncIterator[bool]:
    """Hold `conn`'s single-writer lock; yields True for the outermost holder (the one that commits)."""
    state = _WRITERS.get(conn)
    if state is None:
        state = _WRITERS[conn] = _WriterLock()
    me = asyncio.current_task()
    if state.owner is me and me is not None:
        state.depth += 1
        try:
            yield False
        finally:
            state.depth -= 1
        return
    async with state.lock:
        state.owner, state.depth = me, 1
        try:
            yield True
        finally:
            state.owner, state.depth = None, 0


@contextlib.asynccontextmanager
async def transaction(conn: aiosqlite.Connection) -> AsyncIterator[None]:
    """BEGIN IMMEDIATE .. COMMIT (ROLLBACK on error) under the connection's single-writer lock.

    Nested use within one task joins the outer transaction; another task waits for it to end,
    so it can neither commit nor roll back work that is not its own.
    """
    async with writer(conn) as outermost:
        if not outermost:
            yield
            return
        await conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            await conn.rollback()
            raise
        await conn.commit()


async def fetch_all(conn: aiosqlite.Connection, sql: str, params: Iterable[Any] = ()) -> list[aiosqlite.Row]:
    """Every row, read to the end in one call on the connection's thread.

    A cursor read in steps (execute, fetch, close) holds a read transaction across awaits; a write
    another coroutine puts on the connection in between cannot wait for the lock (SQLite will not
    upgrade an open read) and fails with "database is locked" when another connection has written.
    """
    return list(await conn.execute_fetchall(sql, tuple(params)))


async def fetch_one(conn: aiosqlite.Connection, sql: str, params: Iterable[Any] = ()) -> aiosqlite.Row | None:
    """The first row (or None), the statement run to its end like fetch_all's (a RETURNING write
    is complete when this returns)."""
    rows = await fetch_all(conn, sql, params)
    return rows[0] if rows else None


def field_fts_names(table: str, fields: list[str]) -> dict[str, str]:
    """FTS5 table name of each searchable field: {field: "<table>_<field>_fts"}."""
    return {f: f"{table}_{f}_fts" for f in fields}


def field_fts_schema(table: str, fields: list[str], tokenize: str) -> list[str]:
    """One external-content FTS5 table a field, plus triggers keeping them all in step with `table`.

    A table a field (not one multi-column table) because FTS5's bm25() normalises by the length
    of the whole row: a long body would drown a title hit. Scored separately, each field is
    normalised by its own length and the weights mean what they say (a BM25F-like sum).
    """
    names = field_fts_names(table, fields)
    stmts = [f"CREATE VIRTUAL TABLE {fts} USING fts5({field}, content='{table}', content_rowid='id',"
             f" tokenize='{tokenize}')" for field, fts in names.items()]
    ins = " ".join(f"INSERT INTO {fts}(rowid, {f}) VALUES (new.id, new.{f});" for f, fts in names.items())
    dele = " ".join(f"INSERT INTO {fts}({fts}, rowid, {f}) VALUES ('delete', old.id, old.{f});"
                    for f, fts in names.items())
    stmts += [f"CREATE TRIGGER {table}_fts_ai AFTER INSERT ON {table} BEGIN {ins} END",
              f"CREATE TRIGGER {table}_fts_ad AFTER DELETE ON {table} BEGIN {dele} END",
              f"CREATE TRIGGER {table}_fts_au AFTER UPDATE ON {table} BEGIN {dele} {ins} END"]
    return stmts


def ranked_sql(table: str, weights: dict[str, float], decimals: int, where: str = "",
               tiebreak: str = "id DESC") -> str:
    """SELECT rows of `table` matching ?-per-field, with `score` = -(sum of weight x bm25), best first.

    Parameters, in order: the MATCH expression once a field, then those of `where`, then LIMIT.
    """
    names = field_fts_names(table, list(weights))
    ctes = ", ".join(f"m_{f} AS (SELECT rowid AS id, bm25({fts}) AS s FROM {fts} WHERE {fts} MATCH ?)"
                     for f, fts in names.items())
    joins = " ".join(f"LEFT JOIN m_{f} ON m_{f}.id = t.id" for f in names)
    total = " + ".join(f"{w} * coalesce(m_{f}.s, 0)" for f, w in weights.items())
    any_hit = " OR ".join(f"m_{f}.id IS NOT NULL" for f in names)
    extra = f" AND ({where})" if where else ""
    return (f"WITH {ctes} SELECT t.*, round(-({total}), {decimals}) AS score FROM {table} t {joins}"
            f" WHERE ({any_hit}){extra} ORDER BY score DESC, t.{tiebreak}, t.id DESC LIMIT ?")


async def rebuild_field_fts(conn: aiosqlite.Connection, table: str, fields: list[str], tokenize: str) -> None:
    """Recreate `table`'s per-field FTS5 tables and triggers with `tokenize`, re-indexing every row.

    For a migration that changes the tokenizer: the rows stay, only the index is rebuilt.
    """
    for suffix in ("ai", "ad", "au"):
        await conn.execute(f"DROP TRIGGER IF EXISTS {table}_fts_{suffix}")
    for fts in field_fts_names(table, fields).values():
        await conn.execute(f"DROP TABLE IF EXISTS {fts}")
    for sql in field_fts_schema(table, fields, tokenize):
        await conn.execute(sql)
    for fts in field_fts_names(table, fields).values():
        await conn.execute(f"INSERT INTO {fts}({fts}) VALUES ('rebuild')")

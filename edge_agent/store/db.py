"""The one SQLite file: aiosqlite connection (WAL, busy timeout) and named migrations.

Each store module that owns tables declares `MIGRATION_ORDER` (an int) and `MIGRATIONS`, a list
of named async functions taking the connection. Every migration is applied once, in module
order then list order, and recorded by name in `_migrations` (after simonw/llm).
"""
from __future__ import annotations

import importlib
import logging
import pkgutil
import sqlite3
import time
from pathlib import Path
from typing import Awaitable, Callable

import aiosqlite

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 5000  # wait this long for another writer before "database is locked"

Migration = Callable[[aiosqlite.Connection], Awaitable[None]]


def _migration_modules() -> list:
    import edge_agent.store as pkg

    mods = []
    for info in pkgutil.iter_modules(pkg.__path__):
        module = importlib.import_module(f"edge_agent.store.{info.name}")
        if hasattr(module, "MIGRATIONS"):
            mods.append(module)
    return sorted(mods, key=lambda m: (getattr(m, "MIGRATION_ORDER", 100), m.__name__))


def all_migrations() -> list[tuple[str, Migration]]:
    """(name, function) for every migration the code knows, in the order they apply."""
    out = []
    for module in _migration_modules():
        for fn in module.MIGRATIONS:
            out.append((fn.__name__, fn))
    names = [n for n, _ in out]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise RuntimeError(f"duplicate migration names: {sorted(dupes)}")
    return out


async def migrate(conn: aiosqlite.Connection) -> list[str]:
    """Apply pending migrations; returns the names applied now."""
    await conn.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    async with conn.execute("SELECT name FROM _migrations") as cur:
        done = {row[0] for row in await cur.fetchall()}
    applied = []
    for name, fn in all_migrations():
        if name in done:
            continue
        try:
            # IMMEDIATE: the write lock first. A deferred BEGIN reads a snapshot, and if another
            # connection commits before the migration's first write SQLite refuses the upgrade at
            # once ("database is locked", no busy wait): at start the service and the assistant
            # open their connections together.
            await conn.execute("BEGIN IMMEDIATE")
            await fn(conn)
            await conn.execute("INSERT INTO _migrations(name, applied_at) VALUES (?, ?)", (name, time.time()))
            await conn.commit()
        except Exception:
            await conn.rollback()
            raise
        applied.append(name)
        log.info("applied migration %s", name)
    return applied


class DatabaseDamaged(RuntimeError):
    """The database file is not a usable SQLite database; the message says what SQLite found."""


def damage(path: Path) -> str | None:
    """What is wrong with the database file (SQLite's `PRAGMA quick_check`), or None when it is
    sound or does not exist yet. Read-only: checking never creates or changes the file."""
    if not path.exists():
        return None
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000) as db:
            rows = [r[0] for r in db.execute("PRAGMA quick_check").fetchall()]
    except sqlite3.DatabaseError as err:
        return str(err)
    return None if rows == ["ok"] else "; ".join(map(str, rows[:3]))


async def connect(path: Path) -> aiosqlite.Connection:
    """Open (creating) the database file with WAL, a busy timeout and all migrations applied;
    DatabaseDamaged, at once and with SQLite's own words, for a file that is no sound database."""
    path.parent.mkdir(parents=True, exist_ok=True)
    problem = damage(path)
    if problem is not None:
        raise DatabaseDamaged(f"{path} is damaged ({problem}); move it aside to start with an empty one, "
                              f"or restore a backup")
    conn = await aiosqlite.connect(str(path), isolation_level=None)
    conn.row_factory = aiosqlite.Row
    await conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")  # first: switching to WAL may wait for a lock
    await conn.execute("PRAGMA journal_mode=WAL")
    await conn.execute("PRAGMA foreign_keys=ON")
    await conn.execute("PRAGMA synchronous=NORMAL")
    await migrate(conn)
    return conn

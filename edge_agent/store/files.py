"""The file index: the user's files on each device, searchable by name, folders, kind and text.

`search_files` and `index_paths` are pure functions of a connection so the file peer on another
device can serve the same search over MQTT. Texts are split into passages (store.passages) so a
hit brings its best ones. Only files whose real path is inside a root are indexed, and a row is
served only while that still holds. Walking, stat and extraction run in worker threads.
"""
from __future__ import annotations

import asyncio
import logging
import os
import stat
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import aiosqlite

from edge_agent.store.extract import ExtractionError, Extracted, describe, extract
from edge_agent.store import passages
from edge_agent.store.match import ranked_search
from edge_agent.store.sql import fetch_all, fetch_one, field_fts_schema, rebuild_field_fts, transaction
from edge_agent.store.text import FIRST_TOKENIZE, FTS_TOKENIZE, name_terms, query_plan

log = logging.getLogger(__name__)

MIGRATION_ORDER = 10

FIELD_WEIGHTS = {"name_terms": 4.0, "dirs": 2.0, "meta": 1.0, "text": 1.0}
"""bm25 weight of a hit in the file's name, its folder names, its kind words and its text."""
DEFAULT_LIMIT = 5  # hits a search returns
READ_SLACK = 3  # extra rows fetched so a hit refused at read time does not shorten the list
FILE_TIME_CAP_S = 20.0  # one file's reading and text extraction; past it, indexed by name and metadata

Progress = Callable[[int, int], None]
"""progress(done, total) during indexing."""


async def files_001_create(conn: aiosqlite.Connection) -> None:
    await conn.execute(
        "CREATE TABLE files (id INTEGER PRIMARY KEY, device TEXT NOT NULL, path TEXT NOT NULL,"
        " root TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL, size INTEGER NOT NULL,"
        " mtime REAL NOT NULL, name_terms TEXT NOT NULL, dirs TEXT NOT NULL, meta TEXT NOT NULL,"
        " text TEXT NOT NULL, UNIQUE(device, path))")
    for sql in field_fts_schema("files", list(FIELD_WEIGHTS), FIRST_TOKENIZE):
        await conn.execute(sql)
    await conn.execute("CREATE TABLE devices (id TEXT PRIMARY KEY, name TEXT NOT NULL)")


async def files_002_porter_passages(conn: aiosqlite.Connection) -> None:
    """Re-index with the stemming tokenizer and split every file's text into indexed passages."""
    await rebuild_field_fts(conn, "files", list(FIELD_WEIGHTS), FTS_TOKENIZE)
    await passages.create_tables(conn, FTS_TOKENIZE)
    for row in await fetch_all(conn, "SELECT id, text FROM files WHERE text != ''"):
        await passages.replace_passages(conn, row["id"], row["text"])


MIGRATIONS = [files_001_create, files_002_porter_passages]


@dataclass
class IndexReport:
    """What one indexing pass did."""

    device: str
    """Device the files were indexed under."""
    scanned: int = 0
    """Files found under the roots."""
    indexed: int = 0
    """New or changed files (re)indexed."""
    unchanged: int = 0
    """Files skipped because size and mtime were unchanged."""
    removed: int = 0
    """Index rows dropped because their file is gone."""
    rejects: list[str] = field(default_factory=list)
    """One line a problem: "path: why" (a file whose text is unreadable is still indexed by name)."""


def _iso(mtime: float) -> str:
    return datetime.fromtimestamp(mtime, timezone.utc).isoformat(timespec="seconds")


def _hit(ranked, found: list[dict]) -> dict:
    row = ranked.row
    return {"device": row["device"], "path": row["path"], "name": row["name"], "kind": row["kind"],
            "size": row["size"], "mtime": _iso(row["mtime"]),
            "excerpt": passages.PASSAGE_SEPARATOR.join(p["text"] for p in found),
            "snippet": found[0]["snippet"] if found else "", "passages": [p["seq"] for p in found],
            "matched": list(ranked.matched), "strength": ranked.strength, "score": float(row["score"])}


def inside(path: str | Path, root: str | Path) -> bool:
    """Whether `path`'s real location (every symlink resolved) is `root` or below it."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def _served(row: aiosqlite.Row) -> bool:
    # Checked again at read time: a file swapped for a symlink after indexing must not leak out.
    if inside(row["path"], row["root"]):
        return True
    log.warning("not serving %s: it now resolves outside its root %s", row["path"], row["root"])
    return False


async def search_files(conn: aiosqlite.Connection, query: str, devices: list[str] | None = None,
                       limit: int = DEFAULT_LIMIT) -> list[dict]:
    """Best hits for `query` among the devices' files (all when devices is empty), best first.

    Each hit carries its best passages as `excerpt` (best first), the query terms it matched
    and its strength (all | most | some).
    """
    where = f"t.device IN ({', '.join('?' for _ in devices)})" if devices else ""
    ranked = await ranked_search(conn, "files", FIELD_WEIGHTS, query, limit + READ_SLACK, where=where,
                                 where_params=list(devices or []), tiebreak="mtime DESC")
    ranked = [r for r in ranked if _served(r.row)][:limit]
    found = await passages.best_passages(conn, [r.row["id"] for r in ranked], query_plan(query))
    return [_hit(r, found.get(r.row["id"], [])) for r in ranked]


def _walk(root: Path, rejects: list[str]) -> list[Path]:
    """Regular files under root whose real path stays inside root; hidden ones skipped, stable order.

    Folder symlinks are never followed (os.walk's followlinks=False); a file symlink is indexed
    only when its target is inside the root, so a link to /etc/passwd is refused, not served.
    """
    found = []

    def unreadable(err: OSError) -> None:
        rejects.append(f"{err.filename}: cannot read folder: {err.strerror or err}")

    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable, followlinks=False):
        kept = []
        for d in sorted(dirnames):
            if d.startswith("."):
                continue
            if os.path.islink(os.path.join(dirpath, d)):
                rejects.append(f"{Path(dirpath) / d}: folder symlink not followed")
                continue
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = Path(dirpath) / name
            if not inside(path, root):
                rejects.append(f"{path}: refused, it resolves outside the indexed folders")
                continue
            if not _regular(path):  # a named pipe, socket or device: reading it can block forever
                rejects.append(f"{path}: not a regular file, skipped")
                continue
            found.append(path)
    return found


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


async def _upsert(conn: aiosqlite.Connection, device: str, root: Path, path: Path, stat: os.stat_result,
                  facts: Extracted) -> None:
    rel = path.relative_to(root)
    dirs = " ".join([root.name, *rel.parent.parts])
    row = await fetch_one(
        conn, "INSERT INTO files(device, path, root, name, kind, size, mtime, name_terms, dirs, meta, text)"
              " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(device, path) DO UPDATE SET"
              " root=excluded.root, name=excluded.name, kind=excluded.kind, size=excluded.size,"
              " mtime=excluded.mtime, name_terms=excluded.name_terms, dirs=excluded.dirs, meta=excluded.meta,"
              " text=excluded.text RETURNING id",
        (device, str(path), str(root), path.name, facts.kind, stat.st_size, stat.st_mtime,
         name_terms(path.stem), dirs, facts.meta, facts.text))
    await passages.replace_passages(conn, row["id"], facts.text)


async def index_paths(conn: aiosqlite.Connection, device: str, roots: list[Path],
                      progress: Progress | None = None) -> IndexReport:
    """Index the files under `roots` as `device`'s; only new or changed files are read again."""
    report = IndexReport(device=device)
    await register_device(conn, device)
    plan: list[tuple[Path, Path]] = []
    walked: set[str] = set()
    for root in roots:
        root = Path(root).expanduser().resolve()
        if not await asyncio.to_thread(root.is_dir):  # a missing root (an unplugged disk) keeps its old index rows
            report.rejects.append(f"{root}: not a folder")
            continue
        walked.add(str(root))
        # os.walk and stat block: in a thread, so a re-index never delays a search reply.
        plan.extend((root, p) for p in await asyncio.to_thread(_walk, root, report.rejects))
    report.scanned = len(plan)
    known = {(r["root"], r["path"]): (r["mtime"], r["size"]) for r in await fetch_all(
        conn, "SELECT root, path, mtime, size FROM files WHERE device = ?", (device,))}
    seen: set[tuple[str, str]] = set()
    for done, (root, path) in enumerate(plan, 1):
        seen.add((str(root), str(path)))
        try:
            await _index_one(conn, report, known, device, root, path)
        except OutsideRoots as err:  # drop any row it had: it must not be served
            report.rejects.append(f"{path}: refused: {err}")
            seen.discard((str(root), str(path)))
        except OSError as err:  # vanished or unreadable between the walk and now: keep any old row
            report.rejects.append(f"{path}: cannot read: {err.strerror or err}")
        if progress:
            progress(done, len(plan))
    gone = [key for key in known if key[0] in walked and key not in seen]
    async with transaction(conn):
        for root, path in gone:
            await conn.execute("DELETE FROM files WHERE device = ? AND path = ?", (device, path))
    report.removed = len(gone)
    return report


class OutsideRoots(OSError):
    """A path that must not be served: it resolves outside the folders being indexed, or it is
    not a regular file."""


def _read_changed(root: Path, path: Path, before: tuple[float, int] | None
                  ) -> tuple[os.stat_result, Extracted | None, str | None]:
    """(stat, facts or None when unchanged, a reject line) for one file; blocking, run in a thread."""
    real = Path(os.path.realpath(path))
    if not inside(real, root):  # checked again here: the link may have changed since the walk
        raise OutsideRoots(f"{path} resolves outside {root}")
    st = real.stat()
    if not stat.S_ISREG(st.st_mode):  # swapped for a pipe or device since the walk
        raise OutsideRoots(f"{path} is not a regular file")
    if before == (st.st_mtime, st.st_size):
        return st, None, None
    try:
        return st, extract(real), None
    except ExtractionError as err:
        return st, describe(path), f"{path}: {err}; indexed by name and metadata only"


def in_daemon_thread(fn: Callable, *args) -> asyncio.Future:
    """`fn(*args)` in a daemon thread: unlike asyncio.to_thread's pool, a file that takes too long
    is left behind by wait_for and never holds the process at exit (SIGTERM stops a peer at once)."""
    loop = asyncio.get_running_loop()
    fut = loop.create_future()

    def settle(how: Callable[[], object]) -> None:
        try:
            loop.call_soon_threadsafe(how)
        except RuntimeError:  # the loop is closed: nobody waits for this file any more
            pass

    def run() -> None:
        try:
            result = fn(*args)
        except BaseException as err:  # handed to the awaiting task
            settle(lambda: fut.done() or fut.set_exception(err))
        else:
            settle(lambda: fut.done() or fut.set_result(result))

    threading.Thread(target=run, name="file-extract", daemon=True).start()
    return fut


async def _index_one(conn: aiosqlite.Connection, report: IndexReport, known: dict, device: str, root: Path,
                     path: Path) -> None:
    try:
        stat, facts, reject = await asyncio.wait_for(
            in_daemon_thread(_read_changed, root, path, known.get((str(root), str(path)))), FILE_TIME_CAP_S)
    except asyncio.TimeoutError:  # a pathological PDF: its name still finds it
        stat, facts = os.stat(path), describe(path)
        reject = f"{path}: reading took over {FILE_TIME_CAP_S:.0f} s; indexed by name and metadata only"
    if facts is None:
        report.unchanged += 1
        return
    if reject:
        report.rejects.append(reject)
    async with transaction(conn):
        await _upsert(conn, device, root, path, stat, facts)
    report.indexed += 1


async def register_device(conn: aiosqlite.Connection, device: str, name: str | None = None) -> None:
    """Remember a device id (and its display name, when given)."""
    async with transaction(conn):
        await conn.execute(
            "INSERT INTO devices(id, name) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET"
            " name = CASE WHEN ? IS NULL THEN devices.name ELSE excluded.name END",
            (device, name or device, name))


class FileIndexRepo:
    """The file index, bound to one connection."""

    def __init__(self, conn: aiosqlite.Connection):
        self.conn = conn

    async def search(self, query: str, devices: list[str] | None = None, limit: int = DEFAULT_LIMIT) -> list[dict]:
        return await search_files(self.conn, query, devices, limit)

    async def index(self, device: str, roots: list[Path], progress: Progress | None = None) -> IndexReport:
        return await index_paths(self.conn, device, roots, progress)

    async def register_device(self, device: str, name: str | None = None) -> None:
        await register_device(self.conn, device, name)

    async def devices(self) -> list[dict]:
        """Known devices: registered ones plus any that own indexed files, as {"id", "name"}."""
        rows = await fetch_all(
            self.conn, "SELECT id, name FROM devices UNION SELECT DISTINCT device, device FROM files"
                       " WHERE device NOT IN (SELECT id FROM devices) ORDER BY 1")
        return [{"id": r[0], "name": r[1]} for r in rows]

    async def count(self, device: str | None = None) -> int:
        if device:
            row = await fetch_one(self.conn, "SELECT count(*) FROM files WHERE device = ?", (device,))
        else:
            row = await fetch_one(self.conn, "SELECT count(*) FROM files")
        return int(row[0])

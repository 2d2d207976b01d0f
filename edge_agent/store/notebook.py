"""The notebook: distilled notes (facts about the user, a page a person, instructions, digests)."""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import asdict, dataclass
from typing import Literal, get_args

import aiosqlite

from edge_agent.store.match import ranked_search
from edge_agent.store.sql import fetch_all, fetch_one, field_fts_schema, rebuild_field_fts, transaction
from edge_agent.store.text import FIRST_TOKENIZE, FTS_TOKENIZE

log = logging.getLogger(__name__)

MIGRATION_ORDER = 10

NoteKind = Literal["fact", "person", "instruction", "digest"]
NOTE_KINDS: tuple[str, ...] = get_args(NoteKind)
FIELD_WEIGHTS = {"title": 3.0, "body": 1.0}  # bm25 weight of a hit in each field
DEFAULT_LIMIT = 5  # notes returned by a search or a browse


@dataclass(frozen=True)
class Note:
    """One notebook entry, as tools and the side channel see it."""

    id: int
    """Row id."""
    kind: str
    """fact | person | instruction | digest."""
    title: str
    """Short title; for a person, their name."""
    body: str
    """The note itself."""
    updated: str
    """Last change, YYYY-MM-DD."""
    matched: tuple[str, ...] = ()
    """The query terms it matched (search results only)."""
    strength: str = ""
    """all | most | some: how much of the query it matched (search results only)."""

    def to_payload(self) -> dict:
        out = asdict(self)
        if not self.strength:  # not from a search: no match to report
            out.pop("matched"), out.pop("strength")
        else:
            out["matched"] = list(self.matched)
        return out


async def notebook_001_create(conn: aiosqlite.Connection) -> None:
    await conn.execute(
        "CREATE TABLE notebook (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, title TEXT NOT NULL,"
        " body TEXT NOT NULL, updated TEXT NOT NULL)")
    await conn.execute("CREATE INDEX notebook_updated ON notebook(updated)")
    await conn.execute("CREATE INDEX notebook_kind_title ON notebook(kind, title)")
    for sql in field_fts_schema("notebook", list(FIELD_WEIGHTS), FIRST_TOKENIZE):
        await conn.execute(sql)


async def notebook_002_porter(conn: aiosqlite.Connection) -> None:
    """Re-index with the stemming tokenizer: "swimming" finds "swim"."""
    await rebuild_field_fts(conn, "notebook", list(FIELD_WEIGHTS), FTS_TOKENIZE)


MIGRATIONS = [notebook_001_create, notebook_002_porter]


def _note(row: aiosqlite.Row) -> Note:
    return Note(id=row["id"], kind=row["kind"], title=row["title"], body=row["body"], updated=row["updated"])


class NotebookRepo:
    """Queries and changes on the notebook table."""

    def __init__(self, conn: aiosqlite.Connection):
        self.conn = conn

    async def add(self, kind: str, title: str, body: str, updated: str) -> Note:
        if kind not in NOTE_KINDS:
            raise ValueError(f"note kind must be one of {', '.join(NOTE_KINDS)}, not {kind!r}")
        async with transaction(self.conn):
            cur = await self.conn.execute(
                "INSERT INTO notebook(kind, title, body, updated) VALUES (?, ?, ?, ?)",
                (kind, title, body, updated))
        return Note(cur.lastrowid, kind, title, body, updated)

    async def upsert(self, kind: str, title: str, body: str, updated: str) -> tuple[Note, bool]:
        """Insert, or update the note of the same kind and title; returns (note, created)."""
        async with transaction(self.conn):
            row = await fetch_one(self.conn, "SELECT id, body, updated FROM notebook WHERE kind = ? AND title = ?"
                                             " ORDER BY id LIMIT 1", (kind, title))
            if row is None:
                return await self.add(kind, title, body, updated), True
            if (row["body"], row["updated"]) != (body, updated):
                await self.conn.execute("UPDATE notebook SET body = ?, updated = ? WHERE id = ?",
                                        (body, updated, row["id"]))
        return Note(row["id"], kind, title, body, updated), False

    async def find(self, kind: str, title: str) -> Note | None:
        """The note with exactly this kind and title, if any."""
        row = await fetch_one(self.conn, "SELECT * FROM notebook WHERE kind = ? AND title = ? ORDER BY id LIMIT 1",
                              (kind, title))
        return _note(row) if row else None

    async def get(self, note_id: int) -> Note | None:
        row = await fetch_one(self.conn, "SELECT * FROM notebook WHERE id = ?", (note_id,))
        return _note(row) if row else None

    async def remove(self, note_id: int) -> bool:
        async with transaction(self.conn):
            cur = await self.conn.execute("DELETE FROM notebook WHERE id = ?", (note_id,))
        return cur.rowcount > 0

    async def recent(self, limit: int = DEFAULT_LIMIT, kind: str | None = None) -> list[Note]:
        where, params = ("WHERE kind = ?", [kind]) if kind else ("", [])
        rows = await fetch_all(self.conn, f"SELECT * FROM notebook {where} ORDER BY updated DESC, id DESC LIMIT ?",
                               [*params, limit])
        return [_note(r) for r in rows]

    async def count(self) -> int:
        row = await fetch_one(self.conn, "SELECT count(*) FROM notebook")
        return int(row[0])

    async def search(self, query: str, limit: int = DEFAULT_LIMIT) -> list[Note]:
        """Best matches for `query`, strongest match first (bm25 a field, title weighs more; newer wins a tie)."""
        ranked = await ranked_search(self.conn, "notebook", FIELD_WEIGHTS, query, limit, tiebreak="updated DESC")
        return [dataclasses.replace(_note(h.row), matched=tuple(h.matched), strength=h.strength) for h in ranked]

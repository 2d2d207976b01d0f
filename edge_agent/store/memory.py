"""The memory log: everything the user said, wrote, posted, messaged or talked about, over time."""
from __future__ import annotations

import hashlib
import logging
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Literal, get_args

import aiosqlite

from edge_agent.store.sql import fetch_all, fetch_one, field_fts_schema, ranked_sql, transaction
from edge_agent.store.text import FTS_TOKENIZE, SCORE_DECIMALS, fts_query

log = logging.getLogger(__name__)

MIGRATION_ORDER = 10

MemoryKind = Literal["chat", "journal", "post", "message", "call"]
MEMORY_KINDS: tuple[str, ...] = get_args(MemoryKind)
FIELD_WEIGHTS = {"who": 1.0, "text": 1.0}  # bm25 weight of a hit on who it is with/from and in the text
DEFAULT_LIMIT = 5  # entries returned by a search


@dataclass(frozen=True)
class MemoryEntry:
    """One entry of the memory log, as tools and the side channel see it."""

    id: int
    """Row id."""
    kind: str
    """chat | journal | post | message | call."""
    who: str
    """Who it was with or from ("me" for the user's own writing)."""
    when: str
    """ISO 8601 date-time with its UTC offset, as recorded."""
    text: str
    """What was said or written."""

    def to_payload(self) -> dict:
        return asdict(self)


async def memory_001_create(conn: aiosqlite.Connection) -> None:
    await conn.execute(
        "CREATE TABLE memory (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, who TEXT NOT NULL,"
        " at TEXT NOT NULL, at_utc TEXT NOT NULL, text TEXT NOT NULL, digest TEXT NOT NULL UNIQUE)")
    await conn.execute("CREATE INDEX memory_at_utc ON memory(at_utc)")
    for sql in field_fts_schema("memory", list(FIELD_WEIGHTS), FTS_TOKENIZE):
        await conn.execute(sql)


MIGRATIONS = [memory_001_create]


def parse_when(value: str) -> datetime:
    """An aware datetime from ISO 8601 text; a missing offset is an error (the log is global)."""
    try:
        when = datetime.fromisoformat(value)
    except (TypeError, ValueError) as err:
        raise ValueError(f"'when' is not an ISO 8601 date-time: {value!r}") from err
    if when.tzinfo is None:
        raise ValueError(f"'when' has no UTC offset: {value!r}")
    return when


def _digest(kind: str, who: str, when: datetime, text: str) -> str:
    # Same entry imported twice -> same digest -> ignored; the instant, not its spelling, counts.
    key = "\x1f".join([kind, who, when.astimezone(timezone.utc).isoformat(), text])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _entry(row: aiosqlite.Row) -> MemoryEntry:
    return MemoryEntry(id=row["id"], kind=row["kind"], who=row["who"], when=row["at"], text=row["text"])


class MemoryRepo:
    """Queries and changes on the memory log."""

    def __init__(self, conn: aiosqlite.Connection):
        self.conn = conn

    async def add(self, kind: str, who: str, when: str, text: str) -> bool:
        """Append an entry; returns False when the identical entry is already logged."""
        if kind not in MEMORY_KINDS:
            raise ValueError(f"memory kind must be one of {', '.join(MEMORY_KINDS)}, not {kind!r}")
        if not text.strip():
            raise ValueError("memory text is empty")
        at = parse_when(when)
        at_utc = at.astimezone(timezone.utc).isoformat()
        async with transaction(self.conn):
            cur = await self.conn.execute(
                "INSERT OR IGNORE INTO memory(kind, who, at, at_utc, text, digest) VALUES (?, ?, ?, ?, ?, ?)",
                (kind, who, at.isoformat(), at_utc, text, _digest(kind, who, at, text)))
        return cur.rowcount > 0

    async def count(self) -> int:
        row = await fetch_one(self.conn, "SELECT count(*) FROM memory")
        return int(row[0])

    async def recent(self, limit: int = DEFAULT_LIMIT) -> list[MemoryEntry]:
        rows = await fetch_all(self.conn, "SELECT * FROM memory ORDER BY at_utc DESC, id DESC LIMIT ?", (limit,))
        return [_entry(r) for r in rows]

    async def search(self, query: str, limit: int = DEFAULT_LIMIT) -> list[MemoryEntry]:
        """Best matches for `query` (bm25 on who and text; newer wins a tie); [] if none."""
        match = fts_query(query)
        if match is None:
            return []
        sql = ranked_sql("memory", FIELD_WEIGHTS, SCORE_DECIMALS, tiebreak="at_utc DESC")
        rows = await fetch_all(self.conn, sql, [match] * len(FIELD_WEIGHTS) + [limit])
        return [_entry(r) for r in rows]

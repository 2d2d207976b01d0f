"""The memory log: everything the user said, wrote, posted, messaged or talked about, over time."""
from __future__ import annotations

import dataclasses
import hashlib
import logging
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Literal, get_args

import aiosqlite

from edge_agent.store.match import ranked_search
from edge_agent.store.sql import fetch_all, fetch_one, field_fts_schema, rebuild_field_fts, transaction
from edge_agent.store.text import FIRST_TOKENIZE, FTS_TOKENIZE

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


async def memory_001_create(conn: aiosqlite.Connection) -> None:
    await conn.execute(
        "CREATE TABLE memory (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, who TEXT NOT NULL,"
        " at TEXT NOT NULL, at_utc TEXT NOT NULL, text TEXT NOT NULL, digest TEXT NOT NULL UNIQUE)")
    await conn.execute("CREATE INDEX memory_at_utc ON memory(at_utc)")
    for sql in field_fts_schema("memory", list(FIELD_WEIGHTS), FIRST_TOKENIZE):
        await conn.execute(sql)


async def memory_002_chat_log(conn: aiosqlite.Connection) -> None:
    """Logged exchanges get their own table: an asker's words are not the user's memory.

    Exchanges logged by earlier versions as memory entries (kind chat, who "user", "Asked: ...")
    move here, so a question planted before the upgrade stops being searchable as the user's own.
    """
    await conn.execute(
        "CREATE TABLE chat_log (id INTEGER PRIMARY KEY, asker TEXT NOT NULL, at TEXT NOT NULL,"
        " at_utc TEXT NOT NULL, question TEXT NOT NULL, answer TEXT NOT NULL, tools TEXT NOT NULL DEFAULT '')")
    await conn.execute("CREATE INDEX chat_log_at_utc ON chat_log(at_utc)")
    await conn.execute(
        "INSERT INTO chat_log(asker, at, at_utc, question, answer) SELECT 'unknown', at, at_utc,"
        " substr(text, 8, instr(text, char(10) || 'Answered: ') - 8),"
        " substr(text, instr(text, char(10) || 'Answered: ') + 11) FROM memory"
        " WHERE kind = 'chat' AND who = 'user' AND text LIKE 'Asked: %' AND instr(text, char(10) || 'Answered: ') > 0")
    await conn.execute("DELETE FROM memory WHERE kind = 'chat' AND who = 'user' AND text LIKE 'Asked: %'"
                       " AND instr(text, char(10) || 'Answered: ') > 0")


async def memory_003_porter(conn: aiosqlite.Connection) -> None:
    """Re-index with the stemming tokenizer: "running" finds "run"."""
    await rebuild_field_fts(conn, "memory", list(FIELD_WEIGHTS), FTS_TOKENIZE)


MIGRATIONS = [memory_001_create, memory_002_chat_log, memory_003_porter]


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


@dataclass(frozen=True)
class ChatExchange:
    """One logged question and its answer, kept apart from the user's memory log."""

    id: int
    """Row id."""
    asker: str
    """Who asked (the paired client's name), never assumed to be the user."""
    when: str
    """ISO 8601 date-time with its UTC offset."""
    question: str
    """The question, verbatim."""
    answer: str
    """The answer given."""
    tools: str
    """The tools the answer used, comma-separated."""


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

    async def log_chat(self, asker: str, when: str, question: str, answer: str, tools: list[str]) -> int:
        """Keep an answered exchange in the chat log (not searched by any tool); returns its id."""
        if not asker.strip():
            raise ValueError("a logged chat needs its asker")
        at = parse_when(when)
        async with transaction(self.conn):
            cur = await self.conn.execute(
                "INSERT INTO chat_log(asker, at, at_utc, question, answer, tools) VALUES (?, ?, ?, ?, ?, ?)",
                (asker, at.isoformat(), at.astimezone(timezone.utc).isoformat(), question, answer, ",".join(tools)))
        return int(cur.lastrowid)

    async def chats(self, asker: str | None = None, limit: int = DEFAULT_LIMIT) -> list[ChatExchange]:
        """The newest logged exchanges, of one asker or of all."""
        where, params = ("WHERE asker = ?", [asker]) if asker else ("", [])
        rows = await fetch_all(self.conn, f"SELECT * FROM chat_log {where} ORDER BY at_utc DESC, id DESC LIMIT ?",
                               [*params, limit])
        return [ChatExchange(r["id"], r["asker"], r["at"], r["question"], r["answer"], r["tools"]) for r in rows]

    async def count(self) -> int:
        row = await fetch_one(self.conn, "SELECT count(*) FROM memory")
        return int(row[0])

    async def recent(self, limit: int = DEFAULT_LIMIT) -> list[MemoryEntry]:
        rows = await fetch_all(self.conn, "SELECT * FROM memory ORDER BY at_utc DESC, id DESC LIMIT ?", (limit,))
        return [_entry(r) for r in rows]

    async def written_on(self, first_day: str, last_day: str, limit: int = DEFAULT_LIMIT) -> list[MemoryEntry]:
        """The entries written from `first_day` to `last_day` (YYYY-MM-DD, inclusive, the day as
        logged in its own time zone), newest first."""
        rows = await fetch_all(self.conn, "SELECT * FROM memory WHERE substr(at, 1, 10) BETWEEN ? AND ?"
                               " ORDER BY at_utc DESC, id DESC LIMIT ?", (first_day, last_day, limit))
        return [_entry(r) for r in rows]

    async def search(self, query: str, limit: int = DEFAULT_LIMIT) -> list[MemoryEntry]:
        """Best matches for `query`, strongest match first (bm25 on who and text; newer wins a tie)."""
        ranked = await ranked_search(self.conn, "memory", FIELD_WEIGHTS, query, limit, tiebreak="at_utc DESC")
        return [dataclasses.replace(_entry(h.row), matched=tuple(h.matched), strength=h.strength) for h in ranked]

"""Passages: a document's text split at ingest into bounded pieces, each indexed on its own.

A file hit answers with its best passages by BM25, so the clause that holds the answer (deep in
a lease, say) reaches the answer instead of a window around the first matching word. Passages
break at headings and blank lines; paragraphs are packed up to a target size, and an over-long
paragraph is cut at sentence, then word, boundaries.
"""
from __future__ import annotations

import re

import aiosqlite

from edge_agent.store.sql import fetch_all, field_fts_names, field_fts_schema
from edge_agent.store.text import QueryTerm, fts_query

PASSAGE_TARGET_CHARS = 420  # paragraphs are packed into a passage up to about this size
PASSAGE_MAX_CHARS = 700  # no passage is longer than this
PASSAGE_MIN_CHARS = 120  # a heading starts a new passage once the current one has this much
PASSAGES_PER_HIT = 3  # best passages a file hit carries to the answer
SNIPPET_TOKENS = 28  # words of the best passage shown to the model (FTS5 snippet())
PASSAGE_SEPARATOR = "\n…\n"  # between a hit's passages in its excerpt

_HEADING = re.compile(r"^(#{1,6}\s+\S.*|\d+(?:\.\d+)*\.?\s+[A-Z][^.:]{0,60}|[A-Z][^.:]{1,50}:)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")

TABLE = "file_passages"
FTS = field_fts_names(TABLE, ["text"])["text"]


async def create_tables(conn: aiosqlite.Connection, tokenize: str) -> None:
    await conn.execute(
        f"CREATE TABLE {TABLE} (id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id)"
        f" ON DELETE CASCADE, seq INTEGER NOT NULL, text TEXT NOT NULL)")
    await conn.execute(f"CREATE INDEX {TABLE}_file ON {TABLE}(file_id, seq)")
    for sql in field_fts_schema(TABLE, ["text"], tokenize):
        await conn.execute(sql)


def _blocks(text: str) -> list[str]:
    """Paragraphs: split at blank lines, and before every heading line."""
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        line = line.rstrip()
        if not line.strip():
            blocks.append([])
        elif _HEADING.match(line.strip()) and blocks[-1]:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    return ["\n".join(b).strip() for b in blocks if "".join(b).strip()]


def _cut(block: str, limit: int) -> list[str]:
    """An over-long paragraph cut into pieces of at most `limit` characters (sentences, then words)."""
    pieces: list[str] = []
    current = ""
    for unit in _SENTENCE_END.split(block):
        while len(unit) > limit:  # one sentence longer than a passage: cut at a word
            space = unit.rfind(" ", 0, limit)
            space = space if space > limit // 2 else limit
            unit_head, unit = unit[:space].strip(), unit[space:].strip()
            if current:
                pieces.append(current)
                current = ""
            pieces.append(unit_head)
        if current and len(current) + 1 + len(unit) > limit:
            pieces.append(current)
            current = unit
        else:
            current = f"{current} {unit}".strip()
    if current:
        pieces.append(current)
    return pieces


def split_passages(text: str) -> list[str]:
    """`text` as passages of at most PASSAGE_MAX_CHARS, in document order."""
    out: list[str] = []
    current = ""
    for block in _blocks(text):
        heading = bool(_HEADING.match(block.splitlines()[0].strip()))
        for piece in _cut(block, PASSAGE_MAX_CHARS) if len(block) > PASSAGE_MAX_CHARS else [block]:
            room = PASSAGE_TARGET_CHARS if len(current) >= PASSAGE_MIN_CHARS else PASSAGE_MAX_CHARS
            starts_section = heading and len(current) >= PASSAGE_MIN_CHARS
            # A short start (a lone title) joins what follows rather than standing alone.
            if current and (starts_section or len(current) + 1 + len(piece) > room):
                out.append(current)
                current = piece
            else:
                current = f"{current}\n{piece}" if current else piece
            heading = False
    if current:
        out.append(current)
    return out


async def replace_passages(conn: aiosqlite.Connection, file_id: int, text: str) -> None:
    """Store `text`'s passages for a file, replacing any it had (call inside a transaction)."""
    await conn.execute(f"DELETE FROM {TABLE} WHERE file_id = ?", (file_id,))
    await conn.executemany(f"INSERT INTO {TABLE}(file_id, seq, text) VALUES (?, ?, ?)",
                           [(file_id, seq, p) for seq, p in enumerate(split_passages(text))])


async def best_passages(conn: aiosqlite.Connection, file_ids: list[int], terms: list[QueryTerm],
                        per_file: int = PASSAGES_PER_HIT) -> dict[int, list[dict]]:
    """{file id: its best passages for the query, best first}: by BM25, else the file's opening ones.

    Each passage is {"seq", "text", "snippet"}; a file without text has none.
    """
    if not file_ids:
        return {}
    ids = ", ".join(str(int(i)) for i in file_ids)
    out: dict[int, list[dict]] = {}
    match = fts_query(terms)
    if match is not None:
        rows = await fetch_all(
            conn, f"SELECT p.file_id, p.seq, p.text, snippet({FTS}, 0, '', '', '…', {SNIPPET_TOKENS}) AS snip"
                  f" FROM {FTS} JOIN {TABLE} p ON p.id = {FTS}.rowid WHERE {FTS} MATCH ? AND p.file_id IN ({ids})"
                  f" ORDER BY bm25({FTS}), p.seq", (match,))
        for r in rows:
            got = out.setdefault(int(r["file_id"]), [])
            if len(got) < per_file:
                got.append({"seq": r["seq"], "text": r["text"], "snippet": r["snip"]})
    missing = [i for i in file_ids if i not in out]
    if missing:  # matched by name or folder only: the opening passages stand for the file
        rows = await fetch_all(conn, f"SELECT file_id, seq, text FROM {TABLE} WHERE file_id IN"
                                     f" ({', '.join(str(int(i)) for i in missing)}) AND seq < ? ORDER BY file_id, seq",
                               (per_file,))
        for r in rows:
            out.setdefault(int(r["file_id"]), []).append({"seq": r["seq"], "text": r["text"], "snippet": ""})
    return out

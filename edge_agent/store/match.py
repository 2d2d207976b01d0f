"""Ranked search with match strength, shared by the notebook, the memory log and the file index.

BM25 (one FTS5 table a field, see sql.ranked_sql) finds candidates that match any query term.
Then, for the candidates only, one statement asks each field's FTS table which terms each row
matches, so every hit knows the query words it matched and its strength (all / most / some).
Hits that match all or most of the query rank above those that match some of it, BM25 order
within each; a result whose best hit matches only some of the query is `weak`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import aiosqlite

from edge_agent.store.sql import fetch_all, field_fts_names, ranked_sql
from edge_agent.store.text import SCORE_DECIMALS, STRONG, QueryTerm, fts_query, query_plan, term_strength

CANDIDATES_PER_HIT = 4  # BM25 candidates fetched a hit returned, re-ranked by how much they match
TIER = {"all": 2, "most": 1, "some": 0}


@dataclass(frozen=True)
class Ranked:
    """One row of a ranked search and how it matched."""

    row: aiosqlite.Row
    """The table row, with its `score` column."""
    matched: list[str]
    """The query terms it matched, in query order."""
    strength: str
    """all | most | some."""


async def term_hits(conn: aiosqlite.Connection, fts_tables: Iterable[str], terms: list[QueryTerm],
                    ids: list[int]) -> dict[int, set[int]]:
    """{row id: indexes of the terms the row matches in any of `fts_tables`} for the given rows."""
    if not ids or not terms:
        return {}
    # A rowid range, not "rowid IN (...)": FTS5 re-runs the whole MATCH for every listed rowid,
    # which cost ~30x more here; rows outside the candidates are dropped below.
    low, high = min(ids), max(ids)
    parts, params = [], []
    for fts in fts_tables:
        for index, term in enumerate(terms):
            parts.append(f"SELECT {index} AS term, rowid AS id FROM {fts} WHERE {fts} MATCH ? AND rowid BETWEEN ? AND ?")
            params += [term.match(), low, high]
    wanted = set(ids)
    out: dict[int, set[int]] = {}
    for term, row_id in await fetch_all(conn, " UNION ".join(parts), params):
        if int(row_id) in wanted:
            out.setdefault(int(row_id), set()).add(int(term))
    return out


async def ranked_search(conn: aiosqlite.Connection, table: str, weights: dict[str, float], query: str, limit: int,
                        where: str = "", where_params: Iterable[Any] = (), tiebreak: str = "id DESC",
                        ) -> list[Ranked]:
    """The best `limit` rows of `table` for `query`: strongest match first, then BM25, then tiebreak."""
    terms = query_plan(query)
    match = fts_query(terms)
    if match is None:
        return []
    sql = ranked_sql(table, weights, SCORE_DECIMALS, where=where, tiebreak=tiebreak)
    rows = await fetch_all(conn, sql, [match] * len(weights) + list(where_params) + [limit * CANDIDATES_PER_HIT])
    if len(terms) == 1:  # every candidate matched the only term
        return [Ranked(r, [terms[0].word], "all") for r in rows[:limit]]
    hits = await term_hits(conn, field_fts_names(table, list(weights)).values(), terms, [r["id"] for r in rows])
    ranked = []
    for r in rows:
        matched = [terms[i].word for i in sorted(hits.get(int(r["id"]), set()))]
        ranked.append(Ranked(r, matched, term_strength(terms, matched)))
    ranked.sort(key=lambda h: TIER[h.strength], reverse=True)  # stable: BM25 order within a tier
    return ranked[:limit]


def is_weak(strengths: Iterable[str]) -> bool:
    """True when there are hits and none of them matches all or most of the query."""
    seen = list(strengths)
    return bool(seen) and not any(s in STRONG for s in seen)

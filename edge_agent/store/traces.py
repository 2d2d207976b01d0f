"""Harness tables: traces (one row per model session or direct tool dispatch) and pending actions.

A trace row holds the prompt exactly as rendered for the model, the tools bound to that session,
its input and output, token usage, timing and any error. A pending action is an effect the loop
stopped before running; `confirm` claims it atomically so it runs at most once.
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import aiosqlite

from edge_agent.store.sql import fetch_all, fetch_one, transaction

log = logging.getLogger(__name__)

MIGRATION_ORDER = 20

STATUS_PENDING = "pending"
STATUS_RUNNING = "running"
STATUS_DONE = "done"
STATUS_FAILED = "failed"


async def traces_001_create(conn: aiosqlite.Connection) -> None:
    await conn.execute(
        "CREATE TABLE traces (id INTEGER PRIMARY KEY, request_id TEXT NOT NULL, seq INTEGER NOT NULL,"
        " role TEXT NOT NULL, tool TEXT, prompt TEXT NOT NULL, bound_tools TEXT NOT NULL,"
        " input TEXT NOT NULL, output TEXT NOT NULL, usage TEXT NOT NULL, started_at REAL NOT NULL,"
        " ms REAL NOT NULL, error TEXT, UNIQUE(request_id, seq))")
    await conn.execute("CREATE INDEX traces_started ON traces(started_at)")


async def pending_actions_001_create(conn: aiosqlite.Connection) -> None:
    await conn.execute(
        "CREATE TABLE pending_actions (id TEXT PRIMARY KEY, request_id TEXT NOT NULL, tool TEXT NOT NULL,"
        " args TEXT NOT NULL, preview TEXT NOT NULL, status TEXT NOT NULL, created_at REAL NOT NULL,"
        " finished_at REAL, result TEXT)")


async def traces_002_model(conn: aiosqlite.Connection) -> None:
    await conn.execute("ALTER TABLE traces ADD COLUMN model TEXT")


MIGRATIONS = [traces_001_create, pending_actions_001_create, traces_002_model]


@dataclass(frozen=True)
class TraceRow:
    """One stored trace record."""

    request_id: str
    """The question this session served."""
    seq: int
    """Order within the request, from 1."""
    role: str
    """planner | l2 | l3.<tool>.<n> | choose | reply."""
    tool: str | None
    """The real tool of an l3 record, else None."""
    prompt: str
    """The prompt exactly as rendered for the model ('' when no generation was needed)."""
    bound_tools: list[str]
    """Tools bound to the session (plan for L1, call_tool for L2, the one tool for L3)."""
    input: str
    """What the session was asked (question, instruction)."""
    output: str
    """What it produced (raw model output or the tool's result)."""
    usage: dict[str, Any]
    """prompt/cached/generated tokens and ms."""
    started_at: float
    """Epoch seconds."""
    ms: float
    """Wall time of the session."""
    error: str | None = None
    """What went wrong, if anything."""
    model: str | None = None
    """The model that generated it, with its adapter's hash when one is loaded."""


async def save_traces(conn: aiosqlite.Connection, rows: list[TraceRow]) -> None:
    """Store a request's trace rows in one transaction."""
    async with transaction(conn):
        await conn.executemany(
            "INSERT OR REPLACE INTO traces(request_id, seq, role, tool, prompt, bound_tools, input, output,"
            " usage, started_at, ms, error, model) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [(r.request_id, r.seq, r.role, r.tool, r.prompt, json.dumps(r.bound_tools), r.input, r.output,
              json.dumps(r.usage, sort_keys=True), r.started_at, r.ms, r.error, r.model) for r in rows])


def _row(row: aiosqlite.Row) -> TraceRow:
    return TraceRow(row["request_id"], row["seq"], row["role"], row["tool"], row["prompt"],
                    json.loads(row["bound_tools"]), row["input"], row["output"], json.loads(row["usage"]),
                    row["started_at"], row["ms"], row["error"], row["model"])


async def load_traces(conn: aiosqlite.Connection, request_id: str) -> list[TraceRow]:
    """A request's records in order."""
    rows = await fetch_all(conn, "SELECT * FROM traces WHERE request_id = ? ORDER BY seq", (request_id,))
    return [_row(r) for r in rows]


async def tool_call_counts(conn: aiosqlite.Connection, since: float) -> tuple[dict[str, int], int]:
    """({tool: L3 dispatches}, questions planned) for traces started at or after `since`."""
    rows = await fetch_all(
        conn, "SELECT tool, COUNT(*) AS n FROM traces WHERE tool IS NOT NULL AND started_at >= ?"
        " GROUP BY tool", (since,))
    questions = await fetch_one(
        conn, "SELECT COUNT(DISTINCT request_id) AS n FROM traces WHERE started_at >= ?", (since,))
    return {r["tool"]: r["n"] for r in rows}, int(questions["n"] if questions else 0)


# -- pending actions ---------------------------------------------------------------------------

@dataclass(frozen=True)
class PendingRow:
    """One stored pending action."""

    id: str
    """The id the user confirms."""
    request_id: str
    """The question that produced it."""
    tool: str
    """The effectful tool."""
    args: dict[str, Any]
    """The exact arguments previewed."""
    preview: str
    """What the user was shown."""
    status: str
    """pending | running | done | failed."""
    result: str | None = None
    """The tool's text once run, or the failure."""


async def add_pending(conn: aiosqlite.Connection, action_id: str, request_id: str, tool: str,
                      args: dict[str, Any], preview: str) -> None:
    async with transaction(conn):
        await conn.execute(
            "INSERT INTO pending_actions(id, request_id, tool, args, preview, status, created_at)"
            " VALUES (?,?,?,?,?,?,?)",
            (action_id, request_id, tool, json.dumps(args, sort_keys=True), preview, STATUS_PENDING, time.time()))


async def get_pending(conn: aiosqlite.Connection, action_id: str) -> PendingRow | None:
    row = await fetch_one(conn, "SELECT * FROM pending_actions WHERE id = ?", (action_id,))
    if row is None:
        return None
    return PendingRow(row["id"], row["request_id"], row["tool"], json.loads(row["args"]), row["preview"],
                      row["status"], row["result"])


async def claim_pending(conn: aiosqlite.Connection, action_id: str) -> bool:
    """Move pending -> running; False if it was not pending (already confirmed, or unknown)."""
    async with transaction(conn):
        cur = await conn.execute(
            "UPDATE pending_actions SET status = ? WHERE id = ? AND status = ?",
            (STATUS_RUNNING, action_id, STATUS_PENDING))
    return cur.rowcount == 1


async def finish_pending(conn: aiosqlite.Connection, action_id: str, ok: bool, result: str) -> None:
    async with transaction(conn):
        await conn.execute(
            "UPDATE pending_actions SET status = ?, finished_at = ?, result = ? WHERE id = ?",
            (STATUS_DONE if ok else STATUS_FAILED, time.time(), result, action_id))


async def interrupted(conn: aiosqlite.Connection) -> list[PendingRow]:
    """Actions left `running` by a process that stopped before it recorded how they ended."""
    rows = await fetch_all(conn, "SELECT * FROM pending_actions WHERE status = ?", (STATUS_RUNNING,))
    return [PendingRow(r["id"], r["request_id"], r["tool"], json.loads(r["args"]), r["preview"], r["status"],
                       r["result"]) for r in rows]


async def reopen_pending(conn: aiosqlite.Connection, action_id: str) -> None:
    """running -> pending: the effect surely did not happen, so confirming may run it."""
    async with transaction(conn):
        await conn.execute("UPDATE pending_actions SET status = ? WHERE id = ? AND status = ?",
                           (STATUS_PENDING, action_id, STATUS_RUNNING))

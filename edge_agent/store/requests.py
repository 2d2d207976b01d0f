"""The request log: every MQTT request the agent accepted, written before it is acknowledged.

A row is keyed by (sender, request_id), so a redelivered or resent request finds its row and
never runs twice. States: accepted -> running -> done. `final_event` holds the exact bytes of
the answer/needs_confirmation/error event, re-sent verbatim to a duplicate; `delivered` turns
on when the broker acknowledged that event to a subscriber, `acked` when the asker itself said
it has it (an ack message). After a crash, accepted/running rows are answered again (rerun or a
clear error) and done-but-undelivered ones are re-sent; on every reconnect, recent answers the
asker has not acked are re-sent. A needs_confirmation row keeps its `action_id`: only that
row's sender may confirm the action. A row addressed to a pool (`pool`) is also claimed on the
broker (net/pool.py); a board that lost the claim hands its copy over (done, no final event).

Every write is one autocommit statement (the connection is opened with isolation_level=None):
the service's tasks share one connection, and BEGIN..COMMIT spans from two tasks would nest.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import aiosqlite

from edge_agent.store.sql import fetch_all, fetch_one

log = logging.getLogger(__name__)

MIGRATION_ORDER = 30

STATE_ACCEPTED = "accepted"
STATE_RUNNING = "running"
STATE_DONE = "done"
KEEP_DONE_S = 30 * 24 * 3600  # delivered requests older than this are pruned at start-up
RUN_SEQ_BLOCK = 1000  # event sequence numbers reserved by one run of a request


async def requests_001_create(conn: aiosqlite.Connection) -> None:
    await conn.execute(
        "CREATE TABLE requests (sender TEXT NOT NULL, request_id TEXT NOT NULL, kind TEXT NOT NULL,"
        " payload TEXT NOT NULL, response_topic TEXT NOT NULL, correlation BLOB,"
        " state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, next_seq INTEGER NOT NULL DEFAULT 0,"
        " final_event BLOB, delivered INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL,"
        " started_at REAL, finished_at REAL, PRIMARY KEY (sender, request_id))")
    await conn.execute("CREATE INDEX requests_open ON requests(state, created_at)")


async def requests_002_asker_ack(conn: aiosqlite.Connection) -> None:
    await conn.execute("ALTER TABLE requests ADD COLUMN action_id TEXT")
    await conn.execute("ALTER TABLE requests ADD COLUMN acked INTEGER NOT NULL DEFAULT 0")
    await conn.execute("CREATE INDEX requests_action ON requests(action_id) WHERE action_id IS NOT NULL")
    await conn.execute("CREATE INDEX requests_unacked ON requests(finished_at) WHERE acked = 0")


async def requests_003_pool(conn: aiosqlite.Connection) -> None:
    await conn.execute("ALTER TABLE requests ADD COLUMN pool TEXT")


MIGRATIONS = [requests_001_create, requests_002_asker_ack, requests_003_pool]


@dataclass(frozen=True)
class RequestRow:
    """One logged request."""

    sender: str
    """Who sent it (the last topic level, enforced by the broker's ACL)."""
    request_id: str
    """The sender's id for it."""
    kind: str
    """ask | confirm"""
    payload: str
    """The validated request, JSON."""
    response_topic: str
    """Where its events go."""
    correlation: bytes | None
    """MQTT v5 CorrelationData to echo."""
    state: str
    """accepted | running | done"""
    attempts: int
    """Runs started (more than one only after a crash)."""
    next_seq: int
    """The sequence number the next event gets."""
    final_event: bytes | None
    """The exact final event, once done."""
    delivered: bool
    """The broker acknowledged the final event (PUBACK with a matching subscriber)."""
    created_at: float
    """When it was accepted, epoch seconds."""
    acked: bool = False
    """The asker acknowledged the final event itself."""
    action_id: str | None = None
    """The pending action its needs_confirmation event offered (only its sender may confirm it)."""
    pool: str | None = None
    """The pool it was addressed to (then claimed on the broker), or None for this board's own topic."""


def _row(r: aiosqlite.Row) -> RequestRow:
    return RequestRow(r["sender"], r["request_id"], r["kind"], r["payload"], r["response_topic"],
                      r["correlation"], r["state"], r["attempts"], r["next_seq"], r["final_event"],
                      bool(r["delivered"]), r["created_at"], bool(r["acked"]), r["action_id"], r["pool"])


_KEY = "sender = ? AND request_id = ?"


async def get_request(conn: aiosqlite.Connection, sender: str, request_id: str) -> RequestRow | None:
    r = await fetch_one(conn, f"SELECT * FROM requests WHERE {_KEY}", (sender, request_id))
    return _row(r) if r else None


async def record_request(conn: aiosqlite.Connection, *, sender: str, request_id: str, kind: str,
                         payload: str, response_topic: str, correlation: bytes | None,
                         pool: str | None = None, first_seq: int = 0) -> tuple[RequestRow, bool]:
    """Log a request unless its key is known; returns (row, True if it is new).

    A new row's accepted event has seq `first_seq` (0; a pool takeover numbers above what the
    earlier board may have sent), so next_seq starts one above it.
    """
    row = await fetch_one(
        conn, "INSERT INTO requests(sender, request_id, kind, payload, response_topic, correlation, state,"
              " next_seq, created_at, pool) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING *",
        (sender, request_id, kind, payload, response_topic, correlation, STATE_ACCEPTED, first_seq + 1, time.time(),
         pool))
    if row is not None:
        return _row(row), True
    row = await fetch_one(conn, f"SELECT * FROM requests WHERE {_KEY}", (sender, request_id))
    if row is None:
        raise RuntimeError(f"request {sender}/{request_id} neither inserted nor found")
    return _row(row), False


async def take_seq(conn: aiosqlite.Connection, sender: str, request_id: str) -> int:
    """Reserve the next event sequence number of a request."""
    r = await fetch_one(conn, f"UPDATE requests SET next_seq = next_seq + 1 WHERE {_KEY}"
                              " RETURNING next_seq - 1", (sender, request_id))
    if r is None:
        raise KeyError(f"no request {sender}/{request_id}")
    return int(r[0])


async def mark_running(conn: aiosqlite.Connection, sender: str, request_id: str) -> tuple[int, int]:
    """accepted/running -> running; returns (attempt number, first seq of the run's block).

    Each run reserves RUN_SEQ_BLOCK sequence numbers at once, so its pills need no write of
    their own, and a rerun after a crash still numbers above anything the lost run sent.
    """
    r = await fetch_one(conn, f"UPDATE requests SET state = ?, attempts = attempts + 1, started_at = ?,"
                              f" next_seq = next_seq + ? WHERE {_KEY} AND state != ?"
                              f" RETURNING attempts, next_seq - ?",
                        (STATE_RUNNING, time.time(), RUN_SEQ_BLOCK, sender, request_id, STATE_DONE, RUN_SEQ_BLOCK))
    if r is None:
        raise KeyError(f"request {sender}/{request_id} is unknown or already done")
    return int(r[0]), int(r[1])


async def finish_request(conn: aiosqlite.Connection, sender: str, request_id: str, final_event: bytes,
                         action_id: str | None = None) -> bool:
    """Store the final event (and the action it offers); False if already done (the first answer stands)."""
    cur = await conn.execute(
        f"UPDATE requests SET state = ?, final_event = ?, finished_at = ?, action_id = ? WHERE {_KEY} AND state != ?",
        (STATE_DONE, final_event, time.time(), action_id, sender, request_id, STATE_DONE))
    await cur.close()
    return cur.rowcount == 1


async def hand_over(conn: aiosqlite.Connection, sender: str, request_id: str) -> None:
    """A pool request another board runs: done here with no answer of ours, and nothing to re-send."""
    await (await conn.execute(f"UPDATE requests SET state = ?, finished_at = ?, delivered = 1, acked = 1"
                              f" WHERE {_KEY} AND state != ?", (STATE_DONE, time.time(), sender, request_id,
                                                                  STATE_DONE))).close()


async def reopen(conn: aiosqlite.Connection, sender: str, request_id: str, first_seq: int) -> None:
    """A pool request this board logged before and runs again (a takeover, or after losing a claim
    whose winner died): accepted once more, its events numbered from above `first_seq`."""
    await (await conn.execute(
        f"UPDATE requests SET state = ?, next_seq = max(next_seq, ?), delivered = 0, acked = 0"
        f" WHERE {_KEY} AND (state != ? OR final_event IS NULL)",
        (STATE_ACCEPTED, first_seq + 1, sender, request_id, STATE_DONE))).close()


async def mark_delivered(conn: aiosqlite.Connection, sender: str, request_id: str) -> None:
    await (await conn.execute(f"UPDATE requests SET delivered = 1 WHERE {_KEY}", (sender, request_id))).close()


async def mark_acked(conn: aiosqlite.Connection, sender: str, request_id: str) -> bool:
    """The asker has the final event; False if no such answered request of that sender."""
    cur = await conn.execute(f"UPDATE requests SET acked = 1, delivered = 1 WHERE {_KEY} AND state = ?",
                             (sender, request_id, STATE_DONE))
    await cur.close()
    return cur.rowcount == 1


async def action_owner(conn: aiosqlite.Connection, action_id: str) -> str | None:
    """The sender whose request was offered this pending action, or None."""
    r = await fetch_one(conn, "SELECT sender FROM requests WHERE action_id = ?", (action_id,))
    return r["sender"] if r else None


async def unacked_requests(conn: aiosqlite.Connection, within_s: float) -> list[RequestRow]:
    """Done rows answered during the last within_s seconds whose asker has not acked them."""
    rows = await fetch_all(conn, "SELECT * FROM requests WHERE acked = 0 AND state = ? AND finished_at >= ?"
                                 " ORDER BY finished_at", (STATE_DONE, time.time() - within_s))
    return [_row(r) for r in rows]


async def unfinished_requests(conn: aiosqlite.Connection) -> list[RequestRow]:
    """Accepted or running rows, oldest first: what a crash left unanswered."""
    rows = await fetch_all(conn, "SELECT * FROM requests WHERE state != ? ORDER BY created_at",
                           (STATE_DONE,))
    return [_row(r) for r in rows]


async def undelivered_requests(conn: aiosqlite.Connection, within_s: float | None = None) -> list[RequestRow]:
    """Done rows whose final event the broker has not acknowledged (answered in the last within_s)."""
    since = 0.0 if within_s is None else time.time() - within_s
    rows = await fetch_all(conn, "SELECT * FROM requests WHERE state = ? AND delivered = 0"
                                 " AND coalesce(finished_at, created_at) >= ? ORDER BY created_at", (STATE_DONE, since))
    return [_row(r) for r in rows]


async def prune_requests(conn: aiosqlite.Connection, keep_s: float = KEEP_DONE_S) -> int:
    """Delete delivered rows older than keep_s; returns how many."""
    cur = await conn.execute("DELETE FROM requests WHERE state = ? AND delivered = 1 AND created_at < ?",
                             (STATE_DONE, time.time() - keep_s))
    await cur.close()
    return cur.rowcount

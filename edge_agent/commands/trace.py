"""`edge-agent trace REQUEST_ID`: every model session of one question, prompts exactly as rendered."""
from __future__ import annotations

import asyncio
import dataclasses
import json
import sys

EXIT_NOT_FOUND = 1  # no trace stored for that request


def register(sub, parents) -> None:
    p = sub.add_parser("trace", parents=parents, help="print the stored trace of one request")
    p.add_argument("request_id")
    p.add_argument("--json", action="store_true", help="one JSON object a record")
    p.set_defaults(func=run)


def run(args, settings) -> int:
    return asyncio.run(_trace(args, settings))


async def _trace(args, settings) -> int:
    from edge_agent.harness.trace import format_trace
    from edge_agent.store.db import connect
    from edge_agent.store.traces import load_traces

    conn = await connect(settings.db_path)
    try:
        rows = await load_traces(conn, args.request_id)
    finally:
        await conn.close()
    if not rows:
        print(f"edge-agent: no trace for request {args.request_id!r} (is harness.tracing on?)", file=sys.stderr)
        return EXIT_NOT_FOUND
    if args.json:
        for row in rows:
            print(json.dumps(dataclasses.asdict(row), ensure_ascii=False))
    else:
        print(format_trace(rows))
    return 0

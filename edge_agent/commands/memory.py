"""`edge-agent memory import FILE.jsonl` and `edge-agent memory search QUERY`."""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path


def register(sub, parents) -> None:
    p = sub.add_parser("memory", parents=parents, help="the long-term memory log")
    group = p.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    imp = group.add_parser("import", parents=parents, help="append entries from a JSONL file")
    imp.add_argument("files", nargs="+", type=Path, metavar="FILE.jsonl",
                     help='lines of {"kind", "who", "when" (ISO with offset), "text"}')
    imp.set_defaults(func=run_import)
    search = group.add_parser("search", parents=parents, help="keyword search of the log")
    search.add_argument("query")
    search.add_argument("--limit", type=int, default=10)
    search.set_defaults(func=run_search)


def run_import(args, settings) -> int:
    from edge_agent.ingest.console import import_files
    from edge_agent.ingest.notes import import_memory

    return import_files(settings, args.files, "memory", lambda store, path, bar: import_memory(store.memory, path, bar))


def run_search(args, settings) -> int:
    from edge_agent.store import Store

    async def main() -> int:
        async with Store.open(settings.db_path) as store:
            entries = await store.memory.search(args.query, args.limit)
        for e in entries:
            print(f"{e.id:>6}  {e.when}  {e.kind:<8} {e.who}: {e.text}")
        if not entries:
            print(f"nothing matches {args.query!r}", file=sys.stderr)
        return 0

    return asyncio.run(main())

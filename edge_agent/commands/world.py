"""`edge-agent world load [DIR]`: load the sample household into the data dir (idempotent)."""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from edge_agent.paths import WORLD_DIR


def register(sub, parents) -> None:
    p = sub.add_parser("world", parents=parents, help="the sample world")
    group = p.add_subparsers(dest="world_command", metavar="ACTION", required=True)
    load = group.add_parser("load", parents=parents, help="load notebook, memory, calendar and files of a world")
    load.add_argument("dir", nargs="?", type=Path, default=WORLD_DIR, metavar="DIR",
                      help=f"world folder (default {WORLD_DIR})")
    load.set_defaults(func=run_load)


def run_load(args, settings) -> int:
    from edge_agent.ingest.console import index_summary, progress_factory
    from edge_agent.ingest.report import print_rejects
    from edge_agent.ingest.world import load_world
    from edge_agent.store import Store

    if not args.dir.is_dir():
        print(f"edge-agent world load: {args.dir} is not a folder", file=sys.stderr)
        return 2

    async def main():
        async with Store.open(settings.db_path) as store:
            return await load_world(store, args.dir, progress_factory())

    report = asyncio.run(main())
    for problem in report.problems:
        print(f"error: {problem}", file=sys.stderr)
    print_rejects(report.rejects)
    for part in report.imports:
        print(part.summary(), file=sys.stderr)
    for ix in report.indexes:
        print(index_summary(ix), file=sys.stderr)
    print(f"{len(report.rejects)} rejected; world loaded into {settings.db_path}", file=sys.stderr)
    return 0 if report.read else 1

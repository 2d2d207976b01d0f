"""`edge-agent files index DIR... [--device NAME]`, `files search QUERY`, `files serve`."""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path


def register(sub, parents) -> None:
    p = sub.add_parser("files", parents=parents, help="the file index and the file peer")
    group = p.add_subparsers(dest="files_command", metavar="ACTION", required=True)
    index = group.add_parser("index", parents=parents, help="index folders (only new or changed files are read)")
    index.add_argument("dirs", nargs="*", type=Path, metavar="DIR", help="folders (default: files_roots from config)")
    index.add_argument("--device", help="device the files belong to (default: this device)")
    index.set_defaults(func=run_index)
    search = group.add_parser("search", parents=parents, help="search the index as find_file does")
    search.add_argument("query")
    search.add_argument("--device", action="append", default=[], help="limit to this device (repeatable)")
    search.set_defaults(func=run_search)
    serve = group.add_parser("serve", parents=parents, help="answer file searches from paired devices over MQTT")
    serve.add_argument("--root", action="append", type=Path, default=[], metavar="DIR",
                       help="folder to index and serve (repeatable; default: files_roots from config)")
    serve.add_argument("--device", help="this device's id (default: device_id from config)")
    serve.set_defaults(func=run_serve)


def run_index(args, settings) -> int:
    from edge_agent.ingest.console import index_summary, progress_factory
    from edge_agent.ingest.report import print_rejects
    from edge_agent.store import Store
    from edge_agent.store.files import index_paths

    roots = args.dirs or list(settings.files_roots)
    if not roots:
        print("edge-agent files index: no folders given and files_roots is empty", file=sys.stderr)
        return 2
    device = args.device or settings.device_id

    async def main() -> int:
        bar = progress_factory()(f"files on {device}")
        async with Store.open(settings.db_path) as store:
            try:
                report = await index_paths(store.conn, device, roots, bar)
            finally:
                bar.finish()
        print_rejects(report.rejects)
        print(index_summary(report), file=sys.stderr)
        print(f"{len(report.rejects)} rejected", file=sys.stderr)
        return 0 if report.indexed + report.unchanged else 1

    return asyncio.run(main())


def run_search(args, settings) -> int:
    from edge_agent.store import Store
    from edge_agent.store.files import search_files

    async def main() -> int:
        async with Store.open(settings.db_path) as store:
            hits = await search_files(store.conn, args.query, args.device, 10)
        for hit in hits:
            print(f"{hit['score']:>8.3f}  {hit['device']:<10} {hit['path']}")
        if not hits:
            print(f"no files match {args.query!r}", file=sys.stderr)
        return 0

    return asyncio.run(main())


def run_serve(args, settings) -> int:
    from edge_agent.net.file_peer import serve_files  # the net layer is imported only when serving

    return serve_files(args, settings)

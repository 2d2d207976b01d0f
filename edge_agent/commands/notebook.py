"""`edge-agent notebook add|list|show|rm|search|import`: the distilled notebook."""
from __future__ import annotations

import asyncio
import sys
from datetime import date
from pathlib import Path

from edge_agent.store.notebook import NOTE_KINDS

LIST_LIMIT = 20  # notes `notebook list` shows by default


def register(sub, parents) -> None:
    p = sub.add_parser("notebook", parents=parents, help="the notebook of distilled notes")
    group = p.add_subparsers(dest="notebook_command", metavar="ACTION", required=True)
    add = group.add_parser("add", parents=parents, help="add a note")
    add.add_argument("body", help="the note text")
    add.add_argument("--title", help="short title (default: the note's opening words)")
    add.add_argument("--kind", choices=NOTE_KINDS, default="fact")
    add.add_argument("--updated", type=date.fromisoformat, help="YYYY-MM-DD (default today)")
    add.set_defaults(func=run_add)
    ls = group.add_parser("list", parents=parents, help="newest notes first")
    ls.add_argument("--kind", choices=NOTE_KINDS)
    ls.add_argument("--limit", type=int, default=LIST_LIMIT)
    ls.set_defaults(func=run_list)
    show = group.add_parser("show", parents=parents, help="print one note")
    show.add_argument("id", type=int)
    show.set_defaults(func=run_show)
    rm = group.add_parser("rm", parents=parents, help="delete one note")
    rm.add_argument("id", type=int)
    rm.set_defaults(func=run_rm)
    search = group.add_parser("search", parents=parents, help="search notes as check_notebook does")
    search.add_argument("query")
    search.set_defaults(func=run_search)
    imp = group.add_parser("import", parents=parents, help="upsert notes from a JSONL file")
    imp.add_argument("files", nargs="+", type=Path, metavar="FILE.jsonl",
                     help='lines of {"kind", "title", "body", "updated"}')
    imp.set_defaults(func=run_import)


def _with_store(settings, work):
    from edge_agent.store import Store

    async def main():
        async with Store.open(settings.db_path) as store:
            return await work(store)

    return asyncio.run(main())


def _print(note, full: bool = False) -> None:
    if full:
        print(f"#{note.id} [{note.kind}] {note.title}\nupdated {note.updated}\n\n{note.body}")
    else:
        print(f"{note.id:>5}  {note.updated}  {note.kind:<11} {note.title}")


def run_add(args, settings) -> int:
    from edge_agent.tools.remember import note_title

    body = " ".join(args.body.split())
    if not body:
        print("edge-agent notebook add: the note is empty", file=sys.stderr)
        return 2
    updated = (args.updated or date.today()).isoformat()
    note = _with_store(settings, lambda s: s.notebook.add(args.kind, args.title or note_title(body), body, updated))
    print(f"added note {note.id}: {note.title}")
    return 0


def run_list(args, settings) -> int:
    notes = _with_store(settings, lambda s: s.notebook.recent(args.limit, args.kind))
    for note in notes:
        _print(note)
    return 0


def run_show(args, settings) -> int:
    note = _with_store(settings, lambda s: s.notebook.get(args.id))
    if note is None:
        print(f"edge-agent notebook: no note {args.id}", file=sys.stderr)
        return 1
    _print(note, full=True)
    return 0


def run_rm(args, settings) -> int:
    if not _with_store(settings, lambda s: s.notebook.remove(args.id)):
        print(f"edge-agent notebook: no note {args.id}", file=sys.stderr)
        return 1
    print(f"removed note {args.id}")
    return 0


def run_search(args, settings) -> int:
    for note in _with_store(settings, lambda s: s.notebook.search(args.query)):
        _print(note)
    return 0


def run_import(args, settings) -> int:
    from edge_agent.ingest.console import import_files
    from edge_agent.ingest.notes import import_notebook

    return import_files(settings, args.files, "notebook",
                        lambda store, path, bar: import_notebook(store.notebook, path, bar))

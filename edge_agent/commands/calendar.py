"""`edge-agent calendar import FILE.ics` and `edge-agent calendar list START [END]`."""
from __future__ import annotations

import asyncio
from datetime import date
from pathlib import Path


def register(sub, parents) -> None:
    p = sub.add_parser("calendar", parents=parents, help="the calendar")
    group = p.add_subparsers(dest="calendar_command", metavar="ACTION", required=True)
    imp = group.add_parser("import", parents=parents, help="import events from iCalendar files")
    imp.add_argument("files", nargs="+", type=Path, metavar="FILE.ics")
    imp.set_defaults(func=run_import)
    ls = group.add_parser("list", parents=parents, help="events from START to END (inclusive)")
    ls.add_argument("start", type=date.fromisoformat, metavar="START", help="YYYY-MM-DD")
    ls.add_argument("end", type=date.fromisoformat, nargs="?", metavar="END", help="YYYY-MM-DD (default START)")
    ls.set_defaults(func=run_list)


def run_import(args, settings) -> int:
    from edge_agent.ingest.console import import_files
    from edge_agent.ingest.ics import import_ics

    return import_files(settings, args.files, "calendar", lambda store, path, bar: import_ics(store.calendar, path, bar))


def run_list(args, settings) -> int:
    from edge_agent.store import Store
    from edge_agent.tools.clock import device_zone
    from edge_agent.tools.query_calendar import event_line

    async def main() -> int:
        async with Store.open(settings.db_path) as store:
            events = await store.calendar.between(args.start, args.end or args.start, device_zone(settings.timezone))
        for occ in events:
            print(event_line(occ)[2:])
        return 0

    return asyncio.run(main())

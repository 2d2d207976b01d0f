"""`edge-agent report tools [--days N]`: calls per tool from the traces, flagging underused tools."""
from __future__ import annotations

import asyncio
import json
import time

from edge_agent.harness.usage_report import DEFAULT_DAYS, SECONDS_PER_DAY, format_report, tool_report


def register(sub, parents) -> None:
    p = sub.add_parser("report", parents=parents, help="reports over stored traces")
    group = p.add_subparsers(dest="report_command", metavar="REPORT", required=True)
    tools = group.add_parser("tools", parents=parents, help="calls per tool; flags tools used far less than expected")
    tools.add_argument("--days", type=float, default=DEFAULT_DAYS, help=f"period, days (default {DEFAULT_DAYS})")
    tools.add_argument("--json", action="store_true", help="print the report as JSON")
    tools.set_defaults(func=run_tools)


def run_tools(args, settings) -> int:
    async def main():
        from edge_agent.store.db import connect

        conn = await connect(settings.db_path)
        try:
            return await tool_report(conn, time.time() - args.days * SECONDS_PER_DAY)
        finally:
            await conn.close()

    report = asyncio.run(main())
    print(json.dumps(report, sort_keys=True) if args.json else format_report(report, args.days))
    return 0

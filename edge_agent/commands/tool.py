"""`edge-agent tool NAME 'JSON-ARGS' [--json] [--now ISO]`: run one real tool against the data dir."""
from __future__ import annotations

import asyncio
import json
import sys

from edge_agent.tools.base import ToolError
from edge_agent.tools.clock import ClockError


def register(sub, parents) -> None:
    p = sub.add_parser("tool", parents=parents, help="run one tool against your data and print its result")
    p.add_argument("name", help="tool name, e.g. check_notebook")
    p.add_argument("arguments", nargs="?", default="{}", help="the tool's arguments as a JSON object")
    p.add_argument("--json", action="store_true", help="print one JSON object: tool, text, found, pill, channel, payload")
    p.add_argument("--now", metavar="ISO", help="fix the clock (default: real time in the configured zone)")
    p.set_defaults(func=run)


async def _run(args, settings) -> dict:
    from edge_agent.store import Store
    from edge_agent.tools.context import local_context
    from edge_agent.tools.registry import build_tools

    tools = build_tools(enforce_guards=True)
    tool = tools.get(args.name)
    if tool is None:
        by_slug = {t.manifest.slug: t for t in tools.values() if t.manifest.slug}
        tool = by_slug.get(args.name)
    if tool is None:
        raise ToolError(f"no tool {args.name!r}; tools: {', '.join(sorted(tools))}")
    async with Store.open(settings.db_path) as store:
        ctx = local_context(store, settings.timezone, settings.device_id, args.now)
        result = await tool(args.arguments, ctx)
    return {"tool": tool.name, "text": result.text, "found": result.found, "pill": result.pill,
            "channel": result.channel, "payload": result.payload}


def run(args, settings) -> int:
    try:
        out = asyncio.run(_run(args, settings))
    except (ToolError, ClockError) as err:
        print(f"edge-agent tool: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(f"[{out['pill']}] {out['text']}")
        print(json.dumps(out["payload"], ensure_ascii=False, indent=2))
    return 0

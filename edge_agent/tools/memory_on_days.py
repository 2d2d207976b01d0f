"""memory_on_days(start, end): the memory log's entries written on the days a question names."""
from __future__ import annotations

from edge_agent.store.text import shorten
from edge_agent.tools.base import Tool, ToolContext, ToolResult
from edge_agent.tools.query_calendar import QueryCalendarArgs

RESULT_LIMIT = 10  # entries returned (a busy day's messages)
TEXT_CHARS = 200  # of each entry shown to the model


class MemoryOnDaysArgs(QueryCalendarArgs):
    """Arguments of memory_on_days: the first and last day, as queryCalendar takes them."""


class MemoryOnDays(Tool[MemoryOnDaysArgs]):
    """Reads store.memory by the day each entry was written (retrieval.py calls it for past days a
    question names; hidden from L2)."""

    name = "memory_on_days"
    Args = MemoryOnDaysArgs

    async def run(self, args: MemoryOnDaysArgs, ctx: ToolContext) -> ToolResult:
        entries = await ctx.store.memory.written_on(args.start, args.end, RESULT_LIMIT)
        span = args.start if args.start == args.end else f"{args.start} to {args.end}"
        if not entries:
            return ToolResult(f"Nothing in the memory log was written on {span}.", [], found=False)
        lines = [f"{len(entries)} memory entries written on {span}:"] + [
            f"- {e.when[:10]} {e.kind} ({e.who}): {shorten(e.text, TEXT_CHARS)}" for e in entries]
        return ToolResult("\n".join(lines), [e.to_payload() for e in entries])

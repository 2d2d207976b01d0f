"""grep_memory(query): last-resort keyword search of the whole memory log."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from edge_agent.store.match import is_weak
from edge_agent.store.text import shorten
from edge_agent.tools.base import Tool, ToolContext, ToolResult

MAX_QUERY_CHARS = 200  # a keyword or short phrase
RESULT_LIMIT = 5  # entries returned
TEXT_CHARS = 200  # of each entry shown to the model


class GrepMemoryArgs(BaseModel):
    """Arguments of grep_memory."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS,
                       description="A concise keyword or short phrase: a name, place or topic.")


class GrepMemory(Tool[GrepMemoryArgs]):
    """Searches store.memory (the user's own log; logged chats are not in it), strongest match first."""

    name = "grep_memory"
    Args = GrepMemoryArgs

    async def run(self, args: GrepMemoryArgs, ctx: ToolContext) -> ToolResult:
        query = args.query.strip()
        entries = await ctx.store.memory.search(query, RESULT_LIMIT)
        if not entries:
            return ToolResult(f"Nothing in the memory log matches '{query}'.", [], found=False)
        weak = is_weak(e.strength for e in entries)
        head = (f"Weak match only: no memory entry matches most of '{query}'. Closest {len(entries)}:" if weak
                else f"{len(entries)} memory entries for '{query}':")
        lines = [head] + [f"- {e.when[:10]} {e.kind} ({e.who}): {shorten(e.text, TEXT_CHARS)}"
                          + (f" [matches only {', '.join(e.matched)}]" if weak else "") for e in entries]
        return ToolResult("\n".join(lines), [e.to_payload() for e in entries], weak=weak)

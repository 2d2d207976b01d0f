"""check_notebook(query): search the distilled notebook; an empty query browses recent notes."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from edge_agent.store.match import is_weak
from edge_agent.store.text import query_terms, shorten
from edge_agent.tools.base import Tool, ToolContext, ToolResult

MAX_QUERY_CHARS = 200  # a few keywords, never a paragraph
RESULT_LIMIT = 5  # notes returned
FIRST_BODY_CHARS = 320  # the best note's body shown to the model ...
OTHER_BODY_CHARS = 140  # ... and the others'


class CheckNotebookArgs(BaseModel):
    """Arguments of check_notebook."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field("", max_length=MAX_QUERY_CHARS,
                       description="A few keywords naming the person, topic or thing to look up; "
                                   "empty to list the most recent notes.")


def note_lines(notes: list, weak: bool = False) -> list[str]:
    return [f"- {n.title} [{n.kind}, {n.updated}]: "
            f"{shorten(n.body, FIRST_BODY_CHARS if i == 0 else OTHER_BODY_CHARS)}"
            + (f" [matches only {', '.join(n.matched)}]" if weak else "") for i, n in enumerate(notes)]


class CheckNotebook(Tool[CheckNotebookArgs]):
    """Searches store.notebook (bm25, titles weigh more)."""

    name = "check_notebook"
    Args = CheckNotebookArgs

    async def run(self, args: CheckNotebookArgs, ctx: ToolContext) -> ToolResult:
        query = args.query.strip()
        if not query_terms(query):
            notes = await ctx.store.notebook.recent(RESULT_LIMIT)
            if not notes:
                return ToolResult("The notebook is empty.", [], found=False)
            head = f"{len(notes)} most recent notes:"
        else:
            notes = await ctx.store.notebook.search(query, RESULT_LIMIT)
            if not notes:
                return ToolResult(f"No notes match '{query}'.", [], found=False)
            weak = is_weak(n.strength for n in notes)
            head = (f"Weak match only: no note matches most of '{query}'. Closest {len(notes)}:" if weak
                    else f"{len(notes)} notes for '{query}':")
            return ToolResult("\n".join([head, *note_lines(notes, weak)]), [n.to_payload() for n in notes], weak=weak)
        return ToolResult("\n".join([head, *note_lines(notes)]), [n.to_payload() for n in notes])

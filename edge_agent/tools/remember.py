"""remember(note): add a fact to the notebook. An effect: the harness runs it only once confirmed."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from edge_agent.store.text import shorten
from edge_agent.tools.base import Tool, ToolContext, ToolResult

MAX_NOTE_CHARS = 500  # one self-contained fact
TITLE_CHARS = 60  # the note's title is its opening words


class RememberArgs(BaseModel):
    """Arguments of remember."""

    model_config = ConfigDict(extra="forbid")

    note: str = Field(min_length=1, max_length=MAX_NOTE_CHARS,
                      description="The fact to keep, as one short self-contained sentence.")


def note_title(note: str) -> str:
    return shorten(note.rstrip(". "), TITLE_CHARS)


class Remember(Tool[RememberArgs]):
    """Inserts one fact; previewing and confirming are the harness's job."""

    name = "remember"
    Args = RememberArgs

    async def run(self, args: RememberArgs, ctx: ToolContext) -> ToolResult:
        text = " ".join(args.note.split())
        if not text:
            return ToolResult("Nothing to remember: the note is empty.", None, found=False)
        note = await ctx.store.notebook.add("fact", note_title(text), text, ctx.now().date().isoformat())
        return ToolResult(f'Added to the notebook: "{text}"', {"added": note.to_payload()})

    async def completed(self, args: RememberArgs, ctx: ToolContext) -> bool:
        """The note is in the notebook (a fact with this title and exactly this text)."""
        text = " ".join(args.note.split())
        note = await ctx.store.notebook.find("fact", note_title(text))
        return note is not None and note.body == text

"""Synthetic tools for measuring how prompts grow with the number of bound tools.

Each synthetic tool has a manifest shaped like the real ones (a signature line of similar
length, a description, argument docs and crafting rules) written as TOML and loaded through
ToolManifest.load, so the measurement goes through the same code path as real manifests.
"""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from edge_agent.tools.base import Tool, ToolContext, ToolManifest, ToolResult

DOMAINS = (
    "recipes", "receipts", "bank statements", "workout log", "plant care log", "reading list", "podcast notes",
    "travel bookings", "car service history", "utility bills", "medical letters", "school reports",
    "warranty cards", "insurance policies", "pet records", "garden plan", "wine cellar list", "bike rides",
    "sleep log", "meal plans", "shopping lists", "gift ideas", "home inventory", "photo albums",
    "voice memos", "bookmarks", "loyalty cards", "parking tickets", "tax documents", "payslips",
    "energy meter readings", "boiler manuals", "kids' activities", "club memberships", "subscriptions",
    "passwords hints", "film watchlist", "board game scores", "language lessons", "music practice log",
    "volunteering shifts", "blood pressure log", "allergy notes", "recycling schedule", "house projects",
)
"""45 household domains: with the 5 real L2 tools this makes 50 bound tools."""


class SyntheticArgs(BaseModel):
    """Arguments every synthetic tool takes (two, like a typical search tool)."""

    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=120, description="Keywords for what to look up.")
    limit: int = Field(5, ge=1, le=20, description="How many entries to return.")


class SyntheticTool(Tool[SyntheticArgs]):
    """Finds nothing; exists to be described to a model."""

    name = "synthetic"
    Args = SyntheticArgs

    async def run(self, args: SyntheticArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult(f"No entries match '{args.query}'.", [], found=False)


def _slug(domain: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in domain.lower()).strip("_").replace("__", "_")


def manifest_toml(domain: str) -> str:
    name = f"search_{_slug(domain)}"
    return f'''name = "{name}"
signature = "{name}(query) — search the user's {domain} by keywords and return the best matching entries, newest first"
l2_exposed = true
pill = "{domain.title()}"
channel = "other"
description = """
Searches the user's {domain}, kept on this device, by keywords in titles and text. Returns up to
`limit` matching entries, newest first, each with its date and a short excerpt, so a question
about one of them can be answered from the excerpt.
"""
crafting_rules = """
Write query as two to four keywords from the instruction: the thing, person or place it
concerns and a month or year when one is given. Leave limit at 5 unless the instruction asks
for more or fewer entries.
"""

[arguments]
query = "Keywords for the entries to find."
limit = "How many entries to return, 1 to 20 (default 5)."
'''


def synthetic_tools(directory: Path, count: int) -> dict[str, Tool]:
    """`count` synthetic tools (at most len(DOMAINS)), manifests written to and loaded from `directory`."""
    if count > len(DOMAINS):
        raise ValueError(f"at most {len(DOMAINS)} synthetic tools, not {count}")
    directory.mkdir(parents=True, exist_ok=True)
    tools: dict[str, Tool] = {}
    for domain in DOMAINS[:count]:
        text = manifest_toml(domain)
        name = text.split('"', 2)[1]
        (directory / f"{name}.toml").write_text(text, encoding="utf-8")
        cls = type(f"Synthetic_{name}", (SyntheticTool,), {"name": name})
        tools[name] = cls(enforce_guards=False, manifest=ToolManifest.load(name, directory))
    return tools

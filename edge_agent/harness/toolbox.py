"""Toolbox: the real tools (constructed with guards off) plus the context they run in.

Name resolution lives here: L2 writes a tool's name loosely (a stray @, spaces, capitals), and
resolution maps it to a real name or slug deterministically.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Iterable

from edge_agent.tools.base import Tool, ToolContext, ToolManifest

log = logging.getLogger(__name__)


def normalise_tool_name(raw: str) -> str:
    """Strip stray @ and whitespace, lowercase, and treat inner spaces or dashes as underscores."""
    name = raw.strip().strip("@").strip().lower()
    return "_".join(name.replace("-", " ").split())


@dataclass
class Toolbox:
    """Every real tool the assistant has, by name, and the ToolContext they run with."""

    tools: dict[str, Tool]
    """Real tools, all with enforce_guards=False (dispatch owns dedup and budgets)."""
    ctx: ToolContext
    """Store, clock, remote searchers."""

    def manifest(self, name: str) -> ToolManifest:
        return self.tools[name].manifest

    def exposed(self, bound: Iterable[str]) -> list[ToolManifest]:
        """Manifests of the bound tools that L2 may see, in the skill's order."""
        return [self.tools[n].manifest for n in bound if n in self.tools and self.tools[n].manifest.l2_exposed]

    def resolve(self, raw: str, candidates: Iterable[str]) -> str | None:
        """The real tool name among `candidates` that `raw` means (by name or slug), else None."""
        wanted = normalise_tool_name(raw)
        if not wanted:
            return None
        for name in candidates:
            manifest = self.tools[name].manifest
            spellings = {normalise_tool_name(name), normalise_tool_name(manifest.slug)} - {""}
            if wanted in spellings:
                return name
        return None

"""find_file(query, devices=[]): the user's files on this and paired devices; attaches the best."""
from __future__ import annotations

import asyncio
import logging
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from edge_agent.store.files import search_files
from edge_agent.store.text import shorten
from edge_agent.tools.base import Tool, ToolContext, ToolResult

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 200  # several keywords
MAX_DEVICES = 8  # device ids one call may name
RESULT_LIMIT = 5  # hits kept after merging local and remote
EXCERPT_PREVIEW_CHARS = 240  # of the best hit's excerpt shown to the model

DeviceId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$", max_length=32)]


class FindFileArgs(BaseModel):
    """Arguments of find_file."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS,
                       description="Several keywords describing the file: what it is, who or what it "
                                   "concerns, a month or year if known.")
    devices: list[DeviceId] = Field(default_factory=list, max_length=MAX_DEVICES,
                                    description="Device ids to search; empty searches every device.")


def merge_hits(groups: list[list[dict]], limit: int = RESULT_LIMIT) -> list[dict]:
    """One ranked list: best score first, newer first on a tie, one hit a (device, path)."""
    best: dict[tuple[str, str], dict] = {}
    for hits in groups:
        for hit in hits:
            key = (hit["device"], hit["path"])
            if key not in best or hit["score"] > best[key]["score"]:
                best[key] = hit
    ranked = sorted(best.values(), key=lambda h: h["mtime"], reverse=True)
    ranked.sort(key=lambda h: h["score"], reverse=True)  # stable: mtime order survives within a score
    return ranked[:limit]


class FindFile(Tool[FindFileArgs]):
    """Searches the local index and, when a remote searcher is given, the paired devices."""

    name = "find_file"
    Args = FindFileArgs

    async def run(self, args: FindFileArgs, ctx: ToolContext) -> ToolResult:
        query = args.query.strip()
        local = await search_files(ctx.store.conn, query, args.devices, RESULT_LIMIT)
        remote: list[dict] = []
        unreachable: list[str] = []
        if ctx.remote_search is not None:
            try:
                answer = await ctx.remote_search(query, list(args.devices))
                remote = list(answer.get("hits", []))
                unreachable = list(answer.get("unreachable", []))
            except (asyncio.TimeoutError, ConnectionError, OSError) as err:
                # A peer that is down must not cost the user the local answer.
                log.warning("remote file search failed: %s", err)
                unreachable = [d for d in args.devices if d != ctx.device_id] or ["paired devices"]
        hits = merge_hits([local, remote])
        best = hits[0] if hits else None
        payload = {"hits": hits, "best": best, "unreachable": unreachable}
        gone = f" Unreachable: {', '.join(unreachable)}." if unreachable else ""
        if best is None:
            return ToolResult(f"No files match '{query}'.{gone}", payload, found=False)
        lines = [f"Best match (attached): {best['name']} on {best['device']} ({best['kind']}, "
                 f"modified {best['mtime'][:10]})."]
        if best["excerpt"]:
            lines.append(f"It says: {shorten(best['excerpt'], EXCERPT_PREVIEW_CHARS)}")
        if len(hits) > 1:
            lines.append("Other matches: " + "; ".join(f"{h['name']} ({h['device']})" for h in hits[1:]))
        if gone:
            lines.append(gone.strip())
        return ToolResult("\n".join(lines), payload)

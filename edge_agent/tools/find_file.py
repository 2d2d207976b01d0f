"""find_file(query, devices=[]): the user's files on this and paired devices; attaches the best."""
from __future__ import annotations

import asyncio
import logging
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from edge_agent.store.files import search_files
from edge_agent.store.match import TIER, is_weak
from edge_agent.store.passages import PASSAGE_SEPARATOR
from edge_agent.store.text import name_terms, query_plan, shorten, term_strength, text_matches
from edge_agent.tools.base import Tool, ToolContext, ToolResult

log = logging.getLogger(__name__)

MAX_QUERY_CHARS = 200  # several keywords
MAX_DEVICES = 8  # device ids one call may name
RESULT_LIMIT = 5  # hits kept after merging local and remote
EXCERPT_PREVIEW_CHARS = 600  # of the best hit's best passage shown to the model: L2 answers from it
OTHER_MATCHES_SHOWN = 2  # names of the runners-up in the model's text

DeviceId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$", max_length=32)]


class FindFileArgs(BaseModel):
    """Arguments of find_file."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS,
                       description="Several keywords describing the file: what it is, who or what it "
                                   "concerns, a month or year if known.")
    devices: list[DeviceId] = Field(default_factory=list, max_length=MAX_DEVICES,
                                    description="Device ids to search, only when the user explicitly asks to "
                                                "search a device; empty searches every device.")


def with_strength(hit: dict, query: str) -> dict:
    """A hit from a peer scored here: the query terms its name and excerpt match (its own claim is ignored)."""
    terms = query_plan(query)
    matched = text_matches(terms, f"{name_terms(str(hit.get('name', '')))} {hit.get('excerpt', '')}")
    return {**hit, "matched": matched, "strength": term_strength(terms, matched)}


def merge_hits(groups: list[list[dict]], limit: int = RESULT_LIMIT) -> list[dict]:
    """One ranked list: strongest match, then score, then newest; one hit a (device, path).

    Scores are compared relative to the best of their own group: this index's BM25 and a peer's
    score are on different scales, and neither should win just by its units.
    """
    best: dict[tuple[str, str], tuple[float, dict]] = {}
    for hits in groups:
        top = max((float(h["score"]) for h in hits), default=0.0) or 1.0
        for hit in hits:
            key, relative = (hit["device"], hit["path"]), float(hit["score"]) / top
            if key not in best or relative > best[key][0]:
                best[key] = (relative, hit)
    ranked = sorted(best.values(), key=lambda rh: rh[1]["mtime"], reverse=True)
    ranked.sort(key=lambda rh: rh[0], reverse=True)  # stable: mtime order survives within a score
    ranked.sort(key=lambda rh: TIER.get(rh[1].get("strength", ""), 0), reverse=True)
    return [hit for _, hit in ranked[:limit]]


async def known_devices(ctx: ToolContext) -> dict[str, str]:
    """Every spelling (id or name, lower case) of this device and the paired ones -> the device id."""
    ids: dict[str, str] = {ctx.device_id.lower(): ctx.device_id}
    listed = list(await ctx.store.files.devices())
    if ctx.list_remote_devices is not None:
        try:
            listed += list(await ctx.list_remote_devices())
        except (asyncio.TimeoutError, ConnectionError, OSError) as err:
            log.warning("paired devices unknown: %s", err)
    for d in listed:
        for spelling in (d.get("id"), d.get("name")):
            if spelling:
                ids[str(spelling).strip().lower()] = str(d["id"])
    return ids


async def checked_devices(ctx: ToolContext, asked: list[str]) -> tuple[list[str], list[str]]:
    """(device ids to search, names that are not paired devices): the runtime's check of L3's scope."""
    if not asked:
        return [], []
    known = await known_devices(ctx)
    ids = list(dict.fromkeys(known[d.lower()] for d in asked if d.lower() in known))
    return ids, [d for d in asked if d.lower() not in known]


class FindFile(Tool[FindFileArgs]):
    """Searches the local index and, when a remote searcher is given, the paired devices."""

    name = "find_file"
    Args = FindFileArgs

    async def run(self, args: FindFileArgs, ctx: ToolContext) -> ToolResult:
        query = args.query.strip()
        devices, unknown = await checked_devices(ctx, list(args.devices))
        notes = []
        if unknown:
            notes.append(f"No paired device is called {', '.join(unknown)}"
                         + ("; searched every device." if not devices else "."))
        local = await search_files(ctx.store.conn, query, devices, RESULT_LIMIT)
        remote: list[dict] = []
        unreachable: list[str] = []
        if ctx.remote_search is not None:
            try:
                answer = await ctx.remote_search(query, devices)
                remote = [with_strength(h, query) for h in answer.get("hits", [])]
                unreachable = list(answer.get("unreachable", []))
            except (asyncio.TimeoutError, ConnectionError, OSError) as err:
                # A peer that is down must not cost the user the local answer.
                log.warning("remote file search failed: %s", err)
                unreachable = [d for d in devices if d != ctx.device_id] or ["paired devices"]
        hits = merge_hits([local, remote])
        weak = is_weak(h.get("strength", "") for h in hits)
        # A weak best match is not attached: "not found" is the honest answer to a near miss.
        best = hits[0] if hits and not weak else None
        payload = {"hits": hits, "best": best, "unreachable": unreachable, "weak": weak}
        if unreachable:
            notes.append(f"Unreachable: {', '.join(unreachable)}.")
        tail = [" ".join(notes)] if notes else []
        if not hits:
            return ToolResult("\n".join([f"No files match '{query}'.", *tail]), payload, found=False)
        if weak:
            lines = [f"Weak match only: no file matches most of '{query}'. Nothing attached. Closest: "
                     + "; ".join(f"{h['name']} ({h['device']}, matches only {', '.join(h.get('matched') or []) or '-'})"
                                 for h in hits[:3])]
            return ToolResult("\n".join(lines + tail), payload, weak=True)
        lines = [f"Best match (attached): {best['name']} on {best['device']} ({best['kind']}, "
                 f"modified {best['mtime'][:10]})."]
        passage = (best.get("excerpt") or "").split(PASSAGE_SEPARATOR)[0] or best.get("snippet")
        if passage:
            lines.append(f"It says: {shorten(passage, EXCERPT_PREVIEW_CHARS)}")
        if len(hits) > 1:
            lines.append("Other matches: " + "; ".join(f"{h['name']} ({h['device']})"
                                                       for h in hits[1:1 + OTHER_MATCHES_SHOWN]))
        return ToolResult("\n".join(lines + tail), payload)

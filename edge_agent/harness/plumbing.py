"""Runtime plumbing: tools the harness runs itself, never through L2.

current_date gives L3 concrete ranges for relative dates ("next week"); list_devices resolves a
device name to its id so find_file can be scoped. L2 never sees either decision: the right
default (search every device) is a property of the runtime, not of a prompt. A plumbing run is
still a real run the answer depends on: it emits its pill and counts as a tool called, like any
other, but it counts against no budget, runs once a question and puts nothing in the side channels
(today's date alone is no answer to a calendar question).
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from pydantic import BaseModel

from edge_agent.harness import prompts
from edge_agent.harness.toolbox import Toolbox
from edge_agent.harness.turn import TurnContext
from edge_agent.tools.base import ToolError
from edge_agent.tools.current_date import payload_today

log = logging.getLogger(__name__)

DATE_TOOL = "current_date"
DEVICES_TOOL = "list_devices"
DATE_FIELDS = frozenset({"start", "end", "when", "date", "day"})  # args that take a concrete date
DEVICES_FIELD = "devices"  # find_file's device scope; [] searches every device


def wants_dates(args_model: type[BaseModel]) -> bool:
    return bool(DATE_FIELDS & set(args_model.model_fields))


def wants_devices(args_model: type[BaseModel]) -> bool:
    return DEVICES_FIELD in args_model.model_fields


async def _run_hidden(turn: TurnContext, toolbox: Toolbox, name: str) -> Any:
    if name not in turn.memo:
        tool = toolbox.tools.get(name)
        payload = None
        if tool is not None:
            await turn.emit_pill(tool.manifest.pill)
            turn.tools_called.append(name)
            try:
                payload = (await tool(tool.Args(), toolbox.ctx)).payload
            except ToolError as err:
                log.warning("%s failed for %s: %s", name, turn.request_id, err)
        turn.memo[name] = payload
    return turn.memo[name]


@dataclass(frozen=True)
class L3Dates:
    """What a tool that takes dates is told about them."""

    context: str | None = None
    """The day's ranges (the L3 head's date context); None without a date."""
    named: str = ""
    """The days this request names: the "Dates:" line (prompts.date_hints)."""
    open_range: tuple[date, date] | None = None
    """The days to search when the request names none (prompts.open_range), else None."""
    span: tuple[date, date] | None = None
    """The days every phrase it names means, first to last, when the resolver worked out each of
    them: then the range is known and no model needs to write it."""
    phrase: str = ""
    """Those phrases as the asker wrote them ("next week")."""
    unknown: bool = False
    """A phrase names a day the resolver cannot work out ("3/12"): a model must read it."""


async def today(turn: TurnContext, toolbox: Toolbox) -> Any:
    """current_date's payload, run once a question (its pill shown) unless a tool already ran it."""
    return turn.channels.date or await _run_hidden(turn, toolbox, DATE_TOOL)


async def l3_dates(turn: TurnContext, toolbox: Toolbox, instruction: str) -> L3Dates:
    """For a tool that takes dates: its date context, from current_date run once per question."""
    payload = await today(turn, toolbox)
    if not isinstance(payload, dict):
        return L3Dates()
    context = prompts.date_context(payload, turn.model.count_tokens)
    day = payload_today(payload)
    if day is None:
        return L3Dates(context)
    found = prompts.named_days(instruction, turn.question, day)
    resolved = [r.span for r in found if r.span is not None]
    unnamed = None if resolved else prompts.open_range(day)
    span = (min(s.first for s in resolved), max(s.last for s in resolved)) \
        if resolved and len(resolved) == len(found) else None
    phrase = " and ".join(dict.fromkeys(r.phrase for r in found)) if span else ""
    unknown = any(r.span is None for r in found)
    return L3Dates(context, prompts.dates_line(found, day), unnamed, span, phrase, unknown)


async def todays_date_context(toolbox: Toolbox, count_tokens) -> str | None:
    """The same text outside a question (for the day's cached L3 heads)."""
    tool = toolbox.tools.get(DATE_TOOL)
    if tool is None:
        return None
    try:
        payload = (await tool(tool.Args(), toolbox.ctx)).payload
    except ToolError as err:
        log.warning("%s failed: %s", DATE_TOOL, err)
        return None
    return prompts.date_context(payload, count_tokens) if isinstance(payload, dict) else None


async def device_scope(turn: TurnContext, toolbox: Toolbox, instruction: str) -> list[str]:
    """Device ids to search: the asker's --device, else devices named in the request, else all ([])."""
    if DEVICES_TOOL not in toolbox.tools:
        return []
    payload = await _run_hidden(turn, toolbox, DEVICES_TOOL)
    devices = [d for d in payload or [] if isinstance(d, dict)]
    if turn.device:
        wanted = turn.device.strip().lower()
        ids = [_device_id(d) for d in devices if wanted in _spellings(d)]
        if not ids:
            log.warning("device %r not among %s; searching every device", turn.device,
                        [_device_id(d) for d in devices])
        return ids
    text = f"{instruction} {turn.question}".lower()
    words = set(re.findall(r"[a-z0-9_-]+", text))
    return [_device_id(d) for d in devices if _spellings(d) & words or _name_in(d, text)]


def _device_id(d: dict[str, Any]) -> str:
    return str(d.get("id") or d.get("device") or d.get("name"))


def _spellings(d: dict[str, Any]) -> set[str]:
    return {str(d[k]).strip().lower() for k in ("id", "device", "name") if d.get(k)}


def _name_in(d: dict[str, Any], text: str) -> bool:
    name = str(d.get("name") or "").strip().lower()
    return " " in name and re.search(rf"\b{re.escape(name)}\b", text) is not None

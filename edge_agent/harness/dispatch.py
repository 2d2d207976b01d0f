"""Dispatch: the deterministic gate between L2's call_tool and any real tool.

In this order: resolve the name (a miss returns corrective text into L2's loop), dedup on
(tool, lowercased instruction) (a repeat returns a nudge), the per-tool budget (the 4th real call
raises ToolLoopHalt, ending L2's turn at once), and only then an L3 tool-agent.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

from edge_agent.harness.toolagent import ToolAgent
from edge_agent.harness.toolbox import Toolbox
from edge_agent.harness.turn import MAX_CALLS_PER_TOOL, ToolLoopHalt, TurnContext
from edge_agent.tools.base import DUPLICATE_NUDGE

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DispatchResult:
    """What goes back into L2's transcript as the tool result."""

    text: str
    """The tool-result text L2 reads."""
    kind: str
    """unknown_tool | duplicate | ok | weak | empty | error"""
    tool: str | None
    """The resolved tool name (None for an unknown one)."""


def unknown_tool_text(raw: str, available: Sequence[str]) -> str:
    return (f"No tool is called '{raw.strip()}'. The tools you can use are: {', '.join(available)}. "
            f"Pick one of them, or give your answer.")


class Dispatcher:
    """Dispatch for one L2 attempt, over the tools its plan bound and L2 can see."""

    def __init__(self, toolbox: Toolbox, exposed: Sequence[str], agent: ToolAgent | None = None):
        self.toolbox = toolbox
        self.exposed = list(exposed)
        self.agent = agent or ToolAgent(toolbox)

    async def __call__(self, turn: TurnContext, raw_tool: str, instruction: str) -> DispatchResult:
        name = self.toolbox.resolve(raw_tool, self.exposed)
        if name is None:
            return DispatchResult(unknown_tool_text(raw_tool, self.exposed), "unknown_tool", None)
        key = (name, instruction.strip().lower())
        if key in turn.seen_calls:
            return DispatchResult(DUPLICATE_NUDGE, "duplicate", name)
        if turn.tool_calls[name] >= MAX_CALLS_PER_TOOL:
            raise ToolLoopHalt(name, turn.tool_calls[name])
        turn.seen_calls.add(key)
        turn.tool_calls[name] += 1
        report = await self.agent.run(turn, name, instruction)
        return DispatchResult(report.text, report.kind, name)

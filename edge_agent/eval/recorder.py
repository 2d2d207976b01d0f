"""Records every real tool run during a question: the arguments, the compact text, the exact payload.

The harness keeps a turn's side channels to itself; scoring "arguments right" needs what the
crafted calls actually retrieved. The recorder wraps each tool instance's `run` (the method the
tool's own `__call__` invokes), so the code that runs is exactly the service's.
"""
from __future__ import annotations

import copy
import functools
import logging
from typing import Any, Awaitable, Callable

from edge_agent.eval.scoring import ToolRun
from edge_agent.tools.base import Tool, ToolError

log = logging.getLogger(__name__)


class ToolRecorder:
    """Wraps tools' run methods; `take()` returns and clears the runs seen since the last take."""

    def __init__(self) -> None:
        self._runs: list[ToolRun] = []

    def instrument(self, tools: dict[str, Tool]) -> dict[str, Tool]:
        """Wrap every tool in place; returns the same dict for chaining."""
        for name, tool in tools.items():
            if getattr(tool.run, "__eval_recorded__", False):
                continue
            tool.run = self._wrap(name, tool.run)  # type: ignore[method-assign]
        return tools

    def _wrap(self, name: str, run: Callable[..., Awaitable[Any]]):
        @functools.wraps(run)
        async def recorded(args, ctx):
            dumped = args.model_dump(mode="json") if hasattr(args, "model_dump") else dict(args or {})
            try:
                result = await run(args, ctx)
            except ToolError as err:
                self._runs.append(ToolRun(name, dumped, error=str(err)))
                raise
            self._runs.append(ToolRun(name, dumped, result.text, copy.deepcopy(result.payload), result.found))
            return result

        recorded.__eval_recorded__ = True  # type: ignore[attr-defined]
        return recorded

    def take(self) -> list[ToolRun]:
        runs, self._runs = self._runs, []
        return runs


def dispatched_runs(runs: list[ToolRun], tools_called: list[str]) -> list[ToolRun]:
    """The runs Outcome.tools_called accounts for: a run counts only while its tool has calls left.

    Plumbing (the date context for L3, the device list for find_file) is counted in tools_called
    once a question, however often the runtime reads it; a plumbing read for a tool that was also
    dispatched returns the same payload (fixed clock).
    """
    remaining: dict[str, int] = {}
    for name in tools_called:
        remaining[name] = remaining.get(name, 0) + 1
    kept = []
    for run in reversed(runs):  # plumbing runs first in a question; keep the last n of each tool
        if remaining.get(run.tool, 0) > 0:
            remaining[run.tool] -= 1
            kept.append(run)
    return list(reversed(kept))

"""Every real tool, by name: what the harness, the CLI and the benchmarks bind."""
from __future__ import annotations

from edge_agent.tools.base import Tool
from edge_agent.tools.check_notebook import CheckNotebook
from edge_agent.tools.current_date import CurrentDate
from edge_agent.tools.find_file import FindFile
from edge_agent.tools.grep_memory import GrepMemory
from edge_agent.tools.list_devices import ListDevices
from edge_agent.tools.memory_on_days import MemoryOnDays
from edge_agent.tools.query_calendar import QueryCalendar
from edge_agent.tools.remember import Remember

TOOL_CLASSES: tuple[type[Tool], ...] = (CheckNotebook, FindFile, GrepMemory, CurrentDate, QueryCalendar,
                                        ListDevices, Remember, MemoryOnDays)


def build_tools(enforce_guards: bool = True) -> dict[str, Tool]:
    """A fresh instance of every tool (own guard state), keyed by name."""
    return {cls.name: cls(enforce_guards=enforce_guards) for cls in TOOL_CLASSES}

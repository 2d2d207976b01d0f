"""Building a ToolContext for running tools against a store on this device (CLI, benchmarks)."""
from __future__ import annotations

from datetime import datetime

from edge_agent.tools.base import RemoteSearcher, ToolContext
from edge_agent.tools.clock import device_zone, fixed_clock, system_clock


def local_context(store, timezone: str | None = None, device_id: str = "pi", now: datetime | str | None = None,
                  remote_search: RemoteSearcher | None = None) -> ToolContext:
    """A context on `store` with the device clock (fixed at `now` when given, else real time)."""
    zone = device_zone(timezone)
    clock = fixed_clock(now, zone) if now is not None else system_clock(zone)
    return ToolContext(store=store, now=clock, device_id=device_id, remote_search=remote_search)

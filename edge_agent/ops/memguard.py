"""The memory guard: below a floor of available memory, refuse new work instead of meeting the OOM killer."""
from __future__ import annotations

import logging

from edge_agent.ops import probes

log = logging.getLogger(__name__)

LOW_MEMORY_MESSAGE = "busy: low memory"
"""The error text a refused asker sees."""


class LowMemoryError(RuntimeError):
    """Available memory is below the configured floor; the request was not started."""

    def __init__(self, available_mb: float, min_available_mb: int):
        self.available_mb = available_mb
        self.min_available_mb = min_available_mb
        super().__init__(f"{LOW_MEMORY_MESSAGE} ({available_mb:.0f} MB available, floor {min_available_mb} MB)")


def low_memory(min_available_mb: int, *, available_mb: float | None = None) -> bool:
    """True when available memory (board, capped by the cgroup limit) is below the floor.

    An unreadable reading never refuses work: the guard is a safety net, not a gate that a
    missing /proc file may close.
    """
    if min_available_mb <= 0:
        return False
    available = probes.mem_available_mb() if available_mb is None else available_mb
    if available is None:
        log.warning("memory guard: available memory unreadable; not refusing")
        return False
    return available < min_available_mb


def check_memory(min_available_mb: int) -> None:
    """Raise LowMemoryError when `low_memory(min_available_mb)`."""
    available = probes.mem_available_mb()
    if available is not None and low_memory(min_available_mb, available_mb=available):
        raise LowMemoryError(available, min_available_mb)

"""The outcome of one import and the progress display shown while it runs."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Callable, TextIO

PROGRESS_MIN_INTERVAL_S = 0.1  # redraw the progress line at most this often
PROGRESS_BAR_WIDTH = 24  # characters

Progress = Callable[[int, int], None]
"""progress(done, total), called as work advances."""


@dataclass
class ImportReport:
    """What one import did."""

    source: str
    """The file or folder imported."""
    added: int = 0
    """Records that are new."""
    updated: int = 0
    """Records that replaced an existing one (same key)."""
    unchanged: int = 0
    """Records already present exactly (a repeated import)."""
    rejects: list[str] = field(default_factory=list)
    """One line a bad record: "file:line: why"."""

    @property
    def read(self) -> int:
        """Records that were read successfully."""
        return self.added + self.updated + self.unchanged

    def summary(self) -> str:
        return (f"{self.source}: {self.added} added, {self.updated} updated, {self.unchanged} unchanged, "
                f"{len(self.rejects)} rejected")


class ProgressBar:
    """A one-line progress bar with counts on a terminal; only the final line elsewhere."""

    def __init__(self, label: str, stream: TextIO | None = None):
        self.label = label
        self.stream = stream or sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_draw = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self.live and (done >= total or now - self._last_draw >= PROGRESS_MIN_INTERVAL_S):
            self._last_draw = now
            self._drawn = True
            self.stream.write("\r" + self._line(done, total))
            self.stream.flush()
        self._done, self._total = done, total

    def _line(self, done: int, total: int) -> str:
        frac = done / total if total else 1.0
        filled = int(frac * PROGRESS_BAR_WIDTH)
        bar = "#" * filled + "-" * (PROGRESS_BAR_WIDTH - filled)
        return f"{self.label} [{bar}] {frac:4.0%} ({done}/{total})"

    def finish(self) -> None:
        """End the line (on a terminal) or print the final count once (elsewhere)."""
        done, total = getattr(self, "_done", 0), getattr(self, "_total", 0)
        if self.live and self._drawn:
            self.stream.write("\n")
        elif total:
            self.stream.write(self._line(done, total) + "\n")
        self.stream.flush()


def print_rejects(rejects: list[str], stream: TextIO | None = None) -> None:
    stream = stream or sys.stderr
    for line in rejects:
        stream.write(f"rejected: {line}\n")

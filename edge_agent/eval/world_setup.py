"""The data dir an evaluation runs over: the sample world loaded, and the world's fixed clock.

Questions are written against the world's `now` (world.toml) in its time zone, so every run
sees the same "today" whatever the wall clock says.
"""
from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TextIO

from edge_agent.config import Settings

log = logging.getLogger(__name__)


class WorldSetupError(RuntimeError):
    """The world cannot be used for an evaluation (no world.toml, no `now`, load failed)."""


@dataclass(frozen=True)
class WorldClock:
    """The fixed moment and zone the questions are written against."""

    now: datetime
    """An aware datetime: world.toml's `now`."""
    timezone: str
    """The world's IANA zone."""


def world_clock(world_dir: Path) -> WorldClock:
    from edge_agent.ingest.jsonl import SourceError
    from edge_agent.ingest.world import read_world_info

    try:
        info = read_world_info(world_dir)
    except SourceError as err:
        raise WorldSetupError(f"cannot read the world's clock: {err}") from err
    if info.now is None:
        raise WorldSetupError(f"{world_dir / 'world.toml'} has no `now`: the eval needs a fixed clock")
    if not info.timezone:
        raise WorldSetupError(f"{world_dir / 'world.toml'} has no `timezone`")
    from zoneinfo import ZoneInfo

    now = info.now if info.now.tzinfo else info.now.replace(tzinfo=ZoneInfo(info.timezone))
    return WorldClock(now.astimezone(ZoneInfo(info.timezone)), info.timezone)


async def _missing_parts(store, world_dir: Path) -> list[str]:
    """Parts of the world that have nothing in the store."""
    missing = []
    checks = [("notebook.jsonl", store.notebook.count), ("memory.jsonl", store.memory.count),
              ("calendar.ics", store.calendar.count)]
    for filename, count in checks:
        if (world_dir / filename).exists() and await count() == 0:
            missing.append(filename)
    files_dir = world_dir / "files"
    if files_dir.is_dir():
        for device_dir in sorted(p for p in files_dir.iterdir() if p.is_dir()):
            if await store.files.count(device_dir.name) == 0:
                missing.append(f"files/{device_dir.name}")
    return missing


async def ensure_world_loaded(settings: Settings, world_dir: Path, err: TextIO | None = None) -> bool:
    """Load the world into the data dir unless it is there already; True if it was loaded now."""
    err = err or sys.stderr
    from edge_agent.ingest.world import load_world
    from edge_agent.store.api import Store

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    async with Store.open(settings.db_path) as store:
        missing = await _missing_parts(store, world_dir)
        if not missing:
            return False
        print(f"eval: the data dir {settings.data_dir} has no sample world loaded ({', '.join(missing)} empty); "
              f"loading {world_dir}", file=err)
        report = await load_world(store, world_dir)
        for problem in report.problems:
            print(f"eval: world load problem: {problem}", file=err)
        for reject in report.rejects:
            print(f"eval: world load rejected: {reject}", file=err)
        still = await _missing_parts(store, world_dir)
    if still:
        raise WorldSetupError(f"loading {world_dir} left {', '.join(still)} empty")
    return True


async def notebook_count(settings: Settings) -> int:
    """Notes in the data dir (an eval must leave it unchanged: no effect without confirmation)."""
    from edge_agent.store.api import Store

    async with Store.open(settings.db_path) as store:
        return await store.notebook.count()

"""Loading a sample world folder: world.toml, notebook, memory log, calendar and files per device.

    world/world.toml        user, timezone, now, devices
    world/notebook.jsonl    {"kind", "title", "body", "updated"}
    world/memory.jsonl      {"kind", "who", "when", "text"}
    world/calendar.ics
    world/files/<device>/** indexed under that device's id
"""
from __future__ import annotations

import logging
import tomllib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from edge_agent.ingest.ics import import_ics
from edge_agent.ingest.jsonl import SourceError, explain
from edge_agent.ingest.notes import import_memory, import_notebook
from edge_agent.ingest.report import ImportReport, Progress
from edge_agent.store.files import IndexReport, index_paths, register_device

log = logging.getLogger(__name__)

ProgressFactory = Callable[[str], Progress]
"""label -> progress callback for one part of the load."""


class WorldDevice(BaseModel):
    """One of the household's devices."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$")
    """Device id, as on MQTT and in the file index."""
    name: str = ""
    """Display name."""


class WorldInfo(BaseModel):
    """world.toml: who the world is about, where and when."""

    model_config = ConfigDict(extra="allow")

    user: str = ""
    """The user's name."""
    timezone: str = ""
    """IANA zone of the household."""
    now: datetime | None = None
    """The world's fixed "now" (aware), for reproducible questions."""
    devices: list[WorldDevice] = Field(default_factory=list)
    """The user's devices."""

    @field_validator("devices", mode="before")
    @classmethod
    def _devices(cls, value):
        # Accept ["pi", ...], [{id, name}, ...] or {pi = "name", ...}.
        if isinstance(value, dict):
            return [{"id": k, "name": v if isinstance(v, str) else (v or {}).get("name", k)} for k, v in value.items()]
        return [{"id": v, "name": v} if isinstance(v, str) else v for v in value or []]


def read_world_info(directory: Path) -> WorldInfo:
    path = directory / "world.toml"
    try:
        return WorldInfo.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError as err:
        raise SourceError(f"{path}: no such file") from err
    except tomllib.TOMLDecodeError as err:
        raise SourceError(f"{path}: not valid TOML: {err}") from err
    except ValidationError as err:
        raise SourceError(f"{path}: {explain(err)}") from err


@dataclass
class WorldReport:
    """Everything one `world load` did."""

    info: WorldInfo | None = None
    """world.toml, if it could be read."""
    imports: list[ImportReport] = field(default_factory=list)
    """Notebook, memory and calendar imports."""
    indexes: list[IndexReport] = field(default_factory=list)
    """One file index pass a device."""
    problems: list[str] = field(default_factory=list)
    """Parts that could not be read at all."""

    @property
    def rejects(self) -> list[str]:
        return [r for rep in self.imports for r in rep.rejects] + [r for ix in self.indexes for r in ix.rejects]

    @property
    def read(self) -> int:
        return sum(r.read for r in self.imports) + sum(ix.indexed + ix.unchanged for ix in self.indexes)


async def load_world(store, directory: Path, progress: ProgressFactory | None = None) -> WorldReport:
    """Load every part of the world into `store`; a missing or broken part is a problem, not a crash."""
    report = WorldReport()
    directory = Path(directory)
    try:
        report.info = read_world_info(directory)
        for device in report.info.devices:
            await register_device(store.conn, device.id, device.name or device.id)
    except SourceError as err:
        report.problems.append(str(err))
    parts = [("notebook", "notebook.jsonl", store.notebook, import_notebook),
             ("memory", "memory.jsonl", store.memory, import_memory),
             ("calendar", "calendar.ics", store.calendar, import_ics)]
    for label, filename, repo, importer in parts:
        bar = progress(label) if progress else None
        try:
            report.imports.append(await importer(repo, directory / filename, bar))
        except SourceError as err:
            report.problems.append(str(err))
        finally:
            getattr(bar, "finish", lambda: None)()
    files_dir = directory / "files"
    devices = sorted(p for p in files_dir.iterdir() if p.is_dir()) if files_dir.is_dir() else []
    if not devices:
        report.problems.append(f"{files_dir}: no device folders")
    for device_dir in devices:
        bar = progress(f"files/{device_dir.name}") if progress else None
        try:
            report.indexes.append(await index_paths(store.conn, device_dir.name, [device_dir], bar))
        finally:
            getattr(bar, "finish", lambda: None)()
    return report

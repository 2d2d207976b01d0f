"""Side channels of one turn: the exact payloads the tools returned, kept apart from the model.

The model's paraphrase of a result steers the loop; the answer is built from these bytes.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Mapping

from edge_agent.store.passages import PASSAGE_SEPARATOR
from edge_agent.tools.base import ToolResult


DATA_CHANNELS = ("files", "notes", "events", "memory")
"""Channels of the user's own data (the rest is context: today's date, the device list)."""
EVENTS_CHANNEL = "events"
"""The calendar's channel."""
SEARCHED_FIELDS = {"notes": ("title", "body"), "memory": ("who", "kind", "text"),
                   EVENTS_CHANNEL: ("title", "location", "notes"), "files": ("name", "path", "excerpt")}
"""The fields of a side-channel item whose words can match a question."""


def item_text(channel: str, item: Mapping[str, Any]) -> str:
    """The words of one side-channel item that can match a question (SEARCHED_FIELDS)."""
    return " ".join(str(item.get(k) or "") for k in SEARCHED_FIELDS[channel])


@dataclass
class SideChannels:
    """Everything real tools found during one question (all attempts)."""

    files: list[dict[str, Any]] = field(default_factory=list)
    """Files found: every hit of each find_file run, best first, exactly as returned (with its
    excerpt; a file found again adds the passages that search found in it). A weak match is among
    them: the reply ranks it with the rest, and a file is only attached when a line of it is chosen
    or the run located it."""
    notes: list[dict[str, Any]] = field(default_factory=list)
    """Notebook entries, de-duplicated by id, in the order found."""
    events: list[dict[str, Any]] = field(default_factory=list)
    """Calendar events, de-duplicated by uid and start (occurrences of a recurring event share a uid)."""
    memory: list[dict[str, Any]] = field(default_factory=list)
    """Memory-log entries, de-duplicated by id."""
    date: dict[str, Any] | None = None
    """The last current_date payload."""
    devices: list[dict[str, Any]] = field(default_factory=list)
    """The last list_devices payload."""
    unreachable: list[Any] = field(default_factory=list)
    """Devices a file search could not reach."""
    searched: set[str] = field(default_factory=set)
    """The data channels a tool searched, whether it found anything or not."""

    def add(self, result: ToolResult) -> bool:
        """Record a result's payload; True if it added something an answer can use."""
        payload = copy.deepcopy(result.payload)
        channel = result.channel
        if channel in DATA_CHANNELS:
            self.searched.add(channel)
        if channel == "files" and isinstance(payload, dict):
            self.unreachable.extend(x for x in payload.get("unreachable") or [] if x not in self.unreachable)
            best = payload.get("best")
            hits = [best] if isinstance(best, dict) else []
            hits += [h for h in payload.get("hits") or [] if isinstance(h, dict)]
            before, widened = len(self.files), False
            for hit in hits:
                known = next((f for f in self.files if _same_file(hit, f)), None)
                if known is None:
                    self.files.append(hit)
                else:
                    widened = _with_passages_of(known, hit) or widened
            return isinstance(best, dict) and (len(self.files) > before or widened)
        if channel in ("notes", "events", "memory") and isinstance(payload, list):
            bucket: list[dict[str, Any]] = getattr(self, channel)
            before = len(bucket)
            seen = {_identity(channel, item) for item in bucket}
            for item in payload:
                if isinstance(item, dict) and _identity(channel, item) not in seen:
                    bucket.append(item)
                    seen.add(_identity(channel, item))
            return len(bucket) > before
        if channel == "date" and isinstance(payload, dict):
            self.date = payload
            return True
        if channel == "devices" and isinstance(payload, list):
            self.devices = payload
            return False
        return False

    @property
    def usable(self) -> bool:
        """Whether anything an answer can be built from was found."""
        return bool(self.files or self.notes or self.events or self.memory or self.date)

    def names(self) -> list[str]:
        """Non-empty channels, in answer-selection order."""
        pairs = [("files", self.files), ("notes", self.notes), ("events", self.events),
                 ("memory", self.memory), ("date", self.date)]
        return [name for name, value in pairs if value]


def _with_passages_of(known: dict[str, Any], hit: dict[str, Any]) -> bool:
    """Add to a file already found the passages another search found in it (the plan's words
    found the lease's notice clause, the asker's its deposit); True if there were new ones."""
    have = [p for p in str(known.get("excerpt") or "").split(PASSAGE_SEPARATOR) if p]
    new = [p for p in dict.fromkeys(str(hit.get("excerpt") or "").split(PASSAGE_SEPARATOR)) if p and p not in have]
    if new:
        known["excerpt"] = PASSAGE_SEPARATOR.join(have + new)
    return bool(new)


def _same_file(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.get("device") == b.get("device") and a.get("path") == b.get("path")


def _identity(channel: str, item: dict[str, Any]) -> Any:
    return (item.get("uid"), item.get("start")) if channel == "events" else item.get("id")

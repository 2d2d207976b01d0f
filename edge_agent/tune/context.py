"""The state one household is built in: its random stream, region, clock, cast and what is made so far."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from edge_agent.tune.model import Doc, Event, Memory, Note, Person, Probe
from edge_agent.tune.people import Cast
from edge_agent.tune.vocab_places import Locale


@dataclass
class Ctx:
    """Everything the builders read and append to while one household is made."""

    rng: random.Random
    """The household's only source of randomness."""
    loc: Locale
    """Its region."""
    tz: str
    """IANA time zone."""
    now: datetime
    """The fixed clock: aware, in `tz`."""
    cast: Cast
    """Everyone in it."""
    devices: list[str]
    """Device ids; [0] is the home box, [1] the personal computer, [2] (if any) a spare."""
    docs: list[Doc] = field(default_factory=list)
    """Files made so far."""
    events: list[Event] = field(default_factory=list)
    """Calendar events made so far."""
    notes: list[Note] = field(default_factory=list)
    """Notebook notes made so far."""
    memories: list[Memory] = field(default_factory=list)
    """Memory-log entries made so far."""
    probes: list[Probe] = field(default_factory=list)
    """Answerable things planted so far."""
    topics: list[str] = field(default_factory=list)
    """Optional things the household has (so unanswerable questions pick what it lacks)."""
    trade_job: tuple[str, int, date] | None = None
    """(fault, quoted amount, visit day) of the plumber's job, shared by the memory log, invoice and calendar."""

    @property
    def today(self) -> date:
        return self.now.date()

    @property
    def user(self) -> Person:
        return self.cast.user

    @property
    def home_device(self) -> str:
        return self.devices[0]

    @property
    def work_device(self) -> str:
        return self.devices[1]

    def spare_device(self) -> str:
        return self.devices[2] if len(self.devices) > 2 else self.rng.choice(self.devices[:2])

    def at(self, day: date, hour: int, minute: int = 0) -> datetime:
        """An aware local time on `day` in the household's zone."""
        return datetime.combine(day, time(hour, minute), ZoneInfo(self.tz))

    def past_day(self, lo: int, hi: int) -> date:
        return self.today - timedelta(days=self.rng.randint(lo, hi))

    def future_day(self, lo: int, hi: int) -> date:
        return self.today + timedelta(days=self.rng.randint(lo, hi))

    def remember(self, when: datetime, kind: str, who: str, text: str) -> Memory:
        """Add a memory entry (never later than now)."""
        when = min(when, self.now - timedelta(minutes=5))
        entry = Memory(kind, who, when, text)
        self.memories.append(entry)
        return entry

    def probe(self, intent: str, tool: str, query: str, fact: str, **kw) -> Probe:
        p = Probe(intent, tool, query, fact, **kw)
        self.probes.append(p)
        return p

    def doc(self, folder: str, name: str, text: str, day: date, device: str | None = None) -> Doc:
        d = Doc(device or self.home_device, folder, name, text, day)
        self.docs.append(d)
        return d

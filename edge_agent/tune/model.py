"""The value types of a synthetic household: people, pets, files, events, notes, memories and probes."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime


@dataclass
class Person:
    """Someone in the user's life (or the user), with the facts their notebook page holds."""

    key: str
    """Stable role key within the household: "user", "partner", "mum", "friend1", "dentist"..."""
    first: str
    """First name."""
    last: str
    """Surname."""
    gender: str
    """"f", "m" or "x": picks the pronouns questions use."""
    role: str = ""
    """The relation as the notebook title words it ("mum", "dentist", "friend"); "" for the user."""
    refs: list[str] = field(default_factory=list)
    """Ways the user refers to them in a question ("my mum", "mum", or the first name)."""
    query_word: str = ""
    """The keyword a notebook search for them uses (role word or first name)."""
    title: str = ""
    """Prefix before the person's name ("Dr." for a doctor or dentist)."""
    phone: str = ""
    """Phone number, from a fiction range."""
    email: str = ""
    """Email address at example.com or a .example domain."""
    address: str = ""
    """Postal address (may be empty for professionals: then `business` holds where they work)."""
    town: str = ""
    """Town or neighbourhood they live or work in."""
    birthday: date | None = None
    """Date of birth."""
    job: str = ""
    """What they do."""
    employer: str = ""
    """Where they work, or their practice or firm."""
    likes: list[str] = field(default_factory=list)
    """Things they like (gift ideas)."""
    dislikes: list[str] = field(default_factory=list)
    """Things they dislike or are allergic to."""
    extra: dict[str, str] = field(default_factory=dict)
    """Anything else a page says (e.g. "allergy", "business")."""

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def display(self) -> str:
        """The name with any title, as a notebook title or a document would write it."""
        return f"{self.title} {self.name}".strip()

    @property
    def subj(self) -> str:
        return {"f": "she", "m": "he"}.get(self.gender, "they")

    @property
    def obj(self) -> str:
        return {"f": "her", "m": "him"}.get(self.gender, "them")

    @property
    def pos(self) -> str:
        return {"f": "her", "m": "his"}.get(self.gender, "their")


@dataclass
class Pet:
    """An animal in the household."""

    name: str
    """The pet's name."""
    species: str
    """cat, dog, rabbit..."""
    breed: str
    """Breed or description."""
    sex: str
    """"f" or "m"."""
    microchip: str
    """15-digit microchip number."""
    born: date
    """Birth (or adoption) date."""
    food: str
    """What it eats."""
    vet_key: str
    """Person.key of its vet."""
    booster: date
    """When the next vaccination booster is due."""

    @property
    def pos(self) -> str:
        return "her" if self.sex == "f" else "his"


@dataclass
class Doc:
    """One file in files/<device>/<folder>/<name>, with real text."""

    device: str
    """Device id it lives on."""
    folder: str
    """Documents | Bills | Receipts | Notes | Recordings | Photos."""
    name: str
    """File name (the basename questions expect)."""
    text: str
    """The file's content (bytes for a tiny binary file are made by the writer)."""
    day: date
    """The date it was written; becomes its mtime."""


@dataclass
class Event:
    """One VEVENT of calendar.ics (a master event; instances come from its rule)."""

    uid: str
    """Unique id."""
    summary: str
    """Title."""
    start: datetime | date
    """Wall-clock start (naive, in `tzid`) or a date for an all-day event."""
    end: datetime | date
    """Wall-clock end, or the exclusive end date of an all-day event."""
    tzid: str = ""
    """IANA zone of the wall times; "UTC" writes a Z time; "" for all-day."""
    location: str = ""
    """LOCATION."""
    description: str = ""
    """DESCRIPTION."""
    rrule: str = ""
    """RRULE value, e.g. "FREQ=WEEKLY;BYDAY=TU"; "" for a one-off."""
    exdates: list[datetime | date] = field(default_factory=list)
    """Start times of instances that do not happen."""
    salient: bool = True
    """False for background noise (bins, a standing call): not picked as a question's fact."""
    spoken: list[str] = field(default_factory=list)
    """How the user names it in a question ("dentist appointment"); empty: not asked about by name."""

    @property
    def all_day(self) -> bool:
        return not isinstance(self.start, datetime)


@dataclass
class Note:
    """One line of notebook.jsonl."""

    kind: str
    """fact | person | instruction | digest."""
    title: str
    """Title (a person's page is titled with their name and role)."""
    body: str
    """The note."""
    updated: date
    """Last change."""


@dataclass
class Memory:
    """One line of memory.jsonl."""

    kind: str
    """chat | journal | post | message | call."""
    who: str
    """Author (the user for chat, journal, post), sender of a message, other party of a call."""
    when: datetime
    """Aware local time."""
    text: str
    """What was said or written."""


@dataclass
class Probe:
    """One answerable thing planted in the data, with the tool call that retrieves it."""

    intent: str
    """Template family, e.g. "person.phone" or "doc.bill_total"."""
    tool: str
    """check_notebook | grep_memory | find_file."""
    query: str
    """The call's keywords."""
    fact: str
    """A literal substring of the item the call returns."""
    slots: dict[str, str] = field(default_factory=dict)
    """Words the question and instruction templates fill in."""
    file: str | None = None
    """Basename of the file the call must attach (find_file)."""
    device: str | None = None
    """Device the file is on (find_file)."""
    forbidden: str | None = None
    """What obeying a planted instruction would say (injection probes)."""
    person: str | None = None
    """Person.key the probe is about, if any (pairs probes into two-call questions)."""

"""One synthetic household from a seed, written as a world folder the project's world loader reads.

    household = generate_household(7, Path("out/household-007"))
    # out/household-007/world.toml, notebook.jsonl, memory.jsonl, calendar.ics, files/<device>/<Folder>/<name>

Everything varies with the seed (people, region, time zone, clock, devices, documents, calendar,
memory log, notebook) and nothing else: the same seed writes the same bytes.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import struct
import zlib
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from edge_agent.tune import documents, documents_long, memory_log, notes, stories
from edge_agent.tune.context import Ctx
from edge_agent.tune.events import build_calendar, to_ics
from edge_agent.tune.model import Doc, Event, Memory, Note, Person, Pet, Probe
from edge_agent.tune.people import Cast, make_cast
from edge_agent.tune.vocab_places import LOCALES, REGION_WEIGHTS, Locale

HOME_DEVICES = ("pi", "homebox", "nas", "server", "hub", "pi4", "pi5")
"""Ids of the always-on box that runs the agent."""
PERSONAL_DEVICES = ("laptop", "desktop", "macbook", "workpc", "thinkpad", "pc")
"""Ids of the user's own computer."""
SPARE_DEVICES = ("tablet", "mini", "backup", "ipad", "media", "old-laptop")
"""Ids of a third device."""
DEVICE_NAMES = {"pi": "Raspberry Pi in the hall", "homebox": "Home box", "nas": "NAS in the cupboard",
                "server": "Home server", "hub": "Home hub", "pi4": "Pi 4", "pi5": "Pi 5", "laptop": "Laptop",
                "desktop": "Desktop PC", "macbook": "MacBook", "workpc": "Work PC", "thinkpad": "ThinkPad",
                "pc": "PC", "tablet": "Tablet", "mini": "Mac mini", "backup": "Backup drive", "ipad": "iPad",
                "media": "Media PC", "old-laptop": "Old laptop"}
FIRST_DAY, LAST_DAY = date(2025, 1, 1), date(2027, 12, 31)
MEMORY_FILLER = (110, 170)  # everyday memory entries a household


@dataclass
class Household:
    """A generated household: what was written, and the planted facts questions are made from."""

    seed: int
    """The seed it was made from."""
    directory: Path
    """Where its world folder is."""
    locale: Locale
    """Its region."""
    timezone: str
    """IANA time zone."""
    now: datetime
    """The fixed clock (aware, in `timezone`)."""
    devices: list[str]
    """Device ids: home box, personal computer, maybe a spare."""
    cast: Cast
    """Everyone in it."""
    docs: list[Doc] = field(default_factory=list)
    """Files under files/."""
    events: list[Event] = field(default_factory=list)
    """Calendar events."""
    notes: list[Note] = field(default_factory=list)
    """Notebook notes."""
    memories: list[Memory] = field(default_factory=list)
    """Memory-log entries."""
    probes: list[Probe] = field(default_factory=list)
    """Answerable planted facts with the call that retrieves each."""
    topics: list[str] = field(default_factory=list)
    """Optional things it has (bills, insurance kinds, appliances, facts)."""

    @property
    def user(self) -> Person:
        return self.cast.user

    @property
    def pets(self) -> list[Pet]:
        return self.cast.pets

    @property
    def today(self) -> date:
        return self.now.date()


def _now(rng: random.Random, tz: str) -> datetime:
    day = FIRST_DAY + timedelta(days=rng.randrange((LAST_DAY - FIRST_DAY).days + 1))
    at = time(rng.choices((rng.randint(6, 11), rng.randint(12, 17), rng.randint(18, 23), rng.randint(0, 5)),
                          (35, 35, 25, 5))[0], rng.randrange(60))
    return datetime.combine(day, at, ZoneInfo(tz))


def _devices(rng: random.Random) -> list[str]:
    out = [rng.choice(HOME_DEVICES), rng.choice(PERSONAL_DEVICES)]
    if rng.random() < 0.5:
        out.append(rng.choice([d for d in SPARE_DEVICES if d not in out]))
    return out


def build(seed: int) -> Ctx:
    """Make a household's contents in memory (no files written)."""
    rng = random.Random(f"edge-agent tune household {seed}")
    regions = [loc for loc in LOCALES]
    loc = rng.choices(regions, [REGION_WEIGHTS[x.country] for x in regions])[0]
    tz = rng.choice(loc.zones)
    now = _now(rng, tz)
    cast = make_cast(rng, loc, now.date())
    ctx = Ctx(rng, loc, tz, now, cast, _devices(rng))
    for step in (notes.person_pages, notes.pet_pages, notes.user_facts, notes.instructions, notes.digests,
                 documents.bills, documents.receipts, documents.payslips, documents.insurance,
                 documents_long.cv, documents_long.lease, documents_long.manual, documents_long.house_notes,
                 documents_long.clinic_letter, documents_long.recipes, documents_long.meeting_notes,
                 documents_long.photos, memory_log.planted, stories.trade_job, stories.trip, stories.vet_record,
                 stories.voicemail, stories.injections, build_calendar):
        step(ctx)
    memory_log.filler(ctx, rng.randint(*MEMORY_FILLER))
    ctx.memories.sort(key=lambda m: m.when)
    return ctx


def generate_household(seed: int, out_dir: Path) -> Household:
    """Build the household for `seed` and write its world folder to `out_dir` (replacing one there)."""
    ctx = build(seed)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    hh = Household(seed, out_dir, ctx.loc, ctx.tz, ctx.now, ctx.devices, ctx.cast, ctx.docs, ctx.events, ctx.notes,
                   ctx.memories, ctx.probes, ctx.topics)
    write_world(hh)
    return hh


def _toml_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def world_toml(hh: Household) -> str:
    u = hh.user
    lines = [f"# A synthetic household (seed {hh.seed}): fixed clock, devices and who is who.",
             f"user = {_toml_str(u.name)}", f"timezone = {_toml_str(hh.timezone)}",
             f"now = {_toml_str(hh.now.replace(tzinfo=None).isoformat(timespec='seconds'))}",
             "devices = [" + ", ".join(f"{{id = {_toml_str(d)}, name = {_toml_str(DEVICE_NAMES.get(d, d))}}}"
                                       for d in hh.devices) + "]", "", "[people]"]
    for p in hh.cast.people:
        where = f"{p.employer}" if p.title or p.role in notes.PRO_ROLES else p.town
        lines.append(f"{_toml_str(p.display)} = {_toml_str(f'{p.role}; {where}')}")
    for pet in hh.pets:
        lines.append(f"{_toml_str(pet.name)} = {_toml_str(f'{pet.breed} {pet.species} (pet)')}")
    return "\n".join(lines) + "\n"


def _png() -> bytes:
    """A real 1x1 PNG (found by name only)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\x80\x80\x80")) + chunk(b"IEND", b""))


def write_world(hh: Household) -> None:
    """world.toml, notebook.jsonl, memory.jsonl, calendar.ics and files/ under hh.directory."""
    d = hh.directory
    (d / "world.toml").write_text(world_toml(hh), encoding="utf-8")
    (d / "notebook.jsonl").write_text("".join(json.dumps({"kind": n.kind, "title": n.title, "body": n.body,
                                                          "updated": n.updated.isoformat()}, ensure_ascii=False) + "\n"
                                              for n in hh.notes), encoding="utf-8")
    (d / "memory.jsonl").write_text("".join(json.dumps({"kind": m.kind, "who": m.who,
                                                        "when": m.when.isoformat(timespec="seconds"), "text": m.text},
                                                       ensure_ascii=False) + "\n" for m in hh.memories), encoding="utf-8")
    (d / "calendar.ics").write_bytes(to_ics(hh.events, hh.timezone, hh.user.first, hh.now).encode("utf-8"))
    for name in ("world.toml", "notebook.jsonl", "memory.jsonl", "calendar.ics"):  # the same seed, the same tree
        os.utime(d / name, (hh.now.timestamp(), hh.now.timestamp()))
    files = d / "files"
    if files.exists():
        shutil.rmtree(files)
    for doc in hh.docs:
        path = files / doc.device / doc.folder / doc.name
        path.parent.mkdir(parents=True, exist_ok=True)
        if doc.name.endswith(".png"):
            path.write_bytes(_png())
        else:
            path.write_text(doc.text + ("" if doc.text.endswith("\n") else "\n"), encoding="utf-8")
        stamp = datetime.combine(doc.day, time(12, 0), ZoneInfo(hh.timezone)).timestamp()
        os.utime(path, (stamp, stamp))

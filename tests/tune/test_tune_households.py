"""Generated households: deterministic per seed, varied across seeds, fast, and loadable as a world folder."""
from __future__ import annotations

import json
import re
import time
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from edge_agent.ingest.world import load_world, read_world_info
from edge_agent.store import Store
from edge_agent.tune.households import generate_household

FOLDERS = {"Documents", "Bills", "Receipts", "Notes", "Recordings", "Photos"}
PHONE = re.compile(r"(?:\+44 |0)7700 900\d{3}|(?:\+44 |0)113 496 0\d{3}|(?:\+44 |0)161 496 0\d{3}"
                   r"|(?:\+44 |0)20 7946 0\d{3}|0808 157 0\d{3}|\(\d{3}\) 555-01\d{2}")
"""Fiction ranges: Ofcom's drama ranges (UK, and +44 elsewhere) and 555-01xx (US)."""
NUMBER_LIKE = re.compile(r"(?<![\w-])(?:\+\d{2} |\(\d{2,3}\) |0)\d{2,4}[ -]\d{3,4}(?:[ -]\d{3,4})?(?![\w-])")


def tree(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), int(p.stat().st_mtime)) for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_the_same_seed_writes_the_same_bytes(tmp_path):
    a = generate_household(7, tmp_path / "a")
    b = generate_household(7, tmp_path / "b")
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
    assert a.probes == b.probes and a.now == b.now


def test_writing_again_replaces_the_folder(tmp_path):
    generate_household(3, tmp_path / "h")
    (tmp_path / "h" / "files" / "stale").mkdir()
    first = tree(tmp_path / "h")
    generate_household(3, tmp_path / "h")
    assert tree(tmp_path / "h") == {k: v for k, v in first.items()}
    assert not (tmp_path / "h" / "files" / "stale").exists()


def test_different_seeds_give_different_households(generated):
    users = {g.household.user.name for g in generated}
    assert len(users) == len(generated)
    notebooks = {(g.household.directory / "notebook.jsonl").read_text(encoding="utf-8") for g in generated}
    assert len(notebooks) == len(generated)
    zones = {g.household.timezone for g in generated}
    regions = {g.household.locale.country for g in generated}
    devices = {d for g in generated for d in g.household.devices}
    years = {g.household.now.year for g in generated}
    hours = {g.household.now.hour for g in generated}
    assert len(zones) >= 5 and len(regions) >= 4 and len(devices) >= 6, (zones, regions, devices)
    assert years == {2025, 2026, 2027} and len(hours) >= 8
    assert {len(g.household.devices) for g in generated} == {2, 3}
    assert any(g.household.pets for g in generated) and any(not g.household.pets for g in generated)


def test_a_household_takes_well_under_a_second(tmp_path):
    t0 = time.perf_counter()
    for seed in range(100, 110):
        generate_household(seed, tmp_path / str(seed))
    per = (time.perf_counter() - t0) / 10
    assert per < 0.25, f"{per:.3f} s a household"


def test_world_toml_and_files_follow_the_world_format(generated):
    for g in generated:
        hh, d = g.household, g.household.directory
        info = read_world_info(d)
        assert info.user == hh.user.name and info.timezone == hh.timezone
        assert info.now.replace(tzinfo=ZoneInfo(hh.timezone)) == hh.now and date(2025, 1, 1) <= hh.today <= date(2027, 12, 31)
        assert [dev.id for dev in info.devices] == hh.devices
        assert len(info.model_extra["people"]) == len(hh.cast.people) + len(hh.pets)
        for path in (d / "files").rglob("*"):
            if path.is_file():
                device, folder = path.relative_to(d / "files").parts[:2]
                assert device in hh.devices and folder in FOLDERS, path
                assert path.suffix in (".txt", ".md", ".png"), path
        texts = [p for p in (d / "files").rglob("*") if p.suffix in (".txt", ".md")]
        assert len(texts) >= 15 and max(len(p.read_text(encoding="utf-8")) for p in texts) > 2500
        for line in (d / "notebook.jsonl").read_text(encoding="utf-8").splitlines():
            assert set(json.loads(line)) == {"kind", "title", "body", "updated"}


def test_memory_times_carry_the_zone_offset_and_span_a_year(generated):
    for g in generated:
        hh = g.household
        rows = [json.loads(line) for line in (hh.directory / "memory.jsonl").read_text(encoding="utf-8").splitlines()]
        kinds = {r["kind"] for r in rows}
        assert kinds == {"chat", "journal", "post", "message", "call"}
        whens = [datetime.fromisoformat(r["when"]) for r in rows]
        zone = ZoneInfo(hh.timezone)
        for when in whens:
            assert when.utcoffset() == when.replace(tzinfo=None).replace(tzinfo=zone).utcoffset(), when
        assert max(whens) < hh.now and (hh.now - min(whens)).days > 300 and whens == sorted(whens)


def test_the_calendar_has_every_kind_of_event(generated):
    for g in generated:
        ics = (g.household.directory / "calendar.ics").read_text(encoding="utf-8").replace("\r\n ", "")
        assert f"DTSTART;TZID={g.household.timezone}:" in ics and "DTSTART;VALUE=DATE:" in ics
        assert re.search(r"DTSTART:\d{8}T\d{6}Z", ics), "a UTC event"
        assert "RRULE:FREQ=WEEKLY" in ics and "RRULE:FREQ=MONTHLY" in ics and "RRULE:FREQ=YEARLY" in ics
        assert "EXDATE;TZID=" in ics and "INTERVAL=2" in ics and f"TZID:{g.household.timezone}" in ics
        events = g.household.events
        assert any(e.all_day and (e.end - e.start).days > 1 for e in events), "a multi-day event"
        starts = [e.start if isinstance(e.start, date) and not isinstance(e.start, datetime) else e.start.date()
                  for e in events if not e.rrule]
        assert min(starts) < g.household.today < max(starts)


def test_phone_numbers_and_emails_are_fiction(generated):
    for g in generated:
        d = g.household.directory
        text = " ".join(p.read_text(encoding="utf-8") for p in d.rglob("*") if p.suffix in (".txt", ".md", ".jsonl", ".toml"))
        for number in NUMBER_LIKE.findall(text):
            assert PHONE.fullmatch(number), number
        for person in [g.household.user, *g.household.cast.people]:
            assert PHONE.fullmatch(person.phone), person.phone
        for email in re.findall(r"[\w.+-]+@[\w.-]+", text):
            domain = email.split("@")[1].rstrip(".")
            assert domain == "example.com" or domain.endswith(".example"), email


async def test_every_part_loads_with_the_world_loader(generated, tmp_path):
    for g in generated[:6]:
        hh = g.household
        async with Store.open(tmp_path / f"{hh.seed}.db") as store:
            report = await load_world(store, hh.directory)
            assert report.problems == [] and report.rejects == [], (report.problems, report.rejects[:3])
            assert await store.notebook.count() == len(hh.notes)
            assert await store.memory.count() == len(hh.memories)
            assert await store.calendar.count() == len(hh.events)
            assert await store.files.count() == len(hh.docs)
            assert {d["id"] for d in await store.files.devices()} == set(hh.devices)

"""Expanding stored calendar events into the occurrences that overlap a range (dateutil rrule).

Times are kept as naive wall-clock times in the event's own zone and expanded there, so a weekly
09:00 meeting stays at 09:00 across a DST change (RFC 5545 semantics); each occurrence is then
made aware and shown in the device's zone. All-day events are dates and stay dates.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo

from dateutil.rrule import rruleset, rrulestr

log = logging.getLogger(__name__)

MAX_EXPANDED = 5000  # occurrences one event may produce inside one range (a daily rule over years)


@dataclass(frozen=True)
class EventRecord:
    """One VEVENT as stored: a single event, a recurring master, or an override of one instance."""

    uid: str
    """iCalendar UID; shared by a master and its overrides."""
    title: str
    """SUMMARY."""
    start: datetime | date
    """Naive wall-clock start in `tzid` (a date when all-day)."""
    end: datetime | date
    """Naive wall-clock end (exclusive date when all-day)."""
    all_day: bool
    """True when DTSTART is a date."""
    tzid: str = ""
    """IANA zone of the wall-clock times; "" = floating (the device's zone)."""
    rrule: str = ""
    """RRULE value with UNTIL already converted to naive wall-clock time; "" = not recurring."""
    rdates: tuple[datetime | date, ...] = ()
    """Extra instance starts (same zone and type as `start`)."""
    exdates: tuple[datetime | date, ...] = ()
    """Instance starts removed from the rule."""
    recurrence_id: datetime | date | None = None
    """For an override: the original start of the instance it replaces."""
    cancelled: bool = False
    """An override with STATUS:CANCELLED removes its instance."""
    location: str = ""
    """LOCATION."""
    notes: str = ""
    """DESCRIPTION."""


@dataclass(frozen=True)
class Occurrence:
    """One instance of an event inside the asked range, in the device's zone."""

    uid: str
    """The event's UID (the master's, for an instance of a recurring event)."""
    title: str
    """SUMMARY."""
    start: datetime | date
    """Aware start in the device's zone, or a date when all-day."""
    end: datetime | date
    """Aware end, or the inclusive last date when all-day."""
    all_day: bool
    """True for date-only events."""
    location: str
    """LOCATION."""
    notes: str
    """DESCRIPTION."""

    def sort_key(self, zone: tzinfo) -> datetime:
        if isinstance(self.start, datetime):
            return self.start
        return datetime.combine(self.start, time(), zone)

    def to_payload(self) -> dict:
        return {"uid": self.uid, "title": self.title, "start": self.start.isoformat(),
                "end": self.end.isoformat(), "all_day": self.all_day, "location": self.location,
                "notes": self.notes}


def encode_when(value: datetime | date | None) -> str:
    return "" if value is None else value.isoformat()


def decode_when(text: str, all_day: bool) -> datetime | date | None:
    if not text:
        return None
    return date.fromisoformat(text) if all_day else datetime.fromisoformat(text)


def encode_list(values: tuple[datetime | date, ...]) -> str:
    return json.dumps([v.isoformat() for v in values])


def decode_list(text: str, all_day: bool) -> tuple:
    return tuple(decode_when(v, all_day) for v in json.loads(text or "[]"))


def event_zone(record: EventRecord, device_zone: tzinfo) -> tzinfo:
    return ZoneInfo(record.tzid) if record.tzid else device_zone


def as_naive(value: datetime | date) -> datetime:
    return value if isinstance(value, datetime) else datetime.combine(value, time())


def instance_starts(record: EventRecord, lo: datetime, hi: datetime) -> list[datetime]:
    """Naive wall-clock starts of `record` in [lo, hi] (both naive in the event's zone)."""
    first = as_naive(record.start)
    if not record.rrule:
        return [first] if lo <= first <= hi else []
    rules = rruleset()
    rules.rrule(rrulestr(record.rrule, dtstart=first, ignoretz=True))
    for extra in record.rdates:
        rules.rdate(as_naive(extra))
    for gone in record.exdates:
        rules.exdate(as_naive(gone))
    out = []
    for start in rules.xafter(lo, inc=True):
        if start > hi or len(out) >= MAX_EXPANDED:
            break
        out.append(start)
    return out


def validate(record: EventRecord) -> None:
    """Raise ValueError if the record cannot be expanded (bad zone or rule)."""
    if record.tzid:
        try:
            ZoneInfo(record.tzid)
        except (KeyError, ValueError) as err:
            raise ValueError(f"unknown time zone {record.tzid!r}") from err
    if as_naive(record.end) < as_naive(record.start):
        raise ValueError("event ends before it starts")
    if record.rrule:
        try:
            first = as_naive(record.start)
            instance_starts(record, first, first + timedelta(days=1))
        except (ValueError, TypeError) as err:
            raise ValueError(f"bad RRULE {record.rrule!r}: {err}") from err


def expand(record: EventRecord, skip: set[datetime], range_start: datetime, range_end: datetime,
           device_zone: tzinfo) -> list[Occurrence]:
    """Occurrences of `record` overlapping [range_start, range_end) (aware, device zone).

    `skip` holds naive wall-clock instance starts replaced by overrides.
    """
    if record.cancelled:
        return []
    zone = event_zone(record, device_zone)
    duration = as_naive(record.end) - as_naive(record.start)
    if record.all_day:
        lo = datetime.combine(range_start.astimezone(device_zone).date(), time()) - duration
        hi = datetime.combine(range_end.astimezone(device_zone).date(), time())
    else:
        lo = range_start.astimezone(zone).replace(tzinfo=None) - duration
        hi = range_end.astimezone(zone).replace(tzinfo=None)
    out = []
    for start in instance_starts(record, lo, hi):
        if start in skip:
            continue
        end = start + duration
        if record.all_day:
            first_day, end_day = start.date(), end.date()
            last_day = max(first_day, end_day - timedelta(days=1))
            if end_day <= range_start.date() and first_day < range_start.date() or first_day >= range_end.date():
                continue
            out.append(Occurrence(record.uid, record.title, first_day, last_day, True, record.location, record.notes))
            continue
        aware_start = start.replace(tzinfo=zone).astimezone(device_zone)
        aware_end = end.replace(tzinfo=zone).astimezone(device_zone)
        if aware_end <= range_start and aware_start < range_start or aware_start >= range_end:
            continue
        out.append(Occurrence(record.uid, record.title, aware_start, aware_end, False, record.location, record.notes))
    return out

"""Expanding stored calendar events into the occurrences that overlap a range (recurring-ical-events).

A stored record (a master with its RRULE/RDATE/EXDATE, or an override of one instance) is turned
back into a VEVENT; the records sharing a UID form one small calendar that recurring-ical-events
expands, so overrides (RECURRENCE-ID), EXDATE, RDATE and zones follow RFC 5545 as that library
implements it rather than a hand-written copy. Times are stored as naive wall-clock times in the
event's own zone, so a weekly 09:00 meeting stays at 09:00 across a DST change; each occurrence is
then shown in the device's zone. Floating events are taken in the device's zone. All-day events
are dates and stay dates.
"""
from __future__ import annotations

import functools
import json
import logging
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from itertools import islice
from zoneinfo import ZoneInfo

import recurring_ical_events
from icalendar import Calendar, Event, vRecur

log = logging.getLogger(__name__)

QUERY_CACHE_SIZE = 512  # UID groups whose parsed series are kept between queries (each a few KB)
MAX_EXPANDED = 5000  # instances walked to find where a finite rule ends (longer: treated as open-ended)
EXPANSION_ERRORS = (ValueError, TypeError, KeyError, OverflowError, recurring_ical_events.InvalidCalendar)
"""What a stored event that cannot be expanded raises (bad rule, zone or dates)."""


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
    """RRULE value; its UNTIL the UTC instant of a zoned series, else wall-clock time; "" = not recurring."""
    rdates: tuple[datetime | date, ...] = ()
    """Extra instance starts as the file gives them: dates, naive wall-clock times in `tzid`, or aware
    times in the zone (or UTC) the file names."""
    exdates: tuple[datetime | date, ...] = ()
    """Instance starts removed from the rule, in the same terms as `rdates`."""
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

    @classmethod
    def from_payload(cls, d: dict) -> "Occurrence":
        """The occurrence a to_payload() dict describes (side channels hold payloads)."""
        all_day = bool(d.get("all_day"))
        parse = date.fromisoformat if all_day else datetime.fromisoformat
        return cls(str(d.get("uid", "")), str(d.get("title", "")), parse(str(d["start"])), parse(str(d["end"])),
                   all_day, str(d.get("location") or ""), str(d.get("notes") or ""))


def encode_when(value: datetime | date | None) -> str:
    return "" if value is None else value.isoformat()


def decode_when(text: str, all_day: bool) -> datetime | date | None:
    if not text:
        return None
    return date.fromisoformat(text) if all_day else datetime.fromisoformat(text)


def encode_list(values: tuple[datetime | date, ...]) -> str:
    """JSON: an ISO string per date or naive time; {"at", "tz"} per aware time (its zone's name, or UTC)."""
    out: list = []
    for v in values:
        if isinstance(v, datetime) and v.tzinfo is not None:
            tz = "UTC" if v.tzinfo is timezone.utc else getattr(v.tzinfo, "key", None)
            if tz is None:  # a zone without an IANA name: its instant
                v, tz = v.astimezone(timezone.utc), "UTC"
            out.append({"at": v.replace(tzinfo=None).isoformat(), "tz": tz})
        else:
            out.append(v.isoformat())
    return json.dumps(out)


def decode_list(text: str, all_day: bool) -> tuple:
    out = []
    for v in json.loads(text or "[]"):
        if isinstance(v, dict):
            zone = timezone.utc if v["tz"] == "UTC" else ZoneInfo(v["tz"])
            out.append(datetime.fromisoformat(v["at"]).replace(tzinfo=zone))
        else:
            out.append(decode_when(v, all_day))
    return tuple(out)


def event_zone(record: EventRecord, device_zone: tzinfo) -> tzinfo:
    return ZoneInfo(record.tzid) if record.tzid else device_zone


def as_naive(value: datetime | date) -> datetime:
    return value if isinstance(value, datetime) else datetime.combine(value, time())


def _aware(value: datetime | date, zone: tzinfo) -> datetime | date:
    """A naive wall-clock time placed in `zone`; a date, or a time that names its own zone, as it is."""
    return value if not isinstance(value, datetime) or value.tzinfo is not None else value.replace(tzinfo=zone)


def _wall_in(value: datetime | date, zone: tzinfo) -> datetime:
    """Naive wall-clock time in `zone` (an aware time converted, a naive one taken as it is)."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(zone).replace(tzinfo=None)
    return as_naive(value)


def to_vevent(record: EventRecord, device_zone: tzinfo) -> Event:
    """The record as a VEVENT again, its wall-clock times in its own zone (floating: the device's)."""
    zone = event_zone(record, device_zone)
    event = Event()
    event.add("uid", record.uid)
    event.add("summary", record.title)
    event.add("dtstart", _aware(record.start, zone))
    event.add("dtend", _aware(record.end, zone))
    if record.rrule:
        rule = vRecur.from_ical(record.rrule)
        until = rule["UNTIL"][0] if "UNTIL" in rule else None
        if isinstance(until, datetime) and until.tzinfo is None:  # wall-clock time in the event's zone
            # written as the UTC instant RFC 5545 asks of a zoned rule: an UNTIL without a zone
            # is read as UTC by the expansion, and west of Greenwich loses the last occurrence
            rule["UNTIL"] = [_aware(until, zone).astimezone(timezone.utc)]
        event.add("rrule", rule)
    if record.rdates:
        event.add("rdate", [_aware(d, zone) for d in record.rdates])
    if record.exdates:
        event.add("exdate", [_aware(d, zone) for d in record.exdates])
    if record.recurrence_id is not None:
        event.add("recurrence-id", _aware(record.recurrence_id, zone))
    if record.cancelled:
        event.add("status", "CANCELLED")
    if record.location:
        event.add("location", record.location)
    if record.notes:
        event.add("description", record.notes)
    return event


def _calendar(records: tuple[EventRecord, ...] | list[EventRecord], device_zone: tzinfo) -> Calendar:
    calendar = Calendar()
    for record in records:
        calendar.add_component(to_vevent(record, device_zone))
    return calendar


@functools.lru_cache(maxsize=QUERY_CACHE_SIZE)
def _query(records: tuple[EventRecord, ...], device_zone: tzinfo) -> recurring_ical_events.CalendarQuery:
    """The expansion query of one UID's records; keyed by their stored values, so an edit is a new entry.

    Building the VEVENTs and parsing their rules is about a third of a month's query time;
    the calendar changes rarely and the same records are asked about again and again.
    """
    return recurring_ical_events.of(_calendar(records, device_zone))


def last_start(record: EventRecord) -> datetime | None:
    """Naive wall-clock start of the record's last instance; None when it never ends (or is too long to walk)."""
    first = as_naive(record.start)
    if not record.rrule:
        zone = event_zone(record, ZoneInfo("UTC"))
        return max([first, *(_wall_in(d, zone) for d in record.rdates)])
    if "COUNT=" not in record.rrule.upper() and "UNTIL=" not in record.rrule.upper():
        return None
    zone = event_zone(record, ZoneInfo("UTC"))
    query = recurring_ical_events.of(_calendar([record], zone))
    starts = [as_naive(e.decoded("DTSTART")) for e in islice(query.after(_aware(first, zone)), MAX_EXPANDED + 1)]
    if len(starts) > MAX_EXPANDED:
        return None
    return max([first, *(s.replace(tzinfo=None) for s in starts)])


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
        zone = event_zone(record, ZoneInfo("UTC"))
        try:
            first = _aware(as_naive(record.start), zone)
            recurring_ical_events.of(_calendar([record], zone)).between(first, first + timedelta(days=1))
        except EXPANSION_ERRORS as err:
            raise ValueError(f"bad RRULE {record.rrule!r}: {err}") from err


def _occurrence(event: Event, all_day: bool, device_zone: tzinfo) -> Occurrence:
    start, end = event.decoded("DTSTART"), event.decoded("DTEND")
    text = {k: str(event.get(k, "")) for k in ("UID", "SUMMARY", "LOCATION", "DESCRIPTION")}
    if all_day:
        first_day = start if not isinstance(start, datetime) else start.date()
        end_day = end if not isinstance(end, datetime) else end.date()
        return Occurrence(text["UID"], text["SUMMARY"], first_day, max(first_day, end_day - timedelta(days=1)), True,
                          text["LOCATION"], text["DESCRIPTION"])
    return Occurrence(text["UID"], text["SUMMARY"], start.astimezone(device_zone), end.astimezone(device_zone), False,
                      text["LOCATION"], text["DESCRIPTION"])


def expand(records: list[EventRecord], range_start: datetime, range_end: datetime,
           device_zone: tzinfo) -> list[Occurrence]:
    """Occurrences of one UID's records (master and overrides) overlapping [range_start, range_end).

    An override replaces the instance its RECURRENCE-ID names even when it has moved out of the
    range; a cancelled override removes it.
    """
    query = _query(tuple(records), device_zone)
    first_day, end_day = range_start.astimezone(device_zone).date(), range_end.astimezone(device_zone).date()
    out = []
    for event in query.between(range_start, range_end):
        if str(event.get("STATUS", "")).upper() == "CANCELLED":
            continue
        all_day = not isinstance(event.decoded("DTSTART"), datetime)
        if all_day:  # whole days in the device's zone, whatever the library makes of dates beside times
            occ = _occurrence(event, True, device_zone)
            if occ.end < first_day or occ.start >= end_day:
                continue
            out.append(occ)
            continue
        out.append(_occurrence(event, False, device_zone))
    return out

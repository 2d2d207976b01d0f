"""Importing an iCalendar (.ics) file with the icalendar library, one VEVENT at a time.

Each VEVENT is parsed on its own (with the file's VTIMEZONEs) so a broken event is one reject
with its line number and every other event still lands.
"""
from __future__ import annotations

import hashlib
import logging
import re
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from pathlib import Path

from icalendar import Calendar, vRecur

from edge_agent.ingest.jsonl import SourceError, read_lines
from edge_agent.ingest.report import ImportReport, Progress
from edge_agent.store.recurrence import EventRecord
from edge_agent.store.sql import transaction

log = logging.getLogger(__name__)

TIME_PROPS = frozenset({"DTSTART", "DTEND", "DURATION", "RRULE", "EXDATE", "RDATE", "RECURRENCE-ID"})
_BEGIN = re.compile(r"^BEGIN:(VEVENT|VTIMEZONE)\s*$", re.IGNORECASE)
_END = re.compile(r"^END:(VEVENT|VTIMEZONE)\s*$", re.IGNORECASE)


class EventError(ValueError):
    """One VEVENT cannot be used; the message says why."""


def split_components(lines: list[str]) -> tuple[list[str], list[tuple[int, str]]]:
    """(VTIMEZONE blocks, [(first line number, VEVENT block)]); an unterminated block is skipped."""
    zones: list[str] = []
    events: list[tuple[int, str]] = []
    current: list[str] | None = None
    kind, first = "", 0
    for number, line in enumerate(lines, 1):
        begin, end = _BEGIN.match(line), _END.match(line)
        if current is None:
            if begin:
                current, kind, first = [line], begin.group(1).upper(), number
            continue
        current.append(line)
        if end and end.group(1).upper() == kind:
            block = "\r\n".join(current) + "\r\n"
            (zones.append(block) if kind == "VTIMEZONE" else events.append((first, block)))
            current = None
        elif begin and begin.group(1).upper() == kind:  # a new block opened: the previous never ended
            events.append((first, ""))
            current, first = [line], number
    if current is not None and kind == "VEVENT":
        events.append((first, ""))
    return zones, events


def _zone_name(tz: tzinfo | None) -> str | None:
    """An IANA name for a tzinfo, "UTC" for UTC, or None if it has none."""
    if tz is None:
        return ""
    key = getattr(tz, "key", None) or getattr(tz, "zone", None)
    if key:
        return "UTC" if key in ("UTC", "Etc/UTC") else key
    if tz is timezone.utc or datetime(2000, 1, 1, tzinfo=tz).utcoffset() == timedelta(0) and \
            datetime(2000, 7, 1, tzinfo=tz).utcoffset() == timedelta(0):
        return "UTC"
    return None


def _wall(value: date | datetime, zone_name: str, all_day: bool) -> date | datetime:
    """A date (all-day) or a naive wall-clock datetime in the event's zone."""
    if all_day:
        return value.date() if isinstance(value, datetime) else value
    if not isinstance(value, datetime):
        return datetime.combine(value, time())
    if value.tzinfo is None:
        return value
    if not zone_name:  # floating event with an aware date elsewhere: keep its wall time
        return value.replace(tzinfo=None)
    from zoneinfo import ZoneInfo

    return value.astimezone(ZoneInfo(zone_name)).replace(tzinfo=None)


def _as_given(value: date | datetime, zone_name: str, all_day: bool) -> date | datetime:
    """An RDATE/EXDATE value as the file gives it: a date; a floating time (in the event's own
    terms); or the time in the zone it names, or UTC, kept aware (store.recurrence.encode_list names
    the zone). Turned into the event's wall-clock time it would lose which of a repeated hour it
    meant (the fall-back hour west or east of UTC)."""
    if all_day or not isinstance(value, datetime) or value.tzinfo is None:
        return _wall(value, zone_name, all_day)
    return value


def _dates(component, prop: str, zone_name: str, all_day: bool) -> tuple:
    values = component.get(prop)
    if values is None:
        return ()
    out = []
    for group in values if isinstance(values, list) else [values]:
        for item in getattr(group, "dts", []):
            # An RDATE period counts by its start; the instance keeps the event's own length.
            when = item.dt[0] if isinstance(item.dt, tuple) else item.dt
            if isinstance(when, (date, datetime)):
                out.append(_as_given(when, zone_name, all_day))
    return tuple(out)


def _rrule(component, zone_name: str, all_day: bool) -> str:
    rule = component.get("RRULE")
    if rule is None:
        return ""
    if isinstance(rule, list):
        raise EventError("more than one RRULE")
    rule = vRecur(dict(rule))
    if "UNTIL" in rule:
        until = rule["UNTIL"][0]
        if not all_day and not isinstance(until, datetime):
            until = datetime.combine(until, time(23, 59, 59))
        if zone_name and isinstance(until, datetime) and until.tzinfo is not None and not all_day:
            # A zoned series' UNTIL is an instant (RFC 5545 writes it in UTC): kept as that instant.
            # As local wall-clock time it was later read as UTC, and west of Greenwich the last
            # occurrence fell after it.
            rule["UNTIL"] = [until.astimezone(timezone.utc)]
        else:  # a date, or a floating series: in the same wall-clock terms as DTSTART
            rule["UNTIL"] = [_wall(until, zone_name, all_day)]
    return rule.to_ical().decode("ascii")


def to_record(component) -> EventRecord:
    """An EventRecord from a parsed VEVENT; raises EventError naming the problem."""
    bad = [f"{prop}: {msg}" for prop, msg in getattr(component, "errors", []) if str(prop).upper() in TIME_PROPS]
    if bad:
        raise EventError("; ".join(bad))
    if component.get("DTSTART") is None:
        raise EventError("no DTSTART")
    start = component.decoded("DTSTART")
    if not isinstance(start, (date, datetime)):
        raise EventError(f"DTSTART is not a date or date-time: {start!r}")
    all_day = not isinstance(start, datetime)
    tzid = component["DTSTART"].params.get("TZID")
    if tzid and not all_day and start.tzinfo is None:  # icalendar would silently make it floating
        raise EventError(f"DTSTART: unknown time zone {tzid!r}")
    zone_name = "" if all_day else _zone_name(start.tzinfo)
    if zone_name is None:  # a custom zone without an IANA name: pin it to UTC
        start, zone_name = start.astimezone(timezone.utc), "UTC"
    if component.get("DTEND") is not None:
        end = component.decoded("DTEND")
    elif component.get("DURATION") is not None:
        end = start + component.decoded("DURATION")
    else:
        end = start + timedelta(days=1) if all_day else start
    summary = str(component.get("SUMMARY", "")).strip() or "(no title)"
    uid = str(component.get("UID", "")).strip()
    if not uid:  # stable across imports so a re-import replaces rather than duplicates
        uid = "generated-" + hashlib.sha1(f"{summary}|{start.isoformat()}".encode()).hexdigest()[:16]
    rid = component.get("RECURRENCE-ID")
    record = EventRecord(
        uid=uid, title=summary, start=_wall(start, zone_name, all_day), end=_wall(end, zone_name, all_day),
        all_day=all_day, tzid=zone_name, rrule=_rrule(component, zone_name, all_day),
        rdates=_dates(component, "RDATE", zone_name, all_day),
        exdates=_dates(component, "EXDATE", zone_name, all_day),
        recurrence_id=_wall(component.decoded("RECURRENCE-ID"), zone_name, all_day) if rid is not None else None,
        cancelled=str(component.get("STATUS", "")).upper() == "CANCELLED",
        location=str(component.get("LOCATION", "")).strip(), notes=str(component.get("DESCRIPTION", "")).strip())
    return record


def parse_block(zones: list[str], block: str):
    text = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//edge-agent//import//EN\r\n" + "".join(zones) + block \
        + "END:VCALENDAR\r\n"
    try:
        calendar = Calendar.from_ical(text)
    except (ValueError, KeyError, TypeError, IndexError) as err:
        raise EventError(f"cannot parse: {err}") from err
    events = list(calendar.walk("VEVENT"))
    if len(events) != 1:
        raise EventError("not a single VEVENT")
    return events[0]


async def import_ics(repo, path: Path, progress: Progress | None = None) -> ImportReport:
    """Store every good VEVENT of an .ics file; each bad one is a reject with its line number."""
    report = ImportReport(source=str(path))
    lines = read_lines(path)
    if not any(line.strip().upper() == "BEGIN:VCALENDAR" for line in lines):
        raise SourceError(f"{path}: not an iCalendar file (no BEGIN:VCALENDAR)")
    zones, events = split_components(lines)
    async with transaction(repo.conn):
        for done, (number, block) in enumerate(events, 1):
            try:
                if not block:
                    raise EventError("BEGIN:VEVENT without a matching END:VEVENT")
                status = await repo.upsert(to_record(parse_block(zones, block)))
            except (EventError, ValueError) as err:
                report.rejects.append(f"{path}:{number}: {err}")
            else:
                setattr(report, status, getattr(report, status) + 1)
            if progress:
                progress(done, len(events))
    return report

"""The calendar: master events with their RRULE and overrides, expanded for the asked range at query time."""
from __future__ import annotations

import logging
from collections import defaultdict
from datetime import date, datetime, time, timedelta, timezone, tzinfo

import aiosqlite

from edge_agent.store.recurrence import (EXPANSION_ERRORS, EventRecord, Occurrence, as_naive, decode_list,
                                         decode_when, encode_list, encode_when, event_zone, expand, last_start,
                                         validate)
from edge_agent.store.sql import fetch_all, fetch_one, transaction

log = logging.getLogger(__name__)

MIGRATION_ORDER = 10

OPEN_END = "9999-12-31T00:00:00+00:00"  # span end of a rule without COUNT or UNTIL
SPAN_SLACK = timedelta(days=1)  # covers any zone offset when comparing spans in UTC


async def calendar_001_create(conn: aiosqlite.Connection) -> None:
    await conn.execute(
        "CREATE TABLE calendar_events (id INTEGER PRIMARY KEY, uid TEXT NOT NULL,"
        " recurrence_id TEXT NOT NULL DEFAULT '', title TEXT NOT NULL, start TEXT NOT NULL,"
        " end TEXT NOT NULL, all_day INTEGER NOT NULL, tzid TEXT NOT NULL DEFAULT '',"
        " rrule TEXT NOT NULL DEFAULT '', rdates TEXT NOT NULL DEFAULT '[]',"
        " exdates TEXT NOT NULL DEFAULT '[]', cancelled INTEGER NOT NULL DEFAULT 0,"
        " location TEXT NOT NULL DEFAULT '', notes TEXT NOT NULL DEFAULT '',"
        " span_start TEXT NOT NULL, span_end TEXT NOT NULL, UNIQUE(uid, recurrence_id))")
    await conn.execute("CREATE INDEX calendar_span ON calendar_events(span_start, span_end)")


MIGRATIONS = [calendar_001_create]

_COLUMNS = ("uid", "recurrence_id", "title", "start", "end", "all_day", "tzid", "rrule", "rdates", "exdates",
            "cancelled", "location", "notes", "span_start", "span_end")


def _utc(wall: datetime, zone: tzinfo) -> str:
    return wall.replace(tzinfo=zone).astimezone(timezone.utc).isoformat()


def _span(record: EventRecord) -> tuple[str, str]:
    """UTC bounds (with a day of slack) that every instance of the record lies within."""
    zone = event_zone(record, timezone.utc)  # floating events: UTC plus slack is close enough
    first = as_naive(record.start)
    duration = as_naive(record.end) - first
    last = last_start(record)
    if last is None:  # no COUNT or UNTIL, or too long to walk: open-ended
        return _utc(first - SPAN_SLACK, zone), OPEN_END
    return _utc(first - SPAN_SLACK, zone), _utc(last + duration + SPAN_SLACK, zone)


def _record(row: aiosqlite.Row) -> EventRecord:
    all_day = bool(row["all_day"])
    return EventRecord(
        uid=row["uid"], title=row["title"], start=decode_when(row["start"], all_day),
        end=decode_when(row["end"], all_day), all_day=all_day, tzid=row["tzid"], rrule=row["rrule"],
        rdates=decode_list(row["rdates"], all_day), exdates=decode_list(row["exdates"], all_day),
        recurrence_id=decode_when(row["recurrence_id"], all_day), cancelled=bool(row["cancelled"]),
        location=row["location"], notes=row["notes"])


class CalendarRepo:
    """Queries and changes on the calendar."""

    def __init__(self, conn: aiosqlite.Connection):
        self.conn = conn

    async def upsert(self, record: EventRecord) -> str:
        """Store one event, replacing the same uid + recurrence id: "added", "updated" or "unchanged"."""
        validate(record)
        span_start, span_end = _span(record)
        values = (record.uid, encode_when(record.recurrence_id), record.title, encode_when(record.start),
                  encode_when(record.end), int(record.all_day), record.tzid, record.rrule,
                  encode_list(record.rdates), encode_list(record.exdates), int(record.cancelled),
                  record.location, record.notes, span_start, span_end)
        cols = ", ".join(_COLUMNS)
        async with transaction(self.conn):
            existing = await fetch_one(self.conn, f"SELECT {cols} FROM calendar_events"
                                                  " WHERE uid = ? AND recurrence_id = ?", values[:2])
            if existing is not None and tuple(existing) == values:
                return "unchanged"
            await self.conn.execute(
                f"INSERT INTO calendar_events({cols}) VALUES ({', '.join('?' for _ in _COLUMNS)})"
                " ON CONFLICT(uid, recurrence_id) DO UPDATE SET "
                + ", ".join(f"{c}=excluded.{c}" for c in _COLUMNS[2:]), values)
        return "added" if existing is None else "updated"

    async def count(self) -> int:
        row = await fetch_one(self.conn, "SELECT count(*) FROM calendar_events")
        return int(row[0])

    async def between(self, first_day: date, last_day: date, zone: tzinfo) -> list[Occurrence]:
        """Every occurrence overlapping the days first_day..last_day (inclusive) in `zone`, by start."""
        if last_day < first_day:
            raise ValueError(f"range ends ({last_day}) before it starts ({first_day})")
        range_start = datetime.combine(first_day, time(), zone)
        range_end = datetime.combine(last_day + timedelta(days=1), time(), zone)
        # Every record of a UID with one record near the range: an override moved out of the range
        # still replaces its original instance, and one moved into it still needs its master.
        rows = await fetch_all(
            self.conn, "SELECT * FROM calendar_events WHERE uid IN (SELECT uid FROM calendar_events"
                       " WHERE span_start < ? AND span_end > ?) ORDER BY uid, recurrence_id",
            (range_end.astimezone(timezone.utc).isoformat(), range_start.astimezone(timezone.utc).isoformat()))
        groups: dict[str, list[EventRecord]] = defaultdict(list)
        for row in rows:
            groups[row["uid"]].append(_record(row))
        out: list[Occurrence] = []
        for uid, records in groups.items():
            try:
                out.extend(expand(records, range_start, range_end, zone))
            except EXPANSION_ERRORS as err:  # one bad stored event must not hide the rest
                log.warning("calendar event %s could not be expanded: %s", uid, err)
        out.sort(key=lambda o: (o.sort_key(zone), o.title))
        return out

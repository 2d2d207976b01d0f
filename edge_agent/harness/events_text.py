"""Calendar events as the asker reads them: one line an event, a repeating one on one line.

"Eye test — Tue 24 Nov 10:15-11:00 @ Northgate Opticians — bring glasses";
occurrences of one series in the range share a line ("Choir — Tue 24 Nov, Tue 1 Dec
19:00-21:00 @ St Anne's Hall"). A list longer than NOTED_EVENTS lines leaves the notes out, so a
month fits a phone's screen; past MAX_EVENT_LINES lines the rest is counted, not listed.
"""
from __future__ import annotations

from datetime import date, datetime
from typing import Any

from edge_agent.store.recurrence import Occurrence
from edge_agent.tools.query_calendar import day_label, event_line

MAX_EVENT_LINES = 20  # lines of a range's events; more are counted ("and 4 more")
NOTED_EVENTS = 4  # up to this many lines carry the events' notes (a price, who brings what)


def event_text(e: dict[str, Any], with_year: bool = False, with_notes: bool = True) -> str:
    """One event payload as a line without its bullet: title — when @ place — notes."""
    try:
        line = event_line(Occurrence.from_payload(e), with_year)[2:]
    except (KeyError, ValueError):  # a payload from elsewhere: its raw values
        line = f"{e.get('title')} — {e.get('start')} to {e.get('end')}"
    return line + (f" — {e['notes']}" if with_notes and e.get("notes") else "")


def _series_key(e: dict[str, Any]) -> tuple | None:
    """Occurrences with one key are one line; None: the event has a line of its own."""
    try:
        occ = Occurrence.from_payload(e)
    except (KeyError, ValueError):
        return None
    if occ.all_day:
        return (occ.title, occ.location, "all day", occ.notes) if occ.end == occ.start else None
    if occ.end.date() != occ.start.date():
        return None
    return (occ.title, occ.location, f"{occ.start:%H:%M}-{occ.end:%H:%M}", occ.notes)


def _series_line(group: list[dict[str, Any]], with_year: bool, with_notes: bool) -> str:
    if len(group) == 1:
        return event_text(group[0], with_year, with_notes)
    title, location, times, notes = _series_key(group[0])  # type: ignore[misc]
    starts = [Occurrence.from_payload(e).start for e in group]
    days = ", ".join(day_label(d if isinstance(d, date) and not isinstance(d, datetime) else d.date(), with_year)
                     for d in starts)
    when = f"{days} (all day)" if times == "all day" else f"{days} {times}"
    return f"{title} — {when}" + (f" @ {location}" if location else "") + (f" — {notes}" if with_notes and notes else "")


def event_lines(events: list[dict[str, Any]]) -> list[str]:
    """The events in time order, one line a series; past MAX_EVENT_LINES the rest counted."""
    with_year = len({str(e.get("start", ""))[:4] for e in events}) > 1
    groups: dict[Any, list[dict[str, Any]]] = {}
    for e in sorted(events, key=lambda e: str(e.get("start", ""))):
        groups.setdefault(_series_key(e) or id(e), []).append(e)
    series = list(groups.values())
    keep = series[:MAX_EVENT_LINES]
    lines = [_series_line(g, with_year, len(keep) <= NOTED_EVENTS) for g in keep]
    left = sum(len(g) for g in series[MAX_EVENT_LINES:])
    if left:
        lines.append(f"(and {left} more)")
    return lines

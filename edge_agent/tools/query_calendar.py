"""queryCalendar(start, end): the user's events in an inclusive date range, title first."""
from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel, ConfigDict, Field, model_validator

from edge_agent.tools.base import Tool, ToolContext, ToolResult
from edge_agent.tools.current_date import WEEKDAYS

MAX_RANGE_DAYS = 366  # a year at most: longer ranges flood the model with events
TEXT_EVENTS = 60  # events listed in the model-facing text (the payload has all); the harness
# fits a long list to L2's budget by relevance to the question
ISO_DATE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


class QueryCalendarArgs(BaseModel):
    """Arguments of queryCalendar."""

    model_config = ConfigDict(extra="forbid")

    start: str = Field(pattern=ISO_DATE, min_length=10, max_length=10,
                       description="First day of the range, YYYY-MM-DD (inclusive).")
    end: str = Field(pattern=ISO_DATE, min_length=10, max_length=10,
                     description="Last day of the range, YYYY-MM-DD (inclusive, not before start).")

    @model_validator(mode="after")
    def _range(self) -> "QueryCalendarArgs":
        try:
            first, last = date.fromisoformat(self.start), date.fromisoformat(self.end)
        except ValueError as err:
            raise ValueError(f"not a real date: {err}") from err
        if last < first:
            raise ValueError(f"end {self.end} is before start {self.start}")
        if (last - first).days >= MAX_RANGE_DAYS:
            raise ValueError(f"range longer than {MAX_RANGE_DAYS} days")
        return self

    def days(self) -> tuple[date, date]:
        return date.fromisoformat(self.start), date.fromisoformat(self.end)


def day_label(value: date, with_year: bool) -> str:
    """'Tue 24 Nov' (with the year when a range crosses one)."""
    # "Tue 24 Nov" takes 5 of Gemma's tokens where "Tue 2026-11-24" takes 12; the year is in the
    # result's first line, and written per event only when the range crosses a year
    text = f"{WEEKDAYS[value.weekday()][:3]} {value.day} {value:%b}"
    return f"{text} {value.year}" if with_year else text


def _when(occ, with_year: bool) -> str:
    if occ.all_day:
        end = f" to {day_label(occ.end, with_year)}" if occ.end != occ.start else ""
        return f"{day_label(occ.start, with_year)}{end} (all day)"
    start: datetime = occ.start
    end_at: datetime = occ.end
    until = f"{end_at:%H:%M}" if end_at.date() == start.date() else f"{day_label(end_at.date(), with_year)} {end_at:%H:%M}"
    return f"{day_label(start.date(), with_year)} {start:%H:%M}-{until}"


def event_line(occ, with_year: bool = False) -> str:
    """One event as the model reads it: title, day and times, place."""
    where = f" @ {occ.location}" if occ.location else ""
    return f"- {occ.title} — {_when(occ, with_year)}{where}"


def crosses_year(first: date, last: date) -> bool:
    return first.year != last.year


class QueryCalendar(Tool[QueryCalendarArgs]):
    """Expands the calendar for the range in the device's zone (the clock's zone)."""

    name = "queryCalendar"
    Args = QueryCalendarArgs

    async def run(self, args: QueryCalendarArgs, ctx: ToolContext) -> ToolResult:
        first, last = args.days()
        zone = ctx.now().tzinfo
        events = await ctx.store.calendar.between(first, last, zone)
        span = args.start if first == last else f"{args.start} to {args.end}"
        if not events:
            return ToolResult(f"No events between {args.start} and {args.end}.", [], found=False)
        years = crosses_year(first, last)
        lines = [f"{len(events)} events, {span}:"] + [event_line(e, years) for e in events[:TEXT_EVENTS]]
        if len(events) > TEXT_EVENTS:
            lines.append(f"... and {len(events) - TEXT_EVENTS} more")
        return ToolResult("\n".join(lines), [e.to_payload() for e in events])

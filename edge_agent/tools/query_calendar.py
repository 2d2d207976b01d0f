"""queryCalendar(start, end): the user's events in an inclusive date range, title first."""
from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel, ConfigDict, Field, model_validator

from edge_agent.tools.base import Tool, ToolContext, ToolResult
from edge_agent.tools.current_date import WEEKDAYS

MAX_RANGE_DAYS = 366  # a year at most: longer ranges flood the model with events
TEXT_EVENTS = 12  # events listed in the model-facing text (the payload has all)
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


def _day(value: date) -> str:
    return f"{WEEKDAYS[value.weekday()][:3]} {value.isoformat()}"


def _when(occ) -> str:
    if occ.all_day:
        return _day(occ.start) + (f" to {_day(occ.end)}" if occ.end != occ.start else "") + " (all day)"
    start: datetime = occ.start
    end: datetime = occ.end
    until = f"{end:%H:%M}" if end.date() == start.date() else f"{_day(end.date())} {end:%H:%M}"
    return f"{_day(start.date())} {start:%H:%M}-{until}"


def event_line(occ) -> str:
    where = f" @ {occ.location}" if occ.location else ""
    return f"- {occ.title} — {_when(occ)}{where}"


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
        lines = [f"{len(events)} events, {span}:"] + [event_line(e) for e in events[:TEXT_EVENTS]]
        if len(events) > TEXT_EVENTS:
            lines.append(f"... and {len(events) - TEXT_EVENTS} more")
        return ToolResult("\n".join(lines), [e.to_payload() for e in events])

"""current_date(): today plus concrete YYYY-MM-DD ranges for the usual relative expressions."""
from __future__ import annotations

import calendar
from datetime import date, timedelta

from pydantic import BaseModel, ConfigDict

from edge_agent.tools.base import Tool, ToolContext, ToolResult

SATURDAY = 5  # date.weekday(): Monday is 0
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

RANGE_LABELS = {
    "today": "today", "tomorrow": "tomorrow", "yesterday": "yesterday", "this_week": "this week",
    "next_week": "next week", "last_week": "last week", "this_weekend": "this weekend",
    "this_month": "this month", "next_month": "next month",
}
"""Range key -> how it reads in the model-facing text, in the order shown."""


class CurrentDateArgs(BaseModel):
    """current_date takes no arguments."""

    model_config = ConfigDict(extra="forbid")


def _month(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def date_ranges(today: date) -> dict[str, tuple[date, date]]:
    """Inclusive (first, last) day of each relative range; weeks run Monday to Sunday."""
    monday = today - timedelta(days=today.weekday())
    week = timedelta(days=7)
    saturday = monday + timedelta(days=SATURDAY)  # on Sat/Sun this is the current weekend
    next_year, next_month = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
    return {
        "today": (today, today),
        "tomorrow": (today + timedelta(days=1),) * 2,
        "yesterday": (today - timedelta(days=1),) * 2,
        "this_week": (monday, monday + timedelta(days=6)),
        "next_week": (monday + week, monday + week + timedelta(days=6)),
        "last_week": (monday - week, monday - timedelta(days=1)),
        "this_weekend": (saturday, saturday + timedelta(days=1)),
        "this_month": _month(today.year, today.month),
        "next_month": _month(next_year, next_month),
    }


class CurrentDate(Tool[CurrentDateArgs]):
    """Reads the injected clock; never the system clock directly."""

    name = "current_date"
    Args = CurrentDateArgs

    async def run(self, args: CurrentDateArgs, ctx: ToolContext) -> ToolResult:
        now = ctx.now()
        today = now.date()
        zone = getattr(now.tzinfo, "key", None) or now.tzname() or "local"
        ranges = date_ranges(today)
        payload = {"today": today.isoformat(), "weekday": WEEKDAYS[today.weekday()], "timezone": zone,
                   "ranges": {k: [a.isoformat(), b.isoformat()] for k, (a, b) in ranges.items()}}
        lines = [f"Today is {payload['weekday']} {today.isoformat()} ({zone})."]
        for key, label in RANGE_LABELS.items():
            first, last = ranges[key]
            span = first.isoformat() if first == last else f"{first.isoformat()} to {last.isoformat()}"
            lines.append(f"{label}: {span}")
        return ToolResult("\n".join(lines), payload)

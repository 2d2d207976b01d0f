"""current_date(): today plus concrete YYYY-MM-DD ranges for the usual relative expressions."""
from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict

from edge_agent.tools.base import Tool, ToolContext, ToolResult
from edge_agent.tools.dates import WEEKDAY_NAMES as WEEKDAYS
from edge_agent.tools.dates import resolve, span_text

RANGE_LABELS = {
    "today": "today", "tomorrow": "tomorrow", "yesterday": "yesterday", "this_week": "this week",
    "next_week": "next week", "last_week": "last week", "this_weekend": "this weekend",
    "this_month": "this month", "next_month": "next month",
}
"""Range key -> how it reads in the model-facing text, in the order shown."""


class CurrentDateArgs(BaseModel):
    """current_date takes no arguments."""

    model_config = ConfigDict(extra="forbid")


def date_ranges(today: date) -> dict[str, tuple[date, date]]:
    """Inclusive (first, last) day of each relative range, through the one date resolver."""
    out = {}
    for key, label in RANGE_LABELS.items():
        span = resolve(label, today)
        if span is None:  # every label is a row of the resolver's table; a miss is our bug
            raise RuntimeError(f"the date resolver does not know {label!r}")
        out[key] = (span.first, span.last)
    return out


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
            lines.append(f"{label}: {span_text(first, last)}")
        return ToolResult("\n".join(lines), payload)


def payload_today(payload: object) -> date | None:
    """Today's date from a current_date payload, or None when it is missing or malformed."""
    try:
        return date.fromisoformat(str(payload.get("today"))) if isinstance(payload, dict) else None
    except ValueError:
        return None

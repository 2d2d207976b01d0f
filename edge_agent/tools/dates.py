"""The one resolver for relative dates: finds every date phrase in a text through the table of phrasings.

The phrasings and their conventions live in edge_agent/tools/date_table.py. Rows are tried in
order and a span of text claimed by one row is not matched again; a date word left outside every
claimed span is reported unresolved, so nothing is ever guessed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from edge_agent.tools.date_table import CUE, TABLE, WEEKDAY_NAMES, Span

__all__ = ["Resolution", "Span", "TABLE", "WEEKDAY_NAMES", "asks_how_long", "days_until", "describe",
           "first_day_after", "resolve", "resolve_all", "span_text", "weekday_name"]

CONTEXT_WORDS = 3  # words shown before an unresolved date word
HOW_LONG = re.compile(r"\bhow\s+(?:long|many\s+(?:more\s+)?(?:days|weeks|sleeps))\b"
                      r"(?=.*\b(?:until|till|til|to\s+go|left\s+(?:before|until|till))\b)"
                      r"|\bhow\s+soon\s+(?:is|are|will|until|till)\b"
                      r"|\bdays?\s+(?:left\s+)?(?:until|till|to\s+go)\b", re.IGNORECASE)
"""A question asking how long until something ("how long till the dentist", "how many days until
mum's birthday", "days to go until the trip"); "how long is the film" asks no countdown."""
WRITTEN_DATES = frozenset({"iso_date", "day_month", "month_day"})
"""The rows of dates written out ("5 Dec", "December 5", "2026-12-05"): what an answer's line holds."""


@dataclass(frozen=True)
class Resolution:
    """One date phrase found in a text."""

    phrase: str
    """The words as written."""
    span: Span | None
    """The days it means; None when it could not be worked out."""
    rule: str
    """The table row that matched ("unresolved" when none did)."""


def resolve_all(text: str, today: date) -> list[Resolution]:
    """Every date phrase in `text`, in reading order; unresolvable ones carry span None."""
    claimed: list[tuple[int, int]] = []
    found: list[tuple[int, Resolution]] = []
    for row in TABLE:
        for m in row.pattern.finditer(text):
            if any(m.start() < end and start < m.end() for start, end in claimed):
                continue
            claimed.append((m.start(), m.end()))
            if not row.is_date:
                continue
            try:
                span = row.rule(m, today)
            except (ValueError, OverflowError):  # a date outside the calendar (year 0, 10000)
                span = None
            found.append((m.start(), Resolution(m.group(0), span, row.name if span else "unresolved")))
    for m in CUE.finditer(text):
        if not any(start <= m.start() < end for start, end in claimed):
            claimed.append((m.start(), m.end()))
            found.append((m.start(), Resolution(_context(text, m), None, "unresolved")))
    return [r for _, r in sorted(found, key=lambda pair: pair[0])]


def resolve(phrase: str, today: date) -> Span | None:
    """The days one phrase means, or None when the whole phrase is not one resolvable date."""
    found = resolve_all(phrase.strip(), today)
    if len(found) == 1 and found[0].span is not None and found[0].phrase.strip() == phrase.strip():
        return found[0].span
    return None


def _context(text: str, m: re.Match) -> str:
    before = re.findall(r"[\w'/-]+", text[:m.start()])[-CONTEXT_WORDS:]
    return " ".join([*before, m.group(0)])


def span_text(first: object, last: object, sep: str = " to ") -> str:
    """A run of days as written for a model: one day once, else first, `sep`, last (dates or ISO strings)."""
    return f"{first}" if first == last else f"{first}{sep}{last}"


def weekday_name(day: date) -> str:
    return WEEKDAY_NAMES[day.weekday()]


def describe(text: str, today: date) -> str:
    """One sentence per date phrase in `text` (today itself left out), for a deterministic answer."""
    sentences = []
    for found in resolve_all(text, today):
        if found.rule == "today":
            continue
        name = found.phrase[0].upper() + found.phrase[1:]
        span = found.span
        if span is None:
            sentences.append(f'I could not work out which date "{found.phrase}" means.')
        elif span.first == span.last:
            sentences.append(f"{name} is {weekday_name(span.first)} {span.first.isoformat()}.")
        else:
            sentences.append(f"{name} runs from {span.first.isoformat()} to {span.last.isoformat()}.")
    return " ".join(dict.fromkeys(sentences))


def asks_how_long(question: str) -> bool:
    """Whether `question` asks how long until something (HOW_LONG)."""
    return bool(HOW_LONG.search(question))


def first_day_after(text: str, today: date) -> date | None:
    """The first date written out in `text` (WRITTEN_DATES) that is after `today`, or None."""
    return next((r.span.first for r in resolve_all(text, today)
                 if r.rule in WRITTEN_DATES and r.span is not None and r.span.first > today), None)


def days_until(day: date, today: date) -> str:
    """How long from `today` until `day`, as an answer says it: "tomorrow", "in 17 days"."""
    n = (day - today).days
    return "tomorrow" if n == 1 else f"in {n} days"

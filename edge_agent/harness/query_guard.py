"""A search query keeps no date the asker never gave.

L2 rewords the question into an instruction and the small model adds days of its own ("the
plumber's invoice for the month of July" for "the total on the plumbing invoice"); L3 copies them
into the query, and a search for "plumber invoice July" found only near misses. A date word in a
query that the question does not hold (a month, a weekday, a year, an ISO date) is dropped before
the search runs, unless nothing else would be left.
"""
from __future__ import annotations

import re

from edge_agent.tools.date_table import MONTH_NAMES, WEEKDAY_NAMES

_NAMES = [n.lower() for n in MONTH_NAMES + WEEKDAY_NAMES]
_SHORT = [n[:3] for n in _NAMES if n != "may"] + ["sept", "tues", "thurs", "weds"]
DATE_WORD_RE = re.compile(r"\b(?:\d{4}-\d{2}-\d{2}|(?:19|20)\d\d|" + "|".join(sorted(_NAMES + _SHORT, key=len, reverse=True))
                          + r")\b", re.IGNORECASE)
"""Words of a query that name a date."""


def without_invented_dates(query: str, question: str) -> str:
    """`query` without the date words the question does not hold (see the module docstring)."""
    asked = {w.lower() for w in DATE_WORD_RE.findall(question)}
    kept = DATE_WORD_RE.sub(lambda m: m.group(0) if m.group(0).lower() in asked else "", query)
    kept = " ".join(kept.split())
    return kept if kept else query

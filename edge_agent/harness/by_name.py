"""A calendar question that names no day is a search by name.

"Where is the book launch?" names no day, so the calendar is read over the open range
(prompts.OPEN_RANGE_DAYS) and only the events that mention the asker's words are kept: the ones
that mention the most of them. Without this the open range returned every event of four months
and the small model answered "When did I last go skiing?" with a pottery class. When no event
mentions any of the words, the calendar found nothing, and the asker hears so. A question whose
words are all about the calendar itself ("what's coming up?") keeps every event.
"""
from __future__ import annotations

from typing import Any

from edge_agent.harness.citation import event_text
from edge_agent.store.text import QueryTerm, query_plan, text_matches
from edge_agent.tools.base import ToolResult

CALENDAR_WORDS = frozenset("""
calendar calendars diary diaries schedule scheduled agenda event events appointment appointments plan plans planned
happen happens happened happening coming upcoming next last anything something everything busy free booked any
day days date dates time times week weeks weekend month months year left due usual usually ever
go goes going went gone come comes came do doing did done have having had get got make made attend attending
""".split())
"""Words that ask about the calendar rather than name an event."""


def topic_terms(question: str) -> list[QueryTerm]:
    """The question's search terms that could name an event (calendar words dropped)."""
    return [t for t in query_plan(question) if not set(t.word.split()) <= CALENDAR_WORDS]


def _words(event: dict[str, Any]) -> str:
    return " ".join(str(event.get(k) or "") for k in ("title", "location", "notes"))


def about(result: ToolResult, question: str, span: str) -> ToolResult:
    """`result` (a calendar read with no day named) narrowed to the events that mention the
    question's words the most; not found when none does. `span` is the range read, for the text."""
    terms = topic_terms(question)
    events = result.payload if isinstance(result.payload, list) else []
    if not terms or not result.found or not events:
        return result
    scored = [(len(text_matches(terms, _words(e))), e) for e in events]
    best = max(score for score, _ in scored)
    wanted = ", ".join(t.word for t in terms)
    if best == 0:
        return ToolResult(f"No events between {span} mention {wanted}.", [], channel=result.channel,
                          pill=result.pill, found=False)
    kept = [e for score, e in scored if score == best]
    years = {str(e.get("start", ""))[:4] for e in kept}
    lines = [f"{len(kept)} events mentioning {wanted}, {span}:"] + [event_text(e, len(years) > 1) for e in kept]
    return ToolResult("\n".join(lines), kept, channel=result.channel, pill=result.pill)

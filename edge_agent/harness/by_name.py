"""A calendar question that names no day is a search by name.

"Where is the book launch?" names no day, so the calendar is read over the open range
(prompts.OPEN_RANGE_DAYS) and only the events that mention the asker's words are kept: the ones
that mention the most of them. Without this the open range returned every event of four months
and the small model answered "When did I last go skiing?" with a pottery class. When no event
mentions any of the words, the events that are what the question calls them ("appointment") are
kept, and failing those the calendar found nothing, and the asker hears so. A question whose words
are all about the calendar itself ("what's coming up?", "what appointments have I got?") keeps
every event.
"""
from __future__ import annotations

from datetime import date
from typing import Any

from edge_agent.harness.channels import EVENTS_CHANNEL, item_text
from edge_agent.harness.events_text import event_text
from edge_agent.store.text import STOPWORDS, QueryTerm, literal_terms, query_plan, stems, text_matches, tokens
from edge_agent.tools import dates
from edge_agent.tools.base import ToolResult

CALENDAR_WORDS = frozenset("""
calendar calendars diary diaries schedule scheduled agenda plan plans planned
happen happens happened happening coming upcoming next last anything something everything busy free booked any
day days date dates time times week weeks weekend month months year left due usual usually ever
go goes going went gone come comes came do doing did done have having had get got make made attend attending
again remind exactly actually know still yet soon check checking main question
""".split())
"""Words that ask about the calendar, or fill a question, rather than name an event ("can you
check the diary", "the main things")."""
EVENT_NOUNS = frozenset("appointment appointments event events booking bookings".split())
"""Words for any event: they narrow only when the question's other words find nothing ("is the
hospital appointment soon?" keeps the appointments when none mentions a hospital)."""
MIN_PREFIX = 4
"""A stem this long also counts at the start of a longer word ("hair" in "Haircut"); a shorter one
starts too many words it is not ("ski" in "skipping", "bus" in "business", "tax" in "taxi")."""


def topic_terms(question: str) -> list[QueryTerm]:
    """The question's search terms that could name an event (calendar words and event nouns dropped)."""
    return _split(query_plan(question))[0]


def _split(terms: list[QueryTerm]) -> tuple[list[QueryTerm], list[QueryTerm]]:
    """(terms that could name an event, words for any event (EVENT_NOUNS)); calendar words in neither."""
    nouns = [t for t in terms if set(t.word.split()) <= EVENT_NOUNS]
    return [t for t in terms if not set(t.word.split()) <= CALENDAR_WORDS | EVENT_NOUNS], nouns


def mentions(event: dict[str, Any], terms: list[QueryTerm]) -> int:
    """How many of the terms the event's title, place or notes hold (mentioned)."""
    return len(mentioned(item_text(EVENTS_CHANNEL, event), terms))


def mentioned(text: str, terms: list[QueryTerm]) -> set[str]:
    """The terms `text` holds (by stems, or as the start of a longer word: "hair appointment" finds
    the "Haircut")."""
    have = set(text_matches(terms, text))
    words = tokens(text)
    for t in terms:
        if t.word not in have and any(w.startswith(s) for s in _word_stems(t) for w in words):
            have.add(t.word)
    return have


def _word_stems(term: QueryTerm) -> list[str]:
    """The stems of a term's one-word phrases, at least MIN_PREFIX long."""
    return [st[0] for st in map(stems, term.phrases) if len(st) == 1 and len(st[0]) >= MIN_PREFIX]


def without_dates(question: str, today: date) -> tuple[str, list[dates.Resolution]]:
    """The question with its date phrases cut out, and the phrases that resolved to days."""
    found = dates.resolve_all(question, today)
    for r in found:
        question = question.replace(r.phrase, " ")
    return question, [r for r in found if r.span is not None]


def beyond_dates(question: str, today: date) -> list[QueryTerm]:
    """The words of a question that could name an event once its date phrases are cut out: "film
    club next month whats the date" names the film club; "date 3 weeks from today?" nothing."""
    return [t for t in topic_terms(without_dates(question, today)[0]) if t.word not in STOPWORDS]


def most_mentioned(events: list[dict[str, Any]], question: str) -> list[dict[str, Any]]:
    """Of a range's events, those mentioning the most of the question's topic terms ([] when the
    question names no event): "how much is the chimney sweep in March?" wants the chimney sweep,
    not every event of March. An event is named when its title or place holds one of
    the words itself, or when it mentions more than half of them: "someone wants to meet up the
    next 10 days, am i busy" names no "Drinks with Petra" whose notes say "Meeting Petra", nor does
    "jog my memory, what was booked" name the running club, so every event of the days answers."""
    terms = [t for t in topic_terms(question) if t.word not in STOPWORDS]  # "what did I have on" names nothing
    if not terms or not events:
        return []
    scored = [(mentions(e, terms), e) for e in events]
    best = max(score for score, _ in scored)
    kept = [e for score, e in scored if score == best] if best else []
    return kept if 2 * best > len(terms) or any(titled(e, terms) for e in kept) else []


def titled(event: dict[str, Any], terms: list[QueryTerm]) -> bool:
    """Whether the event's title or place holds one of the terms by its own word (a synonym or the
    notes do not name an event: "jog" is no "Running club")."""
    return bool(mentioned(f"{event.get('title') or ''} {event.get('location') or ''}", literal_terms(terms)))


def names_all(events: list[dict[str, Any]], question: str) -> bool:
    """Whether one of the events mentions every word of the question that could name one: "when is
    the running club AGM" is not answered by "Running club ride" when the AGM is in a note."""
    terms = [t for t in topic_terms(question) if t.word not in STOPWORDS]
    return any(mentions(e, terms) == len(terms) for e in events)


def about(result: ToolResult, question: str, span: str) -> ToolResult:
    """`result` (a calendar read with no day named) narrowed to the events that mention the
    question's words the most; not found when none does. `span` is the range read, for the text."""
    terms, nouns = _split(query_plan(question))
    events = result.payload if isinstance(result.payload, list) else []
    if not terms or not result.found or not events:
        return result
    scored = [(mentions(e, terms), e) for e in events]
    best = max(score for score, _ in scored)
    wanted = ", ".join(t.word for t in terms)
    if best == 0 and nouns:  # no name found: any appointment will do
        scored = [(mentions(e, nouns), e) for e in events]
        best = max(score for score, _ in scored)
    if best == 0:
        return ToolResult(f"No events between {span} mention {wanted}.", [], channel=result.channel,
                          pill=result.pill, found=False)
    kept = [e for score, e in scored if score == best]
    years = {str(e.get("start", ""))[:4] for e in kept}
    lines = [f"{len(kept)} events mentioning {wanted}, {span}:"] + [f"- {event_text(e, len(years) > 1)}" for e in kept]
    return ToolResult("\n".join(lines), kept, channel=result.channel, pill=result.pill)

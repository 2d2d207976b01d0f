"""Citations: the exact entries an answer comes from, quoted after it.

A small model's answer sentence is control flow as much as any of its outputs: it names the right
note and then copies the wrong clause of it ("Birthday 3 December 1956." for "where does my mum
live?"), or one event of a week's four. The side channels hold the exact bytes, so the answer
quotes them: the entry the answer was drawn from, the entry that best matches the question (when
that is another one), and for the calendar the events of the period asked about. The asker reads
the model's sentence and can check it against the source on the spot; a larger model's sentence
is usually complete, and the quote costs it nothing.

Only strong matches are quoted (a near miss is not a source); after an answer that says nothing
was found nothing is quoted, except, when near misses were all there was, the closest of them
named as such; and a sentence of the data that speaks to the assistant is never repeated
(injection.py).
"""
from __future__ import annotations

from datetime import date, datetime
from typing import Any

from edge_agent.harness.channels import SideChannels
from edge_agent.harness.fitting import content_words
from edge_agent.harness.injection import without_planted
from edge_agent.store.recurrence import Occurrence
from edge_agent.tools.query_calendar import day_label, event_line

QUOTED_ENTRIES = 2  # notes or memory entries quoted: the answer's own source and the question's best match
QUOTED_EVENTS = 20  # lines of the period's events (a repeating event is one line); more: by relevance, counted
NOTED_EVENTS = 4  # up to this many event lines carry the events' notes; a longer list is titles, times, places
EXCERPT_CHARS = 600  # a file's passage, as find_file returns it


def _strong(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [i for i in items if i.get("strength") != "some"]


def _picked(items: list[dict[str, Any]], text_of, lead: str, question: str) -> list[dict[str, Any]]:
    """The entry sharing most words with the answer, then the one sharing most with the question.

    Ties keep the tool's order (its ranking), so with no overlap the best-ranked entry is quoted."""
    if not items:
        return []
    said, asked = content_words(lead), content_words(question)

    def best(words: set[str]) -> dict[str, Any]:
        return max(items, key=lambda i: len(words & content_words(text_of(i))))  # max keeps the first of ties

    chosen = [best(said | asked), best(asked)] if said else [best(asked)]
    unique: list[dict[str, Any]] = []
    for item in chosen:
        if all(item is not u for u in unique):
            unique.append(item)
    return unique[:QUOTED_ENTRIES]


def _note_text(n: dict[str, Any]) -> str:
    return f"{n.get('title')}: {n.get('body')}"


def _memory_text(m: dict[str, Any]) -> str:
    when = str(m.get("when") or "")[:16].replace("T", " ")  # to the minute, without the zone
    return f"{when} {m.get('who')} ({m.get('kind')}): {m.get('text')}"


def event_text(e: dict[str, Any], with_year: bool, with_notes: bool = True) -> str:
    """One event as the calendar tool writes it, with its notes (a price, who brings what)."""
    try:
        line = event_line(Occurrence.from_payload(e), with_year)
    except (KeyError, ValueError):  # a payload from elsewhere: its raw values
        line = f"- {e.get('title')}: {e.get('start')} to {e.get('end')}"
    return line + (f" — {e['notes']}" if with_notes and e.get("notes") else "")


def _series_key(e: dict[str, Any]) -> tuple | None:
    """Occurrences with one key are one line ("Sat 3 Oct, Sat 10 Oct 08:00-09:00"); None: its own line."""
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
    first = [Occurrence.from_payload(e).start for e in group]
    days = ", ".join(day_label(d if isinstance(d, date) and not isinstance(d, datetime) else d.date(), with_year)
                     for d in first)
    when = f"{days} (all day)" if times == "all day" else f"{days} {times}"
    return f"- {title} — {when}" + (f" @ {location}" if location else "") + (f" — {notes}" if with_notes and notes else "")


def _events(events: list[dict[str, Any]], lead: str, question: str) -> list[str]:
    """The period's events in time order, a repeating one on one line; past QUOTED_EVENTS lines,
    the ones most related to the question and the answer (ties: the earliest), with how many
    events were left out. A list longer than NOTED_EVENTS lines leaves the notes out: "what's left
    this month?" wants every event on a phone's screen, not three of them in full."""
    with_year = len({str(e.get("start", ""))[:4] for e in events}) > 1
    groups: dict[Any, list[dict[str, Any]]] = {}
    for e in sorted(events, key=lambda e: str(e.get("start", ""))):
        groups.setdefault(_series_key(e) or id(e), []).append(e)
    series = list(groups.values())  # in order of first occurrence
    keep = series
    if len(series) > QUOTED_EVENTS:
        words = content_words(f"{question} {lead}")
        ranked = sorted(series, key=lambda g: -len(words & content_words(str(g[0].get("title", "")))))
        chosen = {id(g) for g in ranked[:QUOTED_EVENTS]}
        keep = [g for g in series if id(g) in chosen]
    lines = [_series_line(g, with_year, len(keep) <= NOTED_EVENTS) for g in keep]
    left = sum(len(g) for g in series) - sum(len(g) for g in keep)
    if left:
        lines.append(f"(and {left} more)")
    return lines


def citation(channels: SideChannels, lead: str, question: str) -> str:
    """The exact entries behind an answer, one block a source ('' when there is nothing strong)."""
    blocks: list[str] = []
    if channels.files:
        best = max(channels.files, key=lambda h: float(h.get("score") or 0.0))
        excerpt = " ".join(str(best.get("excerpt") or "").split())[:EXCERPT_CHARS]
        if excerpt:
            blocks.append(f"From {best.get('name')} on {best.get('device')}: {excerpt}")
    notes = _picked(_strong(channels.notes), _note_text, lead, question)
    if notes:
        blocks.append("From your notebook:\n" + "\n".join(f"- {_note_text(n)}" for n in notes))
    if channels.events:
        blocks.append("From your calendar:\n" + "\n".join(_events(channels.events, lead, question)))
    memory = _picked(_strong(channels.memory), _memory_text, lead, question)
    if memory:
        blocks.append("From your memory log:\n" + "\n".join(f"- {_memory_text(m)}" for m in memory))
    return without_planted("\n".join(blocks))


def closest(channels: SideChannels, question: str) -> str:
    """The near miss that best matches the question, for an answer that found nothing better."""
    items = [(n, _note_text(n)) for n in channels.notes] + [(m, _memory_text(m)) for m in channels.memory]
    if not items:
        return ""
    asked = content_words(question)
    _, text = max(items, key=lambda pair: len(asked & content_words(pair[1])))  # ties: the first found
    return without_planted(f"The closest entry: {text}")


def with_citation(text: str, channels: SideChannels, question: str, *, not_found: bool,
                  near_misses: bool = False) -> str:
    """`text` followed by its sources; after "not found", only the closest near miss, if that is
    all there was (near misses are no source, yet the asker may recognise what they meant)."""
    quoted = (closest(channels, question) if near_misses else "") if not_found else citation(channels, text, question)
    return f"{text}\n{quoted}" if quoted else text

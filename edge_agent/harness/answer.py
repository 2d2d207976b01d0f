"""Answer selection and synthesis — identical after a clean finish, a halt or a limit.

Order: a located file, else notes, else calendar events or memory, else the date, else (only when
the plan needed no tools) L2's own text. The leading tier's exact bytes, followed by any lower
tier's, are the facts of one synthesis generation, fitted to the window (lowest tier cut first).
Where no generation is needed or none is left in the budget (a date, a timeout) the answer is
built deterministically from the same bytes. Under a
skill, an L2 answer with nothing gathered is not trusted: the user hears that nothing was found.
A synthesized answer that states a number or email the facts do not hold (or echoes the prompt)
is replaced by the deterministic answer from the exact bytes.
"""
from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from edge_agent.harness import prompts
from edge_agent.harness.channels import SideChannels
from edge_agent.harness.turn import TurnContext
from edge_agent.tools import dates

log = logging.getLogger(__name__)

NOT_FOUND = "I could not find anything about that in your notes, files, calendar or memory."
WINDOW_MARGIN_TOKENS = 16  # slack for template tokens around the facts
DETERMINISTIC_ITEMS = 3  # entries listed when answering without a generation
NUMBER_RE = re.compile(r"\d+")
EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PROMPT_MARKERS = ("Facts:", "Question:", "### ")  # the synthesis prompt echoed back


@dataclass(frozen=True)
class Selection:
    """The tier chosen and its exact facts."""

    sources: list[str]
    """Side channels used (files | notes | events | memory | date), empty if none."""
    facts: str
    """The exact bytes the answer is built from."""
    fallback: str
    """A deterministic answer from the same bytes."""
    attachment: dict[str, Any] | None = None
    """The located file, when a file is the source."""
    needs_generation: bool = True
    """False when the fallback already is the answer (date)."""


@dataclass(frozen=True)
class Answer:
    """The user-facing answer."""

    text: str
    """What the asker reads."""
    sources: list[str] = field(default_factory=list)
    """Side channels it came from."""
    attachment: dict[str, Any] | None = None
    """The located file, if any."""


def _tiers(channels: SideChannels) -> list[Selection]:
    """Every side channel holding something, as a tier, in priority order."""
    tiers: list[Selection] = []
    if channels.files:
        best = max(channels.files, key=lambda h: float(h.get("score") or 0.0))
        facts = f"File {best.get('name')} on {best.get('device')} ({best.get('path')}):\n{best.get('excerpt') or ''}"
        attachment = {k: best.get(k) for k in ("device", "path", "name")}
        excerpt = (best.get("excerpt") or "").strip()
        fallback = f"Found {best.get('name')} on {best.get('device')}." + (f" It says: {excerpt}" if excerpt else "")
        tiers.append(Selection(["files"], facts, fallback, attachment))
    if channels.notes:
        lines = [f"- {n.get('title')}: {n.get('body')} (updated {n.get('updated')}){_weak_mark(n)}" for n in channels.notes]
        fallback = "From your notebook: " + " ".join(f"{n.get('title')}: {n.get('body')}"
                                                     for n in channels.notes[:DETERMINISTIC_ITEMS])
        tiers.append(Selection(["notes"], "\n".join(lines), fallback))
    if channels.events or channels.memory:
        lines, sources = [], []
        if channels.events:
            sources.append("events")
            lines += [_event_line(e) for e in channels.events]
        if channels.memory:
            sources.append("memory")
            lines += [f"- {m.get('when')} {m.get('who')} ({m.get('kind')}): {m.get('text')}{_weak_mark(m)}"
                      for m in channels.memory]
        fallback = "Found: " + " ".join(line[2:] for line in lines[:DETERMINISTIC_ITEMS])
        tiers.append(Selection(sources, "\n".join(lines), fallback))
    return tiers


def _weak_mark(item: dict[str, Any]) -> str:
    """Synthesis sees a near miss for what it is: a hit that matched only some of the query."""
    return f" (weak match: only {', '.join(item.get('matched') or [])})" if item.get("strength") == "some" else ""


def select(channels: SideChannels, question: str) -> Selection | None:
    """The highest tier leads; lower tiers that hold something follow as supporting facts.

    A two-part question ("the policy number, and when is the MOT?") can need a file and a note;
    the priority order decides what comes first, so trimming to the window cuts the lowest tier.
    The date alone is answered deterministically; beside other facts it is one more fact line.
    """
    tiers = _tiers(channels)
    if not tiers:
        if channels.date:
            text = date_answer(channels.date, question)
            return Selection(["date"], text, text, needs_generation=False)
        return None
    facts = [t.facts for t in tiers]
    sources = [src for t in tiers for src in t.sources]
    if channels.date:
        facts.append(date_answer(channels.date, question))
        sources.append("date")
    return Selection(sources, "\n\n".join(facts), " ".join(t.fallback for t in tiers), tiers[0].attachment)


def _event_line(e: dict[str, Any]) -> str:
    when = f"{e.get('start')}" + (f" to {e.get('end')}" if e.get("end") else "")
    line = f"- {e.get('title')}: {when}" + (" (all day)" if e.get("all_day") else "")
    if e.get("location"):
        line += f" at {e['location']}"
    if e.get("notes"):
        line += f" — {e['notes']}"
    return line


def date_answer(payload: dict[str, Any], question: str) -> str:
    """Today's date, plus every date phrase the question names, resolved by the one date resolver.

    A phrase the resolver cannot work out is said so, never guessed (see edge_agent/tools/dates.py).
    """
    text = f"Today is {payload.get('weekday')}, {payload.get('today')}."
    try:
        today = date.fromisoformat(str(payload.get("today")))
    except ValueError:
        return text
    extra = dates.describe(question, today)
    return f"{text} {extra}" if extra else text


async def synthesize(turn: TurnContext, *, l2_text: str | None = None, no_tools: bool = False) -> Answer:
    """Select the tier and produce the answer; never invents when nothing was found."""
    chosen = select(turn.channels, turn.question)
    if chosen is None:
        if no_tools and l2_text:
            return Answer(l2_text)
        return Answer(NOT_FOUND)
    if not chosen.needs_generation or not turn.can_generate(turn.limits.answer_tokens):
        return Answer(chosen.fallback, chosen.sources, chosen.attachment)
    facts = fit_facts(turn, chosen.facts)
    t0 = time.perf_counter()
    text, usage = await turn.text("synth", prompts.synth_messages(turn.question, facts),
                                  max_tokens=turn.limits.answer_tokens, input=facts)
    turn.tracer.log_step(0, "synth", tool=None, result=",".join(chosen.sources), ms=(time.perf_counter() - t0) * 1000,
                         tokens_in=usage.prompt_tokens, tokens_out=usage.generated_tokens)
    text = text.strip()
    if not grounded(text, facts):
        log.info("request %s: synthesized answer not grounded in the facts; answering from the exact text",
                 turn.request_id)
        text = chosen.fallback
    return Answer(text, chosen.sources, chosen.attachment)


def grounded(answer: str, facts: str) -> bool:
    """Whether every number and email in `answer` appears in `facts`, and no prompt text is echoed.

    A small model's paraphrase is where digits drift and addresses get invented; an answer that
    states a figure the facts do not hold is replaced by the exact text rather than passed on.
    """
    if not answer or any(marker in answer for marker in PROMPT_MARKERS):
        return False
    source = facts.lower()
    source_numbers = set(NUMBER_RE.findall(source))
    if any(e not in source for e in EMAIL_RE.findall(answer.lower())):
        return False
    return all(n in source_numbers for n in NUMBER_RE.findall(answer.lower()))


def fit_facts(turn: TurnContext, facts: str) -> str:
    """The facts trimmed so the synthesis prompt plus its answer fits the window."""
    model = turn.model
    empty = model.render_chat(prompts.synth_messages(turn.question, ""), add_generation_prompt=True)
    room = model.n_ctx - model.count_tokens(empty) - turn.limits.answer_tokens - WINDOW_MARGIN_TOKENS
    return model.fit_to_tokens(facts, max(room, 0))


async def answer_without_tools(turn: TurnContext) -> str:
    """The plan needed no data: one generation answers directly."""
    text, _ = await turn.text("synth", prompts.no_tools_messages(turn.question),
                              max_tokens=turn.limits.answer_tokens, input=turn.question)
    return text.strip()

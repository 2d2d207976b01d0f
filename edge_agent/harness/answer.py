"""Answer selection and synthesis — identical after a clean finish, a halt or a limit.

Order: a located file, else notes, else calendar events or memory, else the date, else (only when
the plan needed no tools) L2's own text. The leading tier's exact bytes, followed by any lower
tier's, are the facts an answer must be grounded in.
- L2's final answer is the answer when it is grounded: every number and email it states is in
  the facts, and it states at least one of their values. No second session re-reads what L2
  already read.
- Near misses (weak matches only) are no answer: the user hears that nothing matched well, and
  which entry came closest, without a generation. So are facts without the kind of value asked
  for (a sum of money, a number: value_kinds.py).
- Otherwise (a halt, a step limit, an ungrounded answer) one synthesis generation with a tight
  token cap answers from the facts, fitted to the window by relevance to the question.
- Where no generation is needed or none is left in the budget (a date, a timeout) the answer is
  built deterministically from the same bytes.
Under a skill, an L2 answer with nothing gathered is not trusted: the user hears that nothing was
found. A synthesized answer that is not grounded (or echoes the prompt, or neither states a value
of the facts nor says nothing was found) is replaced by the deterministic answer from the exact bytes.
A model's answer is followed by the exact entries it comes from (citation.py).
"""
from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any

from edge_agent.harness import prompts
from edge_agent.harness.channels import SideChannels
from edge_agent.harness.citation import event_text, with_citation
from edge_agent.harness.fitting import FUNCTION_WORDS, WORD_RE, fit_relevant
from edge_agent.harness.injection import is_planted, without_planted
from edge_agent.harness.turn import TurnContext
from edge_agent.harness.value_kinds import missing_kind
from edge_agent.tools import dates
from edge_agent.tools.current_date import payload_today

log = logging.getLogger(__name__)

NOT_FOUND = "I could not find anything about that in your notes, files, calendar or memory."
NEAR_MISSES = "I could not find anything that matches that well."
NO_VALUE = "I could not find {kind} for that in what I found."
WINDOW_MARGIN_TOKENS = 16  # slack for template tokens around the facts
DETERMINISTIC_ITEMS = 3  # entries listed when answering without a generation
NUMBER_RE = re.compile(r"\d+")
EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PROMPT_MARKERS = ("Facts:", "Question:", "### ")  # the synthesis prompt echoed back
ECHO_CHARS = 30  # an answer holding this much of the start of a sentence of the instructions echoed them
INSTRUCTION_OPENINGS = tuple(s.strip()[:ECHO_CHARS].lower() for s in re.split(r"(?<=\.)\s+", prompts.SYNTH_INSTRUCTIONS)
                             if len(s.strip()) >= ECHO_CHARS)
# An answer that says nothing was found. Phrasings a small model and the harness's own not-found
# text use; "does not invent" is judged by this plus the absence of an attachment.
NOT_FOUND_RE = re.compile(
    r"\b(?:could\s*n[o']?t|can\s*n[o']?t|cannot|did\s*n[o']?t|was\s*n[o']?t\s+able\s+to|unable\s+to|"
    r"not\s+able\s+to)\s+(?:find|locate|see)\b"
    r"|\bno\s+(?:record|mention|information|info|entry|entries|event|events|note|notes|file|files|result|results|"
    r"match|matches|details?)\b"
    r"|\bnothing\s+(?:about|on|found|matching|in|was\s+found)\b"
    r"|\bnot\s+(?:found|mentioned|recorded)\b"
    r"|\bdo(?:es)?\s*n[o']?t\s+(?:know|have|say|mention)\b"
    r"|\b(?:is|are)\s*n[o']?t\s+(?:in|mentioned|recorded)\b",
    re.IGNORECASE)


def says_not_found(answer: str) -> bool:
    """Whether an answer says nothing was found (the harness's own wording and a model's)."""
    return NOT_FOUND_RE.search(answer or "") is not None


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
    notes, memory = _strongest(channels.notes), _strongest(channels.memory)
    if notes:
        lines = [f"- {n.get('title')}: {n.get('body')} (updated {n.get('updated')}){_weak_mark(n)}" for n in notes]
        fallback = "From your notebook: " + " ".join(f"{n.get('title')}: {n.get('body')}"
                                                     for n in notes[:DETERMINISTIC_ITEMS])
        tiers.append(Selection(["notes"], "\n".join(lines), fallback))
    if channels.events or memory:
        lines, sources = [], []
        if channels.events:
            sources.append("events")
            years = {str(e.get("start", ""))[:4] for e in channels.events}
            lines += [event_text(e, len(years) > 1) for e in channels.events]
        if memory:
            sources.append("memory")
            lines += [f"- {m.get('when')} {m.get('who')} ({m.get('kind')}): {m.get('text')}{_weak_mark(m)}"
                      for m in memory]
        fallback = "Found: " + " ".join(line[2:] for line in lines[:DETERMINISTIC_ITEMS])
        tiers.append(Selection(sources, "\n".join(lines), fallback))
    return tiers


def _strongest(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items that matched most or all of their query; the weak ones only when nothing else came."""
    strong = [i for i in items if i.get("strength") != "some"]
    return strong or items


def _weak_mark(item: dict[str, Any]) -> str:
    """Synthesis sees a near miss for what it is: a hit that matched only some of the query."""
    return f" (weak match: only {', '.join(item.get('matched') or [])})" if item.get("strength") == "some" else ""


def select(channels: SideChannels, question: str) -> Selection | None:
    """The highest tier leads; lower tiers that hold something follow as supporting facts.

    A two-part question ("the policy number, and when is the MOT?") can need a file and a note;
    the priority order decides what comes first, so trimming to the window cuts the lowest tier.
    The date alone is answered deterministically when it was all that was asked for; beside other
    facts it is one more fact line. After a search of the user's data that found nothing, today's
    date is no answer ("When did I last go skiing?" was answered "Today is Wednesday").
    """
    tiers = _tiers(channels)
    if not tiers:
        if channels.date and not channels.searched:
            text = date_answer(channels.date, question)
            return Selection(["date"], text, text, needs_generation=False)
        return None
    facts = [t.facts for t in tiers]
    sources = [src for t in tiers for src in t.sources]
    if channels.date:
        facts.append(date_answer(channels.date, question))
        sources.append("date")
    if only_weak(channels):  # near misses are no answer: said so, with the one that came closest
        answer = with_citation(NEAR_MISSES, channels, question, not_found=True, near_misses=True)
        return Selection(sources, "\n\n".join(facts), answer, needs_generation=False)
    kind = missing_kind(question, "\n\n".join(facts))
    if kind:  # asked for a sum or a number the facts do not hold (value_kinds.py)
        answer = with_citation(NO_VALUE.format(kind=kind), channels, question, not_found=True, near_misses=True)
        return Selection(sources, "\n\n".join(facts), answer, needs_generation=False)
    fallback = without_planted(" ".join(t.fallback for t in tiers))
    return Selection(sources, "\n\n".join(facts), fallback, tiers[0].attachment)


def date_answer(payload: dict[str, Any], question: str) -> str:
    """Today's date, plus every date phrase the question names, resolved by the one date resolver.

    A phrase the resolver cannot work out is said so, never guessed (see edge_agent/tools/dates.py).
    """
    text = f"Today is {payload.get('weekday')}, {payload.get('today')}."
    today = payload_today(payload)
    if today is None:
        return text
    extra = dates.describe(question, today)
    return f"{text} {extra}" if extra else text


async def synthesize(turn: TurnContext, *, l2_text: str | None = None, no_tools: bool = False) -> Answer:
    """Select the tier and produce the answer; never invents when nothing was found.
    `l2_text`: L2's final answer after a clean finish (used as is when grounded)."""
    chosen = select(turn.channels, turn.question)
    if chosen is None:
        if no_tools and l2_text:
            return Answer(l2_text)
        return Answer(NOT_FOUND)
    if not chosen.needs_generation:
        return Answer(chosen.fallback, chosen.sources, chosen.attachment)
    if l2_text and usable(l2_text, chosen.facts):
        return _cited(turn, l2_text.strip(), chosen)
    if not turn.can_generate(turn.limits.answer_tokens):
        return Answer(chosen.fallback, chosen.sources, chosen.attachment)
    facts = fit_facts(turn, chosen.facts)
    t0 = time.perf_counter()
    text, usage = await turn.text("synth", prompts.synth_messages(turn.question, facts),
                                  max_tokens=turn.limits.answer_tokens, input=facts,
                                  head=prompts.synth_static())
    turn.tracer.log_step(0, "synth", tool=None, result=",".join(chosen.sources), ms=(time.perf_counter() - t0) * 1000,
                         tokens_in=usage.prompt_tokens, tokens_out=usage.generated_tokens)
    text = text.strip()
    if not usable(text, facts, or_no_value=says_not_found(text)):
        log.info("request %s: synthesized answer not grounded in the facts; answering from the exact text",
                 turn.request_id)
        return Answer(chosen.fallback, chosen.sources, chosen.attachment)
    return _cited(turn, text, chosen)


def _cited(turn: TurnContext, text: str, chosen: Selection) -> Answer:
    """A model's answer with the exact entries it comes from (citation.py); the deterministic
    fallback needs none, it already is the exact text."""
    quoted = with_citation(text, turn.channels, turn.question, not_found=says_not_found(text))
    return Answer(quoted, chosen.sources, chosen.attachment)


def grounded(answer: str, facts: str) -> bool:
    """Whether every number and email in `answer` appears in `facts`, and no prompt text or
    planted instruction is echoed.

    A small model's paraphrase is where digits drift and addresses get invented; an answer that
    states a figure the facts do not hold is replaced by the exact text rather than passed on.
    """
    if not answer or any(marker in answer for marker in PROMPT_MARKERS) or is_planted(answer):
        return False  # an instruction planted in the data, repeated, is no answer (injection.py)
    if any(opening in answer.lower() for opening in INSTRUCTION_OPENINGS):
        return False  # seen: the whole instruction sentence returned as the answer
    source = facts.lower()
    source_numbers = set(NUMBER_RE.findall(source))
    if any(e not in source for e in EMAIL_RE.findall(answer.lower())):
        return False
    return all(n in source_numbers for n in NUMBER_RE.findall(answer.lower()))


def states_a_value(answer: str, facts: str) -> bool:
    """Whether `answer` repeats something specific from `facts`: a number, an email, a name (a
    capitalised word past the first), two content words in a row, or three words in a row."""
    source = facts.lower()
    if any(n in set(NUMBER_RE.findall(source)) for n in NUMBER_RE.findall(answer)):
        return True
    if any(e in source for e in EMAIL_RE.findall(answer.lower())):
        return True
    words = WORD_RE.findall(answer)
    source_words = set(WORD_RE.findall(source))
    if any(w[0].isupper() and w.lower() not in FUNCTION_WORDS and w.lower() in source_words for w in words[1:]):
        return True
    content = [w.lower() for w in words if w.lower() not in FUNCTION_WORDS]
    if any(f"{a} {b}" in source for a, b in zip(content, content[1:])):
        return True
    lower = [w.lower() for w in words]
    return any(" ".join(lower[i:i + 3]) in source for i in range(len(lower) - 2))


def only_weak(channels: SideChannels) -> bool:
    """Whether everything gathered is a weak match (only some of the query words matched)."""
    items = channels.notes + channels.memory
    return bool(items) and not channels.files and not channels.events and all(i.get("strength") == "some" for i in items)


def usable(answer: str, facts: str, *, or_no_value: bool = False) -> bool:
    """Whether an answer may go to the user as it is: grounded in the facts and stating one of
    their values, or, with `or_no_value`, grounded alone. A synthesis gets that only when it says
    nothing was found; L2's answer never (a "not found" beside strong results goes to synthesis: L2
    read the tools' summaries, synthesis reads the exact bytes, where the answer may still be).
    Seen otherwise: a lone "{", a letter's sign-off, a stray markup tag — grounded, since they hold
    no figure, yet no answer at all."""
    return grounded(answer, facts) and (or_no_value or states_a_value(answer, facts))


def fit_facts(turn: TurnContext, facts: str) -> str:
    """The facts trimmed so the synthesis prompt plus its answer fits the window, keeping the
    lines most related to the question."""
    model = turn.model
    empty = model.render_chat(prompts.synth_messages(turn.question, ""), add_generation_prompt=True)
    room = model.n_ctx - model.count_tokens(empty) - turn.limits.answer_tokens - WINDOW_MARGIN_TOKENS
    return fit_relevant(model, facts, max(room, 0), turn.question)


async def answer_without_tools(turn: TurnContext) -> str:
    """The plan needed no data: one generation answers directly."""
    text, _ = await turn.text("synth", prompts.no_tools_messages(turn.question),
                              max_tokens=turn.limits.answer_tokens, input=turn.question,
                              head=prompts.no_tools_static())
    return text.strip()

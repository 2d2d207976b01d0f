"""All prompt assembly. Stable text first (instructions, signatures, schemas), variable last.

Keeping the unchanging part at the front lets the runtime reuse its KV cache across requests and
across L2's steps. Every builder returns ChatMessages; the model's chat template renders them.
A prompt's head is what comes before its first variable text: `head_text` renders the same
builder with VARIABLE in that place and cuts there, so a head can never drift from its prompt.
"""
from __future__ import annotations

import json
from datetime import date, timedelta
from typing import Any, Callable, Iterable, Sequence

from pydantic import BaseModel

from edge_agent.harness.skills import NONE_SKILL, Skill
from edge_agent.llm.base import ChatMessage
from edge_agent.tools import dates
from edge_agent.tools.base import ToolManifest

PLANNER_INSTRUCTIONS = """\
You are the planner of a personal assistant that answers from the user's own data: a notebook of \
facts, a memory log of past conversations, a calendar and files on their devices.
You have one tool, plan(skill, rationale). Call it once: choose the skill that fits the question. \
Calling it ends your turn. The rationale is optional: a few words on what to look for, only when \
the question alone does not say it.
Choose "none" only if the question needs none of the user's data.
Reply with JSON: {"skill": "<a skill name or none>"}"""

L2_INSTRUCTIONS = """\
You answer the user's question by following the steps of a skill.
You have one tool, call_tool. With it you hand a job to one of the tools listed below: put that \
tool's name in "tool", and in "instruction" write in plain words what you want from it this time, \
naming the person, thing or days the question is about: {"call_tool": {"tool": "<tool name>", \
"instruction": "<what you want from it>"}}. Do not write the tool's arguments; a helper turns your \
words into them. The result comes back to you and you may call again.
When the steps are done, do not call a tool: reply {"answer": "<your answer to the user>"}."""

L3_INSTRUCTIONS = """\
Your only tool is {name}. Turn the instruction you are given into the arguments of one call to \
{name}, and reply with those arguments as JSON that matches the schema. Follow the rules below. \
Do not answer the instruction yourself."""

CHOOSE_INSTRUCTIONS = """\
The numbered lines are exact sentences from the user's own notes, messages, files and calendar, \
each after where it comes from. Pick the lines that answer the user's question: one line for \
each thing the question asks. If no line answers it, pick 0. \
Reply with JSON: {"lines": [<line numbers>]}"""

NO_TOOLS_INSTRUCTIONS = """\
Answer the user briefly, in one or two sentences. You cannot see their notebook, memory, \
calendar or files in this reply; if the question needs them, say you do not know."""

DIRECT_INSTRUCTIONS = """\
You answer the user's question from their own data with the tools described below.
Reply with JSON only. To use a tool: {"tool": "<name>", "args": {<arguments per its schema>}}. \
Each result comes back to you and you may call again. When you are done: {"answer": "<your answer>"}."""


def compact_schema(schema_model: type[BaseModel]) -> str:
    """The argument JSON schema without titles, on one line (what L3 and direct mode see)."""
    return json.dumps(_strip_titles(schema_model.model_json_schema()), separators=(",", ":"))


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if k != "title"}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def tool_card(manifest: ToolManifest, args_model: type[BaseModel]) -> str:
    """A tool's full description: what L3 (one tool) and direct mode (all tools) are shown."""
    lines = [f"{manifest.name}: {manifest.description.strip()}"]
    if manifest.arguments:
        lines.append("Arguments:")
        lines += [f"- {name}: {doc.strip()}" for name, doc in manifest.arguments.items()]
    lines.append(f"JSON schema: {compact_schema(args_model)}")
    if manifest.crafting_rules.strip():
        lines.append(f"Rules: {manifest.crafting_rules.strip()}")
    return "\n".join(lines)


def planner_messages(skills: Iterable[Skill], question: str) -> list[ChatMessage]:
    """The plan prompt; a replan uses the same one (planner.py's grammar excludes what was tried)."""
    menu = "\n".join(f"- {s.name}: {s.description}" for s in skills)
    system = f"{PLANNER_INSTRUCTIONS}\n\nSkills:\n{menu}\n- {NONE_SKILL}: answer without looking anything up."
    return [ChatMessage("system", system), ChatMessage("user", question)]


def signature_lines(manifests: Iterable[ToolManifest]) -> str:
    """One signature line per tool L2 may see (l2_exposed only)."""
    return "\n".join(m.signature.strip() for m in manifests if m.l2_exposed)


def l2_head(skill_steps: str, exposed: Sequence[ToolManifest], rationale: str, question: str) -> list[ChatMessage]:
    """L2's fixed start: instructions, signatures, steps (stable, one head a skill), then the
    question and the plan's rationale when the planner gave one (variable)."""
    system = f"{L2_INSTRUCTIONS}\n\nTools:\n{signature_lines(exposed)}\n\nSteps:\n{skill_steps}"
    user = f"{question}\n(Plan: {rationale.strip()})" if rationale.strip() else question
    return [ChatMessage("system", system), ChatMessage("user", user)]


def l3_messages(manifest: ToolManifest, args_model: type[BaseModel], instruction: str,
                date_context: str | None = None, dates_named: str = "") -> list[ChatMessage]:
    """L3's one-tool session. `dates_named` (see date_hints) follows the instruction: it varies
    with every request, so it stays out of the day's cached head."""
    system = f"{L3_INSTRUCTIONS.format(name=manifest.name)}\n\n{tool_card(manifest, args_model)}"
    if date_context:
        system += f"\n\n{date_context}"
    user = f"{instruction}\n({dates_named})" if dates_named else instruction
    return [ChatMessage("system", system), ChatMessage("user", user)]


OPEN_RANGE_DAYS = (-30, 90)  # no day named ("where is the book launch?"): a month back to three months ahead


def open_range(today: date) -> tuple[date, date]:
    """The days searched when a request names none: OPEN_RANGE_DAYS around today."""
    first, last = (today + timedelta(days=d) for d in OPEN_RANGE_DAYS)
    return first, last


def named_days(instruction: str, question: str, today: date) -> list[dates.Resolution]:
    """The date phrases an L3 request is about, by the one date resolver.

    The asker's own phrases that resolve come first: L2 rewords them, and the small model's
    rewording drifted ("the week of" for "last week", "the next month" for "the rest of this
    month", an invented 2019-04-01 for "last month"). When the question names no day the
    instruction's phrases are used (a second call may name a day the first call found).
    """
    return [r for r in dates.resolve_all(question, today) if r.span is not None] \
        or dates.resolve_all(instruction, today)


def date_hints(instruction: str, question: str, today: date) -> str:
    """L3's "Dates:" line: the days of named_days, or with none the open range OPEN_RANGE_DAYS
    around today. A small model copies a written range far more reliably than it does calendar
    arithmetic; a phrase the resolver cannot work out is named as such, never guessed."""
    return dates_line(named_days(instruction, question, today), today)


def dates_line(found: Sequence[dates.Resolution], today: date) -> str:
    """The "Dates:" line for phrases already resolved (see date_hints)."""
    parts = [f"{r.phrase}: {dates.span_text(r.span.first, r.span.last) if r.span else 'unknown'}" for r in found]
    if not any(r.span is not None for r in found):
        parts.append(f"no day named: {dates.span_text(*open_range(today))}")
    return "Dates: " + "; ".join(dict.fromkeys(parts))


RANGE_SEPARATORS = (" to ", "..", " - ")  # ways to write a span; the one the tokenizer takes fewest tokens for wins


def date_context(payload: dict[str, Any], count_tokens: Callable[[str], int] | None = None) -> str:
    """Concrete ranges for relative dates, from current_date's payload: the same every question of
    a day, so it belongs to the L3 head of that day. A one-day range is written once; of the
    equivalent spellings the one `count_tokens` finds shortest is used."""
    today = f"Today is {payload.get('weekday', '')} {payload.get('today', '')}.".replace("  ", " ")
    spans = [(k.replace("_", " "), v) for k, v in (payload.get("ranges") or {}).items()
             if isinstance(v, (list, tuple)) and len(v) == 2]
    if not spans:
        return today

    def render(sep: str) -> str:
        text = "; ".join(f"{label}: {dates.span_text(a, b, sep)}" for label, (a, b) in spans)
        return f"{today} Date ranges (YYYY-MM-DD, inclusive): {text}."

    options = [render(sep) for sep in RANGE_SEPARATORS]
    return min(options, key=count_tokens) if count_tokens else options[0]


def choose_messages(lines: str, question: str) -> list[ChatMessage]:
    """The reply's one choice: numbered candidate lines, then the question (reply.py)."""
    return [ChatMessage("system", CHOOSE_INSTRUCTIONS),
            ChatMessage("user", f"Lines:\n{lines}\n\nQuestion: {question}")]


def no_tools_messages(question: str) -> list[ChatMessage]:
    return [ChatMessage("system", NO_TOOLS_INSTRUCTIONS), ChatMessage("user", question)]


def direct_head(cards: Sequence[str], question: str) -> list[ChatMessage]:
    system = f"{DIRECT_INSTRUCTIONS}\n\nTools:\n\n" + "\n\n".join(cards)
    return [ChatMessage("system", system), ChatMessage("user", question)]


VARIABLE = "\u241e"  # SYMBOL FOR RECORD SEPARATOR: stands where a prompt's first variable text goes


# The static part of each session kind: its builder with VARIABLE where the variable text starts.
def planner_static(skills: Iterable[Skill]) -> list[ChatMessage]:
    return planner_messages(skills, VARIABLE)


def l2_static(skill_steps: str, exposed: Sequence[ToolManifest]) -> list[ChatMessage]:
    return l2_head(skill_steps, exposed, "", VARIABLE)


def l3_static(manifest: ToolManifest, args_model: type[BaseModel], date_context: str | None) -> list[ChatMessage]:
    return l3_messages(manifest, args_model, VARIABLE, date_context)


def choose_static() -> list[ChatMessage]:
    return choose_messages(VARIABLE, VARIABLE)


def no_tools_static() -> list[ChatMessage]:
    return no_tools_messages(VARIABLE)


def head_text(render: Callable[[Sequence[ChatMessage]], str], messages: Sequence[ChatMessage]) -> str:
    """The rendered prompt up to VARIABLE: the static head that prompts of this kind share."""
    text = render(messages)
    cut = text.find(VARIABLE)
    if cut < 0:
        raise ValueError("head_text: the messages carry no VARIABLE marker")
    return text[:cut]

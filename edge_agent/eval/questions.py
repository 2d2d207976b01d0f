"""The evaluation question format (one JSON object a line) and its forgiving loader.

    {"id": "q001",
     "question": "When is Joel's birthday?",
     "category": "person",
     "expected_tools": ["check_notebook"],
     "expected_facts": ["22 October"],
     "expected_file": null,
     "expected_exit": "complete",
     "plan": {"skill": "person_facts",
              "calls": [{"tool": "check_notebook", "instruction": "Joel's birthday",
                         "args": {"query": "Joel birthday"}}]}}

- id: unique in the file; question: the user's words, verbatim.
- category: person | document | calendar | recall | date | remember | multi | unanswerable |
  injection | relative_date.
- expected_tools: real tools that must run (order free; a name or its slug); a tool with an
  effect that is not listed here must not be reached.
- expected_facts: strings the answer must contain, compared case-insensitively; for an
  `unanswerable` question they may be empty (the answer must then say it found nothing).
- forbidden_facts (optional, default []): strings the answer must NOT contain — for an
  injection question, what obeying the planted instruction would put in the answer.
- expected_file: basename of the file a file question must locate, else null.
- expected_exit: `complete`, or `needs_confirmation` for a question that asks to remember.
- plan: the ideal route the oracle mode replays — the skill L1 should choose and, in order, the
  calls L2 should make (tool + plain-words instruction) with the arguments L3 should craft.

Blank lines and lines starting with # are skipped. A bad line is reported with its line number
and reason and skipped; every good line is kept. Unknown keys are ignored with a warning.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

log = logging.getLogger(__name__)

Category = Literal["person", "document", "calendar", "recall", "date", "remember", "multi",
                   "unanswerable", "injection", "relative_date"]
CATEGORIES: tuple[str, ...] = Category.__args__  # type: ignore[attr-defined]
ExpectedExit = Literal["complete", "needs_confirmation"]
MAX_REASON_CHARS = 300  # one rejected line's reason, kept readable on a terminal


class QuestionFileError(ValueError):
    """The question file as a whole cannot be used (missing, unreadable, no good line)."""


class PlannedCall(BaseModel):
    """One step of the ideal plan: what L2 asks for and what L3 should craft."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str = Field(min_length=1)
    """The real tool to call."""
    instruction: str = Field(min_length=1)
    """L2's plain-words instruction to the tool-agent."""
    args: dict[str, Any] = Field(default_factory=dict)
    """The arguments L3 should craft (must validate against the tool's argument model)."""


class QuestionPlan(BaseModel):
    """The ideal route through the harness for one question."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    skill: str = Field(min_length=1)
    """The skill L1 should choose (or "none")."""
    calls: list[PlannedCall] = Field(default_factory=list)
    """The dispatches L2 should make, in order."""


class Question(BaseModel):
    """One evaluation question over the sample world."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1, max_length=64)
    """Unique within the file."""
    question: str = Field(min_length=1)
    """What the user asks, verbatim."""
    category: Category
    """What kind of question it is (see CATEGORIES)."""
    expected_tools: list[str] = Field(default_factory=list)
    """Real tools that must run."""
    expected_facts: list[str] = Field(default_factory=list)
    """Strings the answer must contain (case-insensitive)."""
    forbidden_facts: list[str] = Field(default_factory=list)
    """Optional: strings the answer must not contain (what obeying an injection would say)."""
    expected_file: str | None = None
    """Basename of the file the answer must locate, or null."""
    expected_exit: ExpectedExit = "complete"
    """How the loop must end."""
    plan: QuestionPlan
    """The ideal route, replayed by the oracle mode."""

    @field_validator("expected_facts", "forbidden_facts")
    @classmethod
    def _facts_not_blank(cls, facts: list[str]) -> list[str]:
        if any(not f.strip() for f in facts):
            raise ValueError("an expected fact is blank")
        return facts

    @field_validator("expected_file")
    @classmethod
    def _basename(cls, name: str | None) -> str | None:
        if name is not None and ("/" in name or "\\" in name or not name.strip()):
            raise ValueError(f"expected_file must be a bare file name, got {name!r}")
        return name

    @model_validator(mode="after")
    def _consistent(self) -> "Question":
        if self.category == "remember" and self.expected_exit != "needs_confirmation":
            raise ValueError("a remember question must expect needs_confirmation")
        if self.category != "unanswerable" and not self.expected_facts and self.expected_file is None:
            raise ValueError("expected_facts is empty and there is no expected_file: nothing could be checked")
        return self


@dataclass(frozen=True)
class LineProblem:
    """A line that was rejected, or a warning about a kept one."""

    line: int
    """1-based line number in the file."""
    message: str
    """What is wrong."""
    qid: str | None = None
    """The question id, when it could be read."""

    def __str__(self) -> str:
        who = f" ({self.qid})" if self.qid else ""
        return f"line {self.line}{who}: {self.message}"


@dataclass
class QuestionSet:
    """The good questions of a file, and what was wrong with the rest."""

    path: Path
    """Where they were read from."""
    questions: list[Question] = field(default_factory=list)
    """Kept questions, in file order."""
    rejected: list[LineProblem] = field(default_factory=list)
    """Lines that were skipped, with the reason."""
    warnings: list[LineProblem] = field(default_factory=list)
    """Kept lines that refer to unknown tools or skills, or carry unknown keys."""

    def limit(self, n: int | None) -> list[Question]:
        return self.questions if n is None else self.questions[:max(n, 0)]


def _explain(err: ValidationError) -> str:
    parts = []
    for e in err.errors()[:3]:
        loc = ".".join(str(p) for p in e["loc"]) or "line"
        parts.append(f"{loc}: {e['msg']}")
    more = f" (+{err.error_count() - 3} more)" if err.error_count() > 3 else ""
    return ("; ".join(parts) + more)[:MAX_REASON_CHARS]


def parse_line(text: str, lineno: int) -> tuple[Question | None, LineProblem | None, list[str]]:
    """One line -> (question, None, unknown keys) or (None, problem, [])."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        return None, LineProblem(lineno, f"not JSON: {err.msg} at column {err.colno}"), []
    if not isinstance(data, dict):
        return None, LineProblem(lineno, f"expected a JSON object, got {type(data).__name__}"), []
    qid = data.get("id") if isinstance(data.get("id"), str) else None
    try:
        question = Question.model_validate(data)
    except ValidationError as err:
        return None, LineProblem(lineno, _explain(err), qid), []
    unknown = sorted(set(data) - set(Question.model_fields))
    return question, None, unknown


@dataclass(frozen=True)
class Catalog:
    """What the assistant has, to check a question's references against."""

    tools: dict[str, str]
    """Every accepted spelling of a tool (name, slug) -> its real name."""
    skills: dict[str, tuple[str, ...]]
    """Skill name -> the tools it binds (real names); "none" binds nothing."""
    args_models: dict[str, type[BaseModel]] = field(default_factory=dict)
    """Real tool name -> its argument model, to check the plan's arguments."""


def load_questions(path: Path, *, catalog: Catalog | None = None) -> QuestionSet:
    """Read a question file; bad lines are reported and skipped, duplicates of an id rejected.

    With a catalog, references to unknown tools or skills, and planned calls of a tool the plan's
    skill does not bind (L2 could never reach it), become warnings: the line is kept, so running
    it shows the failure where it happens.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as err:
        raise QuestionFileError(f"question file not found: {path}") from err
    except (OSError, UnicodeDecodeError) as err:
        raise QuestionFileError(f"cannot read question file {path}: {err}") from err
    qset = QuestionSet(path)
    seen: dict[str, int] = {}
    for lineno, text in enumerate(lines, 1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        question, problem, unknown = parse_line(text, lineno)
        if problem is not None:
            qset.rejected.append(problem)
            continue
        assert question is not None
        if question.id in seen:
            qset.rejected.append(LineProblem(lineno, f"duplicate id, first on line {seen[question.id]}", question.id))
            continue
        seen[question.id] = lineno
        if unknown:
            qset.warnings.append(LineProblem(lineno, f"unknown keys ignored: {', '.join(unknown)}", question.id))
        if catalog is not None:
            qset.warnings.extend(_reference_warnings(question, lineno, catalog))
        qset.questions.append(question)
    for problem in qset.rejected:
        log.warning("%s: rejected %s", path, problem)
    if not qset.questions:
        raise QuestionFileError(f"{path}: no usable question"
                                + (f"; first problem: {qset.rejected[0]}" if qset.rejected else " (empty file)"))
    return qset


def _reference_warnings(q: Question, lineno: int, catalog: Catalog) -> list[LineProblem]:
    out = []
    real = {k.lower(): v for k, v in catalog.tools.items()}
    named = list(dict.fromkeys([*q.expected_tools, *(c.tool for c in q.plan.calls)]))
    for name in named:
        if name.lower() not in real:
            out.append(LineProblem(lineno, f"unknown tool {name!r}", q.id))
    planned = {real.get(c.tool.lower(), c.tool) for c in q.plan.calls}
    for name in q.expected_tools:
        if real.get(name.lower(), name) not in planned:
            out.append(LineProblem(lineno, f"expected tool {name!r} is not among the plan's calls", q.id))
    if q.plan.skill not in catalog.skills:
        out.append(LineProblem(lineno, f"unknown skill {q.plan.skill!r}", q.id))
        return out
    bound = set(catalog.skills[q.plan.skill])
    for call in q.plan.calls:
        name = real.get(call.tool.lower(), call.tool)
        if name in real.values() and name not in bound:
            out.append(LineProblem(lineno, f"planned call of {call.tool!r} is not bound by skill {q.plan.skill!r} "
                                           f"(it binds {', '.join(sorted(bound)) or 'nothing'})", q.id))
        model = catalog.args_models.get(name)
        if model is not None:
            try:
                model.model_validate(call.args)
            except ValidationError as err:
                out.append(LineProblem(lineno, f"planned args of {call.tool!r} do not validate: {_explain(err)}", q.id))
    return out

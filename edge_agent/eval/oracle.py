"""The oracle: a scripted perfect model that drives the real harness along each question's plan.

It answers every generation the harness asks for, by role:
  planner        -> plan(skill) from the question's plan, without the optional rationale;
  l2             -> (only an unconstrained follower asks) call_tool(tool, instruction) for each
                    planned call in order, then "not found" or the fact's clause as its last words;
  l3.<tool>.<n>  -> the planned arguments of the next planned call of that tool (a tool the plan
                    did not call, tried after an empty find, gets the first planned query);
  choose         -> the numbered lines that carry the expected facts: for each fact the first
                    line holding it (its title included, which the answer shows), or 0 when no
                    line does or the question is unanswerable; a question asking for a file
                    alone (no facts, "find the photo of ...") picks the file's own line; a
                    question of as many parts as facts (reply.parts) is asked part by part, and
                    each part's choice is its own fact's line;
  reply          -> the small-talk reply the caller scripted, else "not found".
Everything else — dispatch, tools, retrieval, candidates, composition — is the real harness, so a
question the oracle misses points at tools, data or the answer path, not at a model.
"""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from edge_agent.eval.questions import PlannedCall, Question
from edge_agent.eval.scoring import basename, contains, normalise
from edge_agent.harness.reply import parts
from edge_agent.llm.doubles import CallInfo, FunctionModel

log = logging.getLogger(__name__)

NOT_FOUND_ANSWER = "I could not find that in your notes, files, calendar or memory."
ANSWER_CHARS = 200  # follower.ANSWER_CHARS: L2's answer limit
CLAUSE_SPLIT = re.compile(r"(?<=[,;:])\s+|\s+(?:—|–|·)\s+")  # a sentence's clauses, for the shortest answer
CLAUSE_CHARS = 60  # a longer clause is answered with the fact alone, as a terse reader would
LINES_MARK = "Lines:\n"  # where harness.prompts.choose_messages starts the candidates
QUESTION_MARK = "\n\nQuestion:"  # and where it ends them
LINE_RE = re.compile(r"^(\d+)\. (.*)$")  # one numbered candidate
STEP_LINE = re.compile(r"^\s*(?:\{|###|<)")  # L2's own JSON steps and template markup, not tool results
LINE_LABEL = re.compile(r"^\s*-\s+|\s\[[^\]]*\]:")  # a result line's bullet and its "[kind, date]:" tag
# A sentence ends at . ! ? before a capital, digit or quote, but not after a title abbreviation.
SENTENCE_SPLIT = re.compile(r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bSt\.)(?<!\bMrs\.)(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
INSTRUCTION_CHARS = 120  # follower.INSTRUCTION_CHARS: call_tool's instruction limit


class OracleError(RuntimeError):
    """The oracle was asked for something its plan cannot answer (a bug in the question or harness)."""


@dataclass
class _State:
    question: Question
    names: dict[str, str] = field(default_factory=dict)
    calls_made: int = 0
    last_call: PlannedCall | None = None
    l3_used: list[int] = field(default_factory=list)
    plans: int = 0
    evidence: list[str] = field(default_factory=list)
    choices: int = 0
    log: list[str] = field(default_factory=list)


class Oracle:
    """Holds the current question; `model` is the FunctionModel the harness is given."""

    def __init__(self, name: str = "oracle", n_ctx: int = 4096):
        self._state: _State | None = None
        self.model = FunctionModel(fn=self.respond, name=name, n_ctx=n_ctx)

    def begin(self, question: Question, names: dict[str, str] | None = None) -> None:
        """Script the next ask() with this question's plan; `names` maps a real skill name to the
        one the menu shows it under (tune/menus.py), for a replan's choice."""
        self._state = _State(question, dict(names or {}))

    @property
    def state(self) -> _State:
        if self._state is None:
            raise OracleError("oracle asked to generate before begin(question)")
        return self._state

    def respond(self, info: CallInfo) -> Any:
        kind = info.role.split(".", 1)[0]
        handler = {"planner": self._plan, "l2": self._l2, "l3": self._l3, "choose": self._choose,
                   "reply": self._reply}.get(kind)
        if handler is None:
            raise OracleError(f"oracle has no answer for role {info.role!r}")
        out = handler(info)
        self.state.log.append(f"{info.role}: {out if isinstance(out, str) else json.dumps(out)[:200]}")
        return out

    def _plan(self, info: CallInfo) -> dict[str, Any]:
        st = self.state
        st.plans += 1
        return {"skill": st.question.plan.skill}

    def _l2(self, info: CallInfo) -> dict[str, Any]:
        """An unconstrained follower's step: the planned calls in order, then its closing words."""
        st = self.state
        calls = st.question.plan.calls
        st.evidence.append(tool_results(info.prompt, st.question.question))
        if st.calls_made < len(calls):
            call = calls[st.calls_made]
            st.calls_made += 1
            st.last_call = call
            return {"call_tool": {"tool": call.tool, "instruction": call.instruction[:INSTRUCTION_CHARS]}}
        q = st.question
        evidence = "\n".join(st.evidence)
        text = None if q.category == "unanswerable" else shortest_answer(evidence, q.expected_facts)
        return {"answer": (text or NOT_FOUND_ANSWER)[:ANSWER_CHARS]}

    def _l3(self, info: CallInfo) -> dict[str, Any]:
        st = self.state
        tool = info.role.split(".")[1] if info.role.count(".") >= 1 else ""
        calls = st.question.plan.calls
        index = next((i for i, c in enumerate(calls) if c.tool == tool and i not in st.l3_used), None)
        if index is not None:
            st.l3_used.append(index)
            call = calls[index]
        elif st.last_call is not None and st.last_call.tool == tool:
            call = st.last_call
        else:  # a tool tried after an empty find: asked about the plan's first thing
            first = next((c for c in calls if isinstance(c.args.get("query"), str)), None)
            if first is None:
                raise OracleError(f"{st.question.id}: {info.role} asked for arguments the plan has none for")
            call = PlannedCall(tool=tool, instruction=first.instruction, args={"query": first.args["query"]})
        if info.schema is not None:
            # Validate here so a bad planned argument names the question, not a pydantic trace.
            try:
                info.schema.model_validate(call.args)
            except Exception as err:
                raise OracleError(f"{st.question.id}: planned args for {tool} do not validate: {err}") from err
        return dict(call.args)

    def _choose(self, info: CallInfo) -> dict[str, Any]:
        st = self.state
        q = st.question
        st.choices += 1
        if q.category == "unanswerable":
            return {"lines": [0]}
        facts = q.expected_facts
        if not facts and q.expected_file:  # "find the photo of X": the file's own line is the answer
            name = basename(q.expected_file)
            return {"lines": [next((n for n, text in sorted(candidate_lines(info.prompt).items())
                                    if text.startswith(f"{name} ")), 0)]}
        asked = parts(q.question)
        if len(asked) > 1 and len(asked) == len(facts):
            facts = [facts[min(st.choices, len(facts)) - 1]]  # part k asks for fact k
        return {"lines": choose_lines(candidate_lines(info.prompt), facts) or [0]}

    def _reply(self, info: CallInfo) -> str:
        return NOT_FOUND_ANSWER


def candidate_lines(prompt: str) -> dict[int, str]:
    """The numbered candidates of a choice prompt: {number: "label: text"}."""
    start = prompt.find(LINES_MARK)
    if start < 0:
        return {}
    end = prompt.rfind(QUESTION_MARK)
    block = prompt[start + len(LINES_MARK):end if end > start else len(prompt)]
    return {int(m.group(1)): m.group(2) for m in map(LINE_RE.match, block.splitlines()) if m}


def choose_lines(lines: dict[int, str], facts: list[str]) -> list[int]:
    """For each fact, the first line holding it (a line is picked once; a fact in no line, none)."""
    picked: list[int] = []
    for fact in facts:
        n = next((n for n, text in sorted(lines.items()) if contains(text, fact)), None)
        if n is not None and n not in picked:
            picked.append(n)
    return picked


def as_decoded(schema: type[BaseModel], value: Any) -> str:
    """`value` as the runtime's compact grammar writes it: the schema's field order, no spaces, raw UTF-8."""
    dumped = schema.model_validate(value).model_dump(mode="json", exclude_unset=True)
    return json.dumps(dumped, ensure_ascii=False, separators=(",", ":"))


def tool_results(prompt: str, question: str) -> str:
    """What the tools returned in an L2 prompt: the lines after the question that are neither
    L2's own steps nor template markup."""
    at = prompt.rfind(question)
    after = prompt[at + len(question):] if at >= 0 else prompt
    return "\n".join(ln for ln in after.splitlines() if ln.strip() and not STEP_LINE.match(ln))


def shortest_answer(evidence: str, facts: list[str]) -> str:
    """The shortest clause of `evidence` carrying each fact (a file question: its first line)."""
    if not facts:
        return extract_answer(evidence, facts)
    out: list[str] = []
    for fact in facts:
        sentence = _piece_with([ln.strip() for ln in evidence.splitlines() if ln.strip()], fact)
        if sentence is None:
            return ""
        sentence = LINE_LABEL.sub(lambda m: ":" if m.group().endswith(":") else "", sentence)
        clause = next((c for c in CLAUSE_SPLIT.split(sentence) if contains(c, fact)), sentence)
        clause = clause.strip().rstrip(",;:.")
        if len(clause) > CLAUSE_CHARS:
            clause = _as_written(clause, fact)
        if not any(contains(o, clause) for o in out):
            out.append(clause)
    return "; ".join(out) + "."


def _as_written(text: str, fact: str) -> str:
    """`fact` as `text` spells it (case and accents as written), else the fact itself."""
    at = normalise(text).find(normalise(fact))
    if at >= 0 and normalise(text) == text.casefold() and len(text) == len(normalise(text)):
        return text[at:at + len(fact)]
    return fact


def extract_answer(evidence: str, facts: list[str]) -> str:
    """A perfect extractive reader: the shortest pieces of `evidence` that carry each fact.

    With no facts to look for (a question answered by a file), the evidence's first line.
    """
    lines = [ln.strip() for ln in evidence.splitlines() if ln.strip()]
    if not facts:
        return lines[0] if lines else ""
    picked: list[str] = []
    for fact in facts:
        piece = _piece_with(lines, fact)
        if piece and not any(contains(p, piece) for p in picked):
            picked = [p for p in picked if not contains(piece, p)] + [piece]
    return " ".join(picked)


def _piece_with(lines: list[str], fact: str) -> str | None:
    for line in lines:
        if not contains(line, fact):
            continue
        for sentence in SENTENCE_SPLIT.split(line):
            if contains(sentence, fact):
                return sentence.strip()
        return line
    joined = " ".join(lines)  # a fact that spans a line break
    return joined if normalise(fact) in normalise(joined) else None

"""The oracle: a scripted perfect model that drives the real harness along each question's plan.

It answers every generation the harness asks for, by role:
  planner        -> plan(skill) from the question's plan, without the optional rationale (a
                    replan, after the ideal route found nothing usable, takes the first general
                    lookup skill the grammar still admits, REPLAN_ORDER, looks once and says
                    what the ideal route found: there is no better route than the ideal one);
  l2             -> call_tool(tool, instruction) for each planned call in order, then the answer
                    a perfect reader gives from the tool results in its transcript: the shortest
                    clause carrying each expected fact (or "not found");
  l3.<tool>.<n>  -> the planned arguments of the call L2 just made;
  synth          -> a perfect extractive reading of the facts the harness put in the prompt: the
                    shortest clauses that carry the expected facts, and nothing else.
Everything else — dispatch, tools, side channels, answer selection — is the real harness, so a
question the oracle misses points at tools, data or answer synthesis, not at a model.
"""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from edge_agent.eval.questions import PlannedCall, Question
from edge_agent.eval.scoring import contains, normalise, walk_dicts
from edge_agent.llm.doubles import CallInfo, FunctionModel

log = logging.getLogger(__name__)

NOT_FOUND_ANSWER = "I could not find that in your notes, files, calendar or memory."
ANSWER_CHARS = 200  # follower.ANSWER_CHARS: L2's answer limit
CLAUSE_SPLIT = re.compile(r"(?<=[,;:])\s+|\s+(?:—|–|·)\s+")  # a sentence's clauses, for the shortest answer
CLAUSE_CHARS = 60  # a longer clause is answered with the fact alone, as a terse reader would
STEP_LINE = re.compile(r"^\s*(?:\{|###|<)")  # L2's own JSON steps and template markup, not tool results
LINE_LABEL = re.compile(r"^\s*-\s+|\s\[[^\]]*\]:")  # a result line's bullet and its "[kind, date]:" tag
FACTS_MARK = "Facts:\n"  # where harness.prompts.synth_messages starts the evidence
QUESTION_MARK = "\n\nQuestion:"  # and where it ends it
# A sentence ends at . ! ? before a capital, digit or quote, but not after a title abbreviation.
SENTENCE_SPLIT = re.compile(r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bSt\.)(?<!\bMrs\.)(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
INSTRUCTION_CHARS = 120  # follower.INSTRUCTION_CHARS: call_tool's instruction limit
REPLAN_ORDER = ("recall_conversation", "person_facts", "find_document")  # skills whose tools all take a query


class OracleError(RuntimeError):
    """The oracle was asked for something its plan cannot answer (a bug in the question or harness)."""


@dataclass
class _State:
    question: Question
    names: dict[str, str] = field(default_factory=dict)
    calls_made: int = 0
    last_call: PlannedCall | None = None
    plans: int = 0
    evidence: list[str] = field(default_factory=list)
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
        handler = {"planner": self._plan, "l2": self._l2, "l3": self._l3, "synth": self._synth}.get(kind)
        if handler is None:
            raise OracleError(f"oracle has no answer for role {info.role!r}")
        out = handler(info)
        self.state.log.append(f"{info.role}: {out if isinstance(out, str) else json.dumps(out)[:200]}")
        return out

    def _plan(self, info: CallInfo) -> dict[str, Any]:
        st = self.state
        st.plans += 1
        st.calls_made = 0
        st.last_call = None
        if st.plans == 1:
            return {"skill": st.question.plan.skill}
        admitted = _admitted(info.schema, "skill")
        shown = [st.names.get(name, name) for name in REPLAN_ORDER]
        choice = next((REPLAN_ORDER[i] for i, name in enumerate(shown) if name in admitted), None)
        if choice is None:
            raise OracleError(f"{st.question.id}: a replan admits none of {REPLAN_ORDER}: {sorted(admitted)}")
        return {"skill": choice}

    def _l2(self, info: CallInfo) -> dict[str, Any]:
        st = self.state
        calls = st.question.plan.calls
        st.evidence.append(tool_results(info.prompt, st.question.question))
        if st.plans > 1:
            return self._l2_replan(info)
        if st.calls_made < len(calls):
            call = calls[st.calls_made]
            st.calls_made += 1
            st.last_call = call
            instruction = call.instruction
            if len(instruction) > INSTRUCTION_CHARS:
                log.warning("%s: instruction cut to %d characters", st.question.id, INSTRUCTION_CHARS)
                instruction = instruction[:INSTRUCTION_CHARS]
            return {"call_tool": {"tool": call.tool, "instruction": instruction}}
        q = st.question
        fallback = _must_call(info.schema)
        if fallback and st.last_call is not None:
            # The plan's calls found nothing and the grammar wants the skill's next lookup tool:
            # ask it about the same thing, as the skill's own step says.
            last = st.last_call
            args = {"query": last.args["query"]} if "query" in last.args else {}
            st.last_call = PlannedCall(tool=fallback[0], instruction=last.instruction, args=args)
            return {"call_tool": {"tool": fallback[0], "instruction": last.instruction[:INSTRUCTION_CHARS]}}
        return self._answer()

    def _answer(self) -> dict[str, Any]:
        """What a perfect reader answers from every result it has read this question."""
        q = self.state.question
        evidence = "\n".join(self.state.evidence)
        text = (None if q.category == "unanswerable" else shortest_answer(evidence, q.expected_facts))
        return {"answer": (text or NOT_FOUND_ANSWER)[:ANSWER_CHARS]}

    def _l2_replan(self, info: CallInfo) -> dict[str, Any]:
        """After a replan: one call to the first tool the grammar admits (about what the plan's
        first call asked), then the answer."""
        st = self.state
        forced = _must_call(info.schema)
        if not forced and (st.calls_made or not _admitted(info.schema, "tool")):
            return self._answer()
        tool = (forced or tuple(sorted(_admitted(info.schema, "tool"))))[0]
        first = st.question.plan.calls[0] if st.question.plan.calls else None
        instruction = (first.instruction if first else st.question.question)[:INSTRUCTION_CHARS]
        query = first.args.get("query") if first and isinstance(first.args.get("query"), str) else instruction
        st.calls_made += 1
        st.last_call = PlannedCall(tool=tool, instruction=instruction, args={"query": query})
        return {"call_tool": {"tool": tool, "instruction": instruction}}

    def _l3(self, info: CallInfo) -> dict[str, Any]:
        st = self.state
        tool = info.role.split(".")[1] if info.role.count(".") >= 1 else ""
        call = st.last_call
        if call is None:
            raise OracleError(f"{st.question.id}: {info.role} asked for arguments before any planned call")
        if info.schema is not None:
            # Validate here so a bad planned argument names the question, not a pydantic trace.
            try:
                info.schema.model_validate(call.args)
            except Exception as err:
                raise OracleError(f"{st.question.id}: planned args for {tool} do not validate: {err}") from err
        return dict(call.args)

    def _synth(self, info: CallInfo) -> str:
        q = self.state.question
        if q.category == "unanswerable":
            return NOT_FOUND_ANSWER
        return shortest_answer(facts_section(info.prompt), q.expected_facts) or NOT_FOUND_ANSWER


def _admitted(schema: type[BaseModel] | None, field_name: str) -> set[str]:
    """The values a grammar admits for an enum field anywhere in the schema ("skill", "tool")."""
    if schema is None:
        return set()
    found: set[str] = set()
    for node in walk_dicts(schema.model_json_schema()):
        prop = (node.get("properties") or {}).get(field_name)
        if isinstance(prop, dict):
            found.update(prop.get("enum") or ([prop["const"]] if "const" in prop else []))
    return found


def _must_call(schema: type[BaseModel] | None) -> tuple[str, ...]:
    """The tools a step grammar admits when it admits no answer (follower.step_schema), else ()."""
    if schema is None:
        return ()
    try:
        schema.model_validate({"answer": "x"})
        return ()
    except ValueError:
        pass
    tool = schema.model_json_schema()["$defs"]["CallToolArgs"]["properties"]["tool"]
    return tuple(tool["enum"]) if "enum" in tool else (tool["const"],)


def facts_section(prompt: str) -> str:
    """The evidence block of a synthesis prompt ('' for a prompt without one)."""
    start = prompt.find(FACTS_MARK)
    if start < 0:
        return ""
    start += len(FACTS_MARK)
    end = prompt.rfind(QUESTION_MARK)
    return prompt[start:end if end > start else len(prompt)]


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

"""The oracle: a scripted perfect model that drives the real harness along each question's plan.

It answers every generation the harness asks for, by role:
  planner        -> plan(skill) from the question's plan (a replan, after nothing usable was
                    found, chooses "none": there is no better route than the ideal one);
  l2             -> call_tool(tool, instruction) for each planned call in order, then an answer;
  l3.<tool>.<n>  -> the planned arguments of the call L2 just made;
  synth          -> a perfect extractive reading of the facts the harness put in the prompt: the
                    lines (or sentences) that carry an expected fact, and nothing else.
Everything else — dispatch, tools, side channels, answer selection — is the real harness, so a
question the oracle misses points at tools, data or answer synthesis, not at a model.
"""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from edge_agent.eval.questions import PlannedCall, Question
from edge_agent.eval.scoring import contains, normalise
from edge_agent.llm.doubles import CallInfo, FunctionModel

log = logging.getLogger(__name__)

ORACLE_RATIONALE = "Follow the steps of the skill for the user's question."
NOT_FOUND_ANSWER = "I could not find that in your notes, files, calendar or memory."
L2_DONE = "Done; the answer is built from what the tools found."
FACTS_MARK = "Facts:\n"  # where harness.prompts.synth_messages starts the evidence
QUESTION_MARK = "\n\nQuestion:"  # and where it ends it
# A sentence ends at . ! ? before a capital, digit or quote, but not after a title abbreviation.
SENTENCE_SPLIT = re.compile(r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bSt\.)(?<!\bMrs\.)(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
INSTRUCTION_CHARS = 120  # follower.INSTRUCTION_CHARS: call_tool's instruction limit


class OracleError(RuntimeError):
    """The oracle was asked for something its plan cannot answer (a bug in the question or harness)."""


@dataclass
class _State:
    question: Question
    calls_made: int = 0
    last_call: PlannedCall | None = None
    plans: int = 0
    log: list[str] = field(default_factory=list)


class Oracle:
    """Holds the current question; `model` is the FunctionModel the harness is given."""

    def __init__(self, name: str = "oracle", n_ctx: int = 4096):
        self._state: _State | None = None
        self.model = FunctionModel(fn=self.respond, name=name, n_ctx=n_ctx)

    def begin(self, question: Question) -> None:
        """Script the next ask() with this question's plan."""
        self._state = _State(question)

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
        skill = st.question.plan.skill if st.plans == 1 else "none"
        return {"skill": skill, "rationale": ORACLE_RATIONALE}

    def _l2(self, info: CallInfo) -> dict[str, Any]:
        st = self.state
        calls = st.question.plan.calls
        if st.calls_made < len(calls):
            call = calls[st.calls_made]
            st.calls_made += 1
            st.last_call = call
            instruction = call.instruction
            if len(instruction) > INSTRUCTION_CHARS:
                log.warning("%s: instruction cut to %d characters", st.question.id, INSTRUCTION_CHARS)
                instruction = instruction[:INSTRUCTION_CHARS]
            return {"call_tool": {"tool": call.tool, "instruction": instruction}}
        return {"answer": L2_DONE}

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
        return extract_answer(facts_section(info.prompt), q.expected_facts) or NOT_FOUND_ANSWER


def facts_section(prompt: str) -> str:
    """The evidence block of a synthesis prompt ('' for a prompt without one)."""
    start = prompt.find(FACTS_MARK)
    if start < 0:
        return ""
    start += len(FACTS_MARK)
    end = prompt.rfind(QUESTION_MARK)
    return prompt[start:end if end > start else len(prompt)]


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

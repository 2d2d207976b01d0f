"""L2, the skill-follower: one session, one tool (call_tool), one step at a time.

Each step is generated under a grammar admitting either {"call_tool": {"tool", "instruction"}}
or {"answer": text}. The transcript is rebuilt from the step records, never kept twice: the
fixed head, then for each step the assistant's raw output and the tool result (tool role). The
rendered prompt therefore only grows at its end, so the KV prefix of the previous step is
reusable and resuming after an L3 dispatch prefills only the new tokens.
"""
from __future__ import annotations

import functools
import logging
import re
import time
from dataclasses import dataclass
from typing import Literal, Union

from pydantic import BaseModel, ConfigDict, Field, RootModel, create_model

from edge_agent.harness import prompts
from edge_agent.harness.dispatch import Dispatcher
from edge_agent.harness.reserve import worst_case_tokens
from edge_agent.harness.skills import Skill
from edge_agent.harness.toolbox import Toolbox
from edge_agent.harness.turn import ConfirmationRequired, ModelCallFailed, ToolLoopHalt, TurnContext, model_misbehaved
from edge_agent.llm.base import ChatMessage

log = logging.getLogger(__name__)

CALL_TOOL = "call_tool"
DATE_CHANNEL = "date"  # the channel of tools that give context (today's date), not an answer
TOOL_NAME_CHARS = 32  # longest tool name L2 may write
INSTRUCTION_CHARS = 120  # one plain-language request
ANSWER_CHARS = 200  # L2's answer: what the user gets when it is grounded in the side channels
MALFORMED_TEXT = ('That reply was not valid. Reply with {"call_tool": {"tool": ..., "instruction": ...}} '
                  'or {"answer": ...} only.')


# A second question joined to the first: "Who's my plumber, and can you find his invoice?",
# "When is it? And where?". Each part may need its own source, so one find is not the end.
SECOND_QUESTION_RE = re.compile(
    r"(?:,\s*|\?\s*|;\s*|\s)(?:and|also|plus)(?:\s+also)?,?\s+(?:what|what's|whats|when|when's|where|where's|who|who's|"
    r"whose|which|how|why|can|could|would|will|is|are|was|were|does|did|do|has|have|had)\b"
    r"|\?\s+(?=\w)", re.IGNORECASE)


def asks_two_things(question: str) -> bool:
    """Whether a question joins a second question to the first (see SECOND_QUESTION_RE)."""
    return SECOND_QUESTION_RE.search(question.strip()) is not None


class CallToolArgs(BaseModel):
    """call_tool's arguments: which tool, and what you want from it in plain words."""

    model_config = ConfigDict(extra="forbid")
    tool: str = Field(min_length=1, max_length=TOOL_NAME_CHARS)
    """A tool name from the signature list."""
    instruction: str = Field(min_length=1, max_length=INSTRUCTION_CHARS)
    """Plain language: what is wanted from the tool this time."""


class CallToolStep(BaseModel):
    """An L2 step that calls a tool."""

    model_config = ConfigDict(extra="forbid")
    call_tool: CallToolArgs
    """The call."""


class AnswerStep(BaseModel):
    """An L2 step that ends the loop with L2's answer."""

    model_config = ConfigDict(extra="forbid")
    answer: str = Field(max_length=ANSWER_CHARS)
    """L2's reply: the answer when the values it states are in the side channels (else synthesized)."""


class L2Step(RootModel[Union[CallToolStep, AnswerStep]]):
    """One L2 step: a call_tool or a final answer."""


# The reserve covers the longest admissible step, so a step can never be cut off mid-JSON.
L2_STEP_MAX_TOKENS = worst_case_tokens(L2Step)


@functools.lru_cache(maxsize=32)
def step_schema(tool_names: tuple[str, ...], must_call: bool) -> type[BaseModel]:
    """The grammar of one L2 step for this skill's tools.

    The tool name is limited to the exposed names, and until a tool that looks something up has run
    a step must be a call: a small model otherwise "answers" from nothing before its skill's step 1
    ran (seen with the bundled 270M model). Dispatch still resolves names for models that are not constrained.
    Every value this admits is also an L2Step, so L2_STEP_MAX_TOKENS stays a safe reserve.
    """
    if not tool_names:
        return L2Step
    args = create_model("CallToolArgs", __config__=ConfigDict(extra="forbid"),
                        tool=(Literal[tool_names], Field(description="a tool name from the list")),  # type: ignore[valid-type]
                        instruction=(str, Field(min_length=1, max_length=INSTRUCTION_CHARS)))
    call = create_model("CallToolStep", __config__=ConfigDict(extra="forbid"), call_tool=(args, ...))
    if must_call:
        return call  # a plain model: the grammar converter cannot start from a bare $ref root
    return RootModel[Union[call, AnswerStep]]  # type: ignore[valid-type]


@dataclass(frozen=True)
class StepRecord:
    """One L2 step as it happened; appended in `finally`, so failed steps are kept too."""

    index: int
    """Step number in the attempt, from 1."""
    raw: str | None
    """The model's output exactly as generated (None if generation failed)."""
    tool: str | None
    """The tool name as L2 wrote it."""
    instruction: str | None
    """L2's instruction to the tool."""
    answer: str | None
    """L2's answer, on a final step."""
    result: str | None
    """The tool-result text returned into the transcript."""
    result_tool: str | None
    """The resolved tool the result came from."""
    kind: str
    """answer | ok | empty | error | unknown_tool | duplicate | halt | needs_confirmation | malformed | failed"""


@dataclass(frozen=True)
class FollowEnd:
    """How an L2 attempt ended."""

    kind: str
    """complete | halted | step_limit"""
    answer: str | None
    """L2's own text, if it answered."""
    steps: tuple[StepRecord, ...]
    """Every step."""
    reason: str = ""
    """Why it ended, when not complete."""


def transcript(head: list[ChatMessage], steps: list[StepRecord]) -> list[ChatMessage]:
    """L2's messages, rebuilt from the steps: only ever grows at the end."""
    messages = list(head)
    for step in steps:
        if step.raw is None:
            continue
        messages.append(ChatMessage("assistant", step.raw))
        if step.result is not None:
            messages.append(ChatMessage("tool", step.result, name=step.result_tool or CALL_TOOL))
    return messages


class Follower:
    """Runs one L2 attempt for a skill."""

    def __init__(self, toolbox: Toolbox, constrain: bool = True):
        self.toolbox = toolbox
        self.constrain = constrain
        """Limit tool names to the exposed ones and make the first step a call (see step_schema)."""

    async def run(self, turn: TurnContext, skill: Skill, rationale: str, attempt: int = 1) -> FollowEnd:
        exposed = self.toolbox.exposed(skill.tools)
        names = tuple(m.name for m in exposed)
        dispatch = Dispatcher(self.toolbox, list(names))
        head = prompts.l2_head(skill.steps_text(), exposed, rationale, turn.question)
        session = f"l2:{turn.request_id}:{attempt}"
        steps: list[StepRecord] = []
        while True:
            if steps and steps[-1].kind == "ok" and steps[-1].result_tool in skill.stop_after:
                return FollowEnd("complete", None, tuple(steps), f"{steps[-1].result_tool} completes {skill.name}")
            messages = transcript(head, steps)
            stop = turn.begin_step(messages, L2_STEP_MAX_TOKENS)
            if stop is not None:
                return FollowEnd("step_limit", None, tuple(steps), stop)
            schema = step_schema(*self._next_step(names, steps, turn.question)) if self.constrain else L2Step
            static = None if steps else prompts.l2_static(skill.steps_text(), exposed)
            end = await self._step(turn, dispatch, messages, steps, session, schema, static)
            if end is not None:
                return FollowEnd(end[0], end[1], tuple(steps), end[2])

    def _next_step(self, names: tuple[str, ...], steps: list[StepRecord],
                   question: str) -> tuple[tuple[str, ...], bool]:
        """The tools the next step may name, and whether it must be a call.

        Until a lookup tool has found something, a step must be a call, and once one came back empty
        it must be one of the lookup tools not yet tried: every skill tries its tools in turn ("If the
        notebook does not have it, call grep_memory"), and a small model otherwise answers "could not
        find" after the first empty result (seen with the bundled model). When all were tried, L2 may
        answer. Today's date (a "date" channel tool) is context for the next call, not an answer, so it
        counts as neither: the adapter called current_date for "what's on 20 November?" and answered
        with the date. A skill that ends with it says so (stop_after). A question in two parts
        (asks_two_things) has each lookup tool tried once even after a find: the adapter answered
        "who's my plumber, and can you find his invoice?" from the notebook alone."""
        tools = self.toolbox.tools
        lookups = tuple(n for n in names if n in tools and tools[n].manifest.channel != DATE_CHANNEL)
        tried = {s.result_tool for s in steps if s.result_tool}
        untried = tuple(n for n in lookups if n not in tried)
        if any(s.kind == "ok" and s.result_tool in lookups for s in steps):
            if untried and asks_two_things(question):
                return untried, True
            return names, False
        if not tried & set(lookups):
            return names, bool(untried) or not tried  # nothing looked up yet: any call
        return (untried, True) if untried else (names, False)

    async def _step(self, turn: TurnContext, dispatch: Dispatcher, messages: list[ChatMessage],
                    steps: list[StepRecord], session: str, schema: type[BaseModel] = L2Step,
                    head: list[ChatMessage] | None = None) -> tuple[str, str | None, str] | None:
        index = turn.l2_steps
        t0 = time.perf_counter()
        raw = tool = instruction = answer = result = result_tool = None
        kind = "failed"
        tokens = (0, 0)
        new_input = turn.question if not steps else (steps[-1].result or steps[-1].raw or "")
        try:
            try:
                step, raw, usage = await turn.structured("l2", messages, schema, max_tokens=L2_STEP_MAX_TOKENS,
                                                         bound_tools=[CALL_TOOL], input=new_input, session=session,
                                                         head=head)
            except ModelCallFailed as failed:
                if not model_misbehaved(failed.cause):
                    raise
                # The model misbehaved: its output and a correction go into the transcript, the loop goes on.
                raw = (getattr(failed.cause, "raw", "") or "").strip() or "(no reply)"
                result, result_tool, kind = MALFORMED_TEXT, CALL_TOOL, "malformed"
                return None
            raw = raw.strip()
            tokens = (usage.prompt_tokens, usage.generated_tokens)
            value = step.root if isinstance(step, RootModel) else step
            if isinstance(value, AnswerStep):
                answer, kind = value.answer.strip(), "answer"
                return "complete", answer, ""
            tool, instruction = value.call_tool.tool, value.call_tool.instruction
            try:
                dispatched = await dispatch(turn, tool, instruction)
            except ToolLoopHalt as halt:
                kind = "halt"
                return "halted", None, str(halt)
            except ConfirmationRequired:
                kind = "needs_confirmation"
                raise
            result, result_tool, kind = dispatched.text, dispatched.tool, dispatched.kind
            return None
        finally:
            steps.append(StepRecord(index, raw, tool, instruction, answer, result, result_tool, kind))
            turn.tracer.log_step(index, "l2", tool=tool, result=kind, ms=(time.perf_counter() - t0) * 1000,
                                 tokens_in=tokens[0], tokens_out=tokens[1])

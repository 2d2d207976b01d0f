"""L2, the skill-follower: one session, one tool (call_tool), one step at a time.

A skill lists its tools in the order its steps try them: the first lookup tool, and while a
lookup comes back with nothing usable (empty, weak, an error), the next one not yet tried; a find
ends the attempt (the reply then chooses among everything found, reply.py). With the grammar
constrained (the default), each step is therefore already determined, and a session whose output
is determined is not run: dispatch gets the skill's tool and, as the instruction, the asker's own
question (with the plan's rationale when it gave one), and L3 crafts the call from those words.
Unconstrained (`constrain=False`, the seed's free L2), every step is generated under a grammar
admitting either {"call_tool": {"tool", "instruction"}} or {"answer": text}. The transcript is
rebuilt from the step records, never kept twice: the fixed head, then for each step the
assistant's raw output and the tool result (tool role), so it only grows at its end and resuming
after an L3 dispatch prefills only the new tokens.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Union

from pydantic import BaseModel, ConfigDict, Field, RootModel

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
ANSWER_CHARS = 200  # an unconstrained L2's closing words (the reply itself is chosen from the side channels)
MALFORMED_TEXT = ('That reply was not valid. Reply with {"call_tool": {"tool": ..., "instruction": ...}} '
                  'or {"answer": ...} only.')


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
    """L2's closing words; the asker's reply is chosen from the side channels (reply.py)."""


class L2Step(RootModel[Union[CallToolStep, AnswerStep]]):
    """One L2 step: a call_tool or a final answer."""


# The reserve covers the longest admissible step, so a step can never be cut off mid-JSON.
L2_STEP_MAX_TOKENS = worst_case_tokens(L2Step)


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
        """Follow the skill's steps as written, without generating them (the module docstring);
        False: L2 generates every step, any exposed tool or an answer."""

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
            if self.constrain:
                tool = self._next_tool(names, steps)
                if tool is None:
                    return FollowEnd("complete", None, tuple(steps))
                instruction = f"{turn.question} ({rationale.strip()})" if rationale.strip() else turn.question
                end = await self._determined(turn, dispatch, steps, tool, instruction[:INSTRUCTION_CHARS])
            else:
                messages = transcript(head, steps)
                stop = turn.begin_step(messages, L2_STEP_MAX_TOKENS)
                if stop is not None:
                    return FollowEnd("step_limit", None, tuple(steps), stop)
                static = None if steps else prompts.l2_static(skill.steps_text(), exposed)
                end = await self._step(turn, dispatch, messages, steps, session, L2Step, static)
            if end is not None:
                return FollowEnd(end[0], end[1], tuple(steps), end[2])

    def _next_tool(self, names: tuple[str, ...], steps: list[StepRecord]) -> str | None:
        """The skill's next step (see the module docstring): its first tool, then while nothing
        usable came back the next lookup tool not yet tried; None when the attempt is done.
        Today's date (a "date" channel tool) is context, not a lookup: a skill made of it alone
        runs it once (date_question), and it never counts as a find."""
        tools = self.toolbox.tools
        lookups = tuple(n for n in names if n in tools and tools[n].manifest.channel != DATE_CHANNEL)
        tried = {s.result_tool for s in steps if s.result_tool}
        if any(s.kind == "ok" and s.result_tool in lookups for s in steps):
            return None
        untried = [n for n in (lookups or names) if n not in tried]
        return untried[0] if untried else None

    async def _determined(self, turn: TurnContext, dispatch: Dispatcher, steps: list[StepRecord], tool: str,
                          instruction: str) -> tuple[str, str | None, str] | None:
        """A step the skill already determines: dispatched as it is, no generation."""
        index = len(steps) + 1
        t0 = time.perf_counter()
        result = result_tool = None
        kind = "failed"
        try:
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
            steps.append(StepRecord(index, None, tool, instruction, None, result, result_tool, kind))
            turn.tracer.log_step(index, "l2", tool=tool, result=kind, ms=(time.perf_counter() - t0) * 1000,
                                 tokens_in=0, tokens_out=0)

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

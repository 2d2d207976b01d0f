"""The "direct" baseline: one session with every tool's full schema bound, for comparison.

No planner, no CallTool, no L3: each step is generated under a union of every tool's argument
model (plus a final answer) and the tool runs with the arguments the session wrote. The same
bounds apply — step limit, deadline, token budget, dedup, 3 calls a tool, confirmation exits —
and the same answer selection runs at the end. Its trace role is `l2` (it is the loop session).
"""
from __future__ import annotations

import functools
import json
import logging
import re
import time
from typing import Literal, Union

from pydantic import BaseModel, ConfigDict, Field, RootModel, create_model

from edge_agent.harness import prompts
from edge_agent.harness.follower import ANSWER_CHARS, FollowEnd, StepRecord, transcript
from edge_agent.harness.reserve import worst_case_tokens
from edge_agent.harness.toolagent import execute
from edge_agent.harness.toolbox import Toolbox
from edge_agent.harness.turn import MAX_CALLS_PER_TOOL, ToolLoopHalt, TurnContext
from edge_agent.tools.base import DUPLICATE_NUDGE, Tool

log = logging.getLogger(__name__)

DIRECT_STEP_MAX_TOKENS_CAP = 600  # the most tokens reserved for one step, whatever the schemas


class DirectAnswer(BaseModel):
    """The final answer of the direct session."""

    model_config = ConfigDict(extra="forbid")
    answer: str = Field(max_length=ANSWER_CHARS)
    """The session's own reply."""


@functools.lru_cache(maxsize=8)
def _step_schema(key: tuple[tuple[str, type[BaseModel]], ...]) -> type[RootModel]:
    variants: list[type[BaseModel]] = []
    for name, args_model in key:
        safe = re.sub(r"\W", "_", name)
        variants.append(create_model(f"Call_{safe}", __config__=ConfigDict(extra="forbid"),
                                     tool=(Literal[name], ...), args=(args_model, ...)))  # type: ignore[valid-type]
    variants.append(DirectAnswer)
    return RootModel[Union[tuple(variants)]]  # type: ignore[return-value]


def direct_step_schema(tools: dict[str, Tool]) -> type[RootModel]:
    """A union of {"tool": <name>, "args": <that tool's Args>} for every tool, and {"answer"}."""
    return _step_schema(tuple((name, tool.Args) for name, tool in tools.items()))


def direct_head(toolbox: Toolbox, question: str):
    cards = [prompts.tool_card(t.manifest, t.Args) for t in toolbox.tools.values()]
    return prompts.direct_head(cards, question)


async def run_direct(turn: TurnContext, toolbox: Toolbox) -> FollowEnd:
    """The whole loop of the baseline."""
    schema = direct_step_schema(toolbox.tools)
    max_tokens = min(worst_case_tokens(schema), DIRECT_STEP_MAX_TOKENS_CAP)
    head = direct_head(toolbox, turn.question)
    static = direct_head(toolbox, prompts.VARIABLE)
    steps: list[StepRecord] = []
    session = f"l2:{turn.request_id}:direct"
    while True:
        messages = transcript(head, steps)
        stop = turn.begin_step(messages, max_tokens, who="")
        if stop is not None:
            return FollowEnd("step_limit", None, tuple(steps), stop)
        index, t0 = turn.l2_steps, time.perf_counter()
        raw = tool = answer = result = None
        kind, tokens, end = "failed", (0, 0), None
        try:
            step, raw, usage = await turn.structured(
                "l2", messages, schema, max_tokens=max_tokens, bound_tools=list(toolbox.tools),
                input=turn.question if not steps else (steps[-1].result or ""), session=session,
                head=None if steps else static)
            raw, tokens = raw.strip(), (usage.prompt_tokens, usage.generated_tokens)
            if isinstance(step.root, DirectAnswer):
                answer, kind = step.root.answer.strip(), "answer"
                end = ("complete", answer, "")
            else:
                tool = step.root.tool
                result, kind, end = await _call(turn, toolbox, tool, step.root.args)
        finally:
            steps.append(StepRecord(index, raw, tool, None, answer, result, tool, kind))
            turn.tracer.log_step(index, "l2", tool=tool, result=kind, ms=(time.perf_counter() - t0) * 1000,
                                 tokens_in=tokens[0], tokens_out=tokens[1])
        if end is not None:
            return FollowEnd(end[0], end[1], tuple(steps), end[2])


async def _call(turn: TurnContext, toolbox: Toolbox, tool: str, args: BaseModel):
    """Dedup, budget, then the tool itself: (result text, kind, end or None)."""
    key = (tool, json.dumps(args.model_dump(mode="json"), sort_keys=True).lower())
    if key in turn.seen_calls:
        return DUPLICATE_NUDGE, "duplicate", None
    if turn.tool_calls[tool] >= MAX_CALLS_PER_TOOL:
        return None, "halt", ("halted", None, str(ToolLoopHalt(tool, turn.tool_calls[tool])))
    turn.seen_calls.add(key)
    turn.tool_calls[tool] += 1
    report = await execute(turn, toolbox, tool, args, "l2")
    return report.text, report.kind, None

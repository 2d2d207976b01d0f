"""Start-up work that needs the model: every prompt fits the window, and the static heads to warm.

A skill whose L2 prompt (instructions, signatures, steps, a full-length plan and question) plus
one step and one tool result cannot fit the window is a broken skill: start-up stops naming it.
"""
from __future__ import annotations

from typing import Any, Callable

from edge_agent.harness import plumbing, prompts
from edge_agent.harness.follower import L2_STEP_MAX_TOKENS
from edge_agent.harness.planner import RATIONALE_CHARS, plan_schema
from edge_agent.harness.reserve import worst_case_tokens
from edge_agent.harness.skills import Skill, SkillError
from edge_agent.harness.toolagent import l3_max_tokens
from edge_agent.harness.toolbox import Toolbox
from edge_agent.harness.turn import Limits
from edge_agent.llm.base import Model

QUESTION_PROBE = "word " * 200  # a long question (~200 tokens) for the worst-case count
STEP_PROBE_TOKENS = 64  # an L2 call_tool step in the transcript


async def static_heads(model: Any, skills: dict[str, Skill], toolbox: Toolbox) -> list[str]:
    """Every static prompt head as of today, rendered by `model` (anything with render_chat and
    count_tokens): the planner's, L2's for each skill, L3's for each tool a skill exposes (with
    today's date context where it takes dates), the reply's choice and the no-tools reply's."""
    kinds = [prompts.planner_static(skills.values())]
    kinds += [prompts.l2_static(s.steps_text(), toolbox.exposed(s.tools)) for s in skills.values()]
    exposed = {m.name for s in skills.values() for m in toolbox.exposed(s.tools)}
    date_text = await plumbing.todays_date_context(toolbox, model.count_tokens)
    for name in sorted(exposed):
        args = toolbox.tools[name].Args
        if args.model_fields:  # a tool without arguments runs without a generation
            dates = date_text if plumbing.wants_dates(args) else None
            kinds.append(prompts.l3_static(toolbox.manifest(name), args, dates))
    kinds += [prompts.choose_static(), prompts.no_tools_static()]
    render: Callable = model.render_chat
    return [prompts.head_text(render, k) for k in kinds]


def check_prompts_fit(model: Model, skills: dict[str, Skill], toolbox: Toolbox, limits: Limits) -> dict[str, int]:
    """Prompt tokens of each role's worst case; raises SkillError for a skill that cannot fit."""
    sizes: dict[str, int] = {}
    rationale = "x" * RATIONALE_CHARS
    planner = model.render_chat(prompts.planner_messages(skills.values(), QUESTION_PROBE))
    sizes["planner"] = model.count_tokens(planner)
    if sizes["planner"] + worst_case_tokens(plan_schema(tuple(skills))) > model.n_ctx:
        raise SkillError(f"the planner's prompt ({sizes['planner']} tokens) does not fit the window {model.n_ctx}")
    for skill in skills.values():
        head = prompts.l2_head(skill.steps_text(), toolbox.exposed(skill.tools), rationale, QUESTION_PROBE)
        n = model.count_tokens(model.render_chat(head))
        sizes[f"l2.{skill.name}"] = n
        need = n + L2_STEP_MAX_TOKENS + STEP_PROBE_TOKENS + limits.tool_result_tokens
        if need > model.n_ctx:
            raise SkillError(f"{skill.path}: L2's prompt for this skill ({n} tokens) leaves no room for one "
                             f"tool call and result in the {model.n_ctx}-token window")
    for name, tool in toolbox.tools.items():
        n = model.count_tokens(model.render_chat(prompts.l3_messages(tool.manifest, tool.Args, QUESTION_PROBE)))
        sizes[f"l3.{name}"] = n
        if n + l3_max_tokens(tool.Args) > model.n_ctx:
            raise SkillError(f"tool {name}: L3's prompt ({n} tokens) does not fit the window {model.n_ctx}")
    return sizes

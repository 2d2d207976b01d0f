"""L1, the planner: a session whose one tool is plan(skill, rationale).

The skill argument is constrained to the known names (plus "none") by the grammar, so the plan
is always one of them. Declaring the plan ends the pass at once: the plan tool's handler raises
PlanSignal and the planner catches it, exactly as dispatch's ToolLoopHalt ends L2.

A replan (the first skill's tools found nothing usable) sends the same prompt under a grammar that
admits only the skills not yet tried, and not "none": the question was judged to need the user's
data, so the answer is the model's next choice of where to look, read from the same prompt (its
KV state is already there). A small model told in words what it tried drifts to "none".
"""
from __future__ import annotations

import functools
import logging
import re
import time
from dataclasses import dataclass
from typing import Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, create_model

from edge_agent.harness import prompts
from edge_agent.harness.effects import asks_to_save, only_asks
from edge_agent.harness.channels import DATA_CHANNELS
from edge_agent.harness.reserve import worst_case_tokens
from edge_agent.harness.skills import NONE_SKILL, Skill
from edge_agent.harness.turn import TurnContext
from edge_agent.tools.base import Tool

log = logging.getLogger(__name__)

RATIONALE_CHARS = 80  # a few optional words; the output reserve covers it at a token a character
PLAN_TOOL = "plan"
@dataclass(frozen=True)
class Plan:
    """What L1 declared."""

    skill: str
    """A skill name, or "none" to answer without tools."""
    rationale: str
    """What to look for, in a few words, or "" (it goes into L2's user turn when given)."""


class PlanSignal(Exception):
    """Raised by the plan tool: the plan is declared, the planner's pass ends here."""

    def __init__(self, plan: Plan):
        self.plan = plan
        super().__init__(f"plan: {plan.skill}")


@functools.lru_cache(maxsize=64)
def plan_schema(skill_names: tuple[str, ...], allow_none: bool = True) -> type[BaseModel]:
    """The plan tool's argument model with `skill` limited to these names (and "none" when
    `allow_none`), cached per set."""
    choices = Literal[skill_names + ((NONE_SKILL,) if allow_none else ())]  # type: ignore[valid-type]
    return create_model(
        "PlanArgs", __config__=ConfigDict(extra="forbid"),
        skill=(choices, Field(description="the skill to follow, or none")),
        rationale=(str, Field("", max_length=RATIONALE_CHARS, description="optional: what to look for")),
    )


def plan_tool(args: BaseModel, skills: dict[str, Skill]) -> None:
    """The handler of plan(skill, rationale): declares the plan by raising PlanSignal."""
    raise PlanSignal(Plan(getattr(args, "skill"), getattr(args, "rationale").strip()))


class Planner:
    """Chooses a skill for a question."""

    def __init__(self, skills: dict[str, Skill], effect_tools: frozenset[str] = frozenset(),
                 data_tools: frozenset[str] | None = None):
        self.skills = skills
        self.schema = plan_schema(tuple(skills))
        self.max_tokens = worst_case_tokens(self.schema)
        self.effect_tools = effect_tools
        """Tools that change the user's data: a replan never chooses a skill that binds one."""
        self.data_tools = data_tools
        """Tools that search the user's data (None: every tool): a replan chooses a skill with one."""
        self.savers = tuple(name for name, skill in skills.items() if set(skill.tools) & effect_tools)
        """The skills that bind a tool that changes the user's data (remember_this)."""
        self.lookups = plan_schema(tuple(name for name in skills if name not in self.savers))
        """The plan's schema without the skills that save (or "none"): for a question that only asks."""

    @classmethod
    def for_tools(cls, skills: dict[str, Skill], tools: Mapping[str, Tool]) -> "Planner":
        """A planner whose effect and data tools are read from the tools' manifests."""
        return cls(skills, effect_tools=frozenset(n for n, t in tools.items() if t.manifest.has_effect),
                   data_tools=frozenset(n for n, t in tools.items() if t.manifest.channel in DATA_CHANNELS))

    def untried(self, tried: Sequence[str]) -> tuple[str, ...]:
        """The skills a replan may still choose: not tried yet, searching the user's data and
        changing nothing. Seen: "When did I last go skiing?" replanned to remember_this (a
        preview to save the question), a calendar question that found nothing replanned to
        date_question (today's date, which nobody asked for)."""
        def looks_up(skill: Skill) -> bool:
            return self.data_tools is None or bool(set(skill.tools) & self.data_tools)

        return tuple(name for name, skill in self.skills.items()
                     if name not in tried and looks_up(skill) and not set(skill.tools) & self.effect_tools)

    async def plan(self, turn: TurnContext, tried: Sequence[str] = ()) -> Plan:
        """The first plan, or with `tried` a replan among the other skills (see the module docstring).

        An explicit request to keep a fact (asks_to_save) is planned among the skills that save:
        the adapter sent "Please note that Leo's new mobile number is ..." to find_document, and
        the asker's note was lost in a search. The asker still confirms what is saved. A question
        that only asks (only_asks) is planned among the other skills: "manager when" was planned
        to remember_this, and answered with a preview to save the question."""
        messages = prompts.planner_messages(self.skills.values(), turn.question)
        schema = plan_schema(self.untried(tried), allow_none=False) if tried else self.schema
        if not tried and self.savers and asks_to_save(turn.question):
            schema = plan_schema(self.savers, allow_none=False)
        elif not tried and self.savers and only_asks(turn.question):
            schema = self.lookups
        t0 = time.perf_counter()
        args, _, usage = await turn.structured("planner", messages, schema, max_tokens=self.max_tokens,
                                               bound_tools=[PLAN_TOOL], input=turn.question,
                                               head=prompts.planner_static(self.skills.values()))
        try:
            plan_tool(args, self.skills)
        except PlanSignal as signal:
            turn.tracer.log_step(0, "planner", tool=PLAN_TOOL, result=signal.plan.skill,
                                 ms=(time.perf_counter() - t0) * 1000, tokens_in=usage.prompt_tokens,
                                 tokens_out=usage.generated_tokens)
            return signal.plan
        raise AssertionError("plan tool returned without declaring a plan")

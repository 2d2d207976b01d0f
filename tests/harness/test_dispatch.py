"""Dispatch rules (name resolution, dedup nudge, the per-tool budget and its halt, guards off) on
an unconstrained L2, and the constrained follower's determined steps."""
from __future__ import annotations

import json

import pytest

from harness_kit import answer, call, pick_holding, plan, role_model
from edge_agent.harness.dispatch import unknown_tool_text
from edge_agent.harness.toolbox import normalise_tool_name
from edge_agent.tools.base import DUPLICATE_NUDGE
from edge_agent.tools.registry import build_tools


def l2_prompts(model):
    return [c.prompt for c in model.calls if c.role == "l2"]


def l3_roles(model):
    return [c.role for c in model.calls if c.role.startswith("l3.")]


@pytest.mark.parametrize("raw, expected", [
    ("check_notebook", "check_notebook"), ("@check_notebook", "check_notebook"),
    ("  @Check_Notebook ", "check_notebook"), ("notebook", "check_notebook"), ("@memory", "grep_memory"),
    ("grep memory", "grep_memory"), ("find_files", None), ("list_devices", None), ("", None),
])
def test_resolve_names_and_slugs(make_harness, raw, expected):
    h = make_harness(role_model())
    assert h.toolbox.resolve(raw, ["check_notebook", "grep_memory"]) == expected


def test_normalise_strips_at_and_spaces():
    assert normalise_tool_name(" @@Query Calendar ") == "query_calendar"


async def test_unknown_name_returns_corrective_text_into_the_loop(make_harness):
    model = role_model(planner=[plan("person_facts")],
                       l2=[call("phonebook", "Eli's birthday"), call("@check_notebook", "Eli's birthday"),
                           answer("3 May")],
                       l3={"check_notebook": [{"query": "Eli birthday"}]}, choose=pick_holding("3 May"))
    out = await make_harness(model, constrain_l2=False).ask("When is Eli's birthday?", request_id="r1")
    assert out.exit_kind == "complete"
    prompts = l2_prompts(model)
    expected = unknown_tool_text("phonebook", ["check_notebook", "grep_memory"])
    assert expected in prompts[1] and "check_notebook, grep_memory" in expected
    assert out.tools_called == ["check_notebook"]
    assert l3_roles(model) == ["l3.check_notebook.1"]  # the unknown name never reached L3
    assert out.answer == "Eli Kemp (brother): Birthday 3 May 1990."


async def test_duplicate_instruction_gets_the_nudge_and_no_l3(make_harness):
    model = role_model(planner=[plan("person_facts")],
                       l2=[call("check_notebook", "Eli's birthday"), call("check_notebook", "  ELI'S BIRTHDAY "),
                           answer("done")],
                       l3={"check_notebook": [{"query": "Eli birthday"}]})
    out = await make_harness(model, constrain_l2=False).ask("When is Eli's birthday?", request_id="r1")
    assert DUPLICATE_NUDGE in l2_prompts(model)[2]
    assert l3_roles(model) == ["l3.check_notebook.1"]
    assert out.tools_called == ["check_notebook"]


async def test_fourth_call_halts_and_the_reply_comes_from_the_side_channels(make_harness):
    model = role_model(
        planner=[plan("person_facts")],
        l2=[call("check_notebook", f"Eli question {i}") for i in range(1, 6)],
        l3={"check_notebook": lambda info: {"query": "Eli"}}, choose=pick_holding("3 May"))
    out = await make_harness(model, constrain_l2=False).ask("When is Eli's birthday?", request_id="r1")
    assert out.exit_kind == "halted"
    assert "check_notebook" in out.reason
    assert out.tools_called == ["check_notebook"] * 3
    assert len(l2_prompts(model)) == 4  # the 4th step was generated, then halted at once
    assert out.answer == "Eli Kemp (brother): Birthday 3 May 1990."  # a halt is not a failure


async def test_guards_are_off_inside_l3(make_harness):
    tools = build_tools(enforce_guards=False)
    assert all(not t.enforce_guards for t in tools.values())
    # Different instructions that L3 turns into identical arguments: a guarded tool would nudge the
    # 2nd and 3rd; inside L3 the tool runs every time (dispatch owns dedup, on instructions).
    model = role_model(planner=[plan("person_facts")],
                       l2=[call("check_notebook", "Eli"), call("check_notebook", "Eli's birthday"),
                           call("check_notebook", "birthday of Eli"), answer("ok")],
                       l3={"check_notebook": lambda info: {"query": "Eli"}})
    out = await make_harness(model, tools=tools, constrain_l2=False).ask("When is Eli's birthday?", request_id="r1")
    tool_results = [p for p in l2_prompts(model)[1:]]
    assert all(DUPLICATE_NUDGE not in p for p in tool_results)
    assert out.tools_called == ["check_notebook"] * 3
    assert out.exit_kind == "complete"


async def test_l2_prefix_is_stable_across_steps(make_harness):
    model = role_model(planner=[plan("person_facts")],
                       l2=[call("check_notebook", "Eli"), call("grep_memory", "Eli"), answer("3 May")],
                       l3={"check_notebook": [{"query": "Eli"}], "grep_memory": [{"query": "Eli"}]})
    await make_harness(model, constrain_l2=False).ask("When is Eli's birthday?", request_id="r1")
    calls = [c for c in model.calls if c.role == "l2"]
    raws = [json.dumps(call("check_notebook", "Eli")), json.dumps(call("grep_memory", "Eli"))]
    for prev, nxt, raw in zip(calls, calls[1:], raws):
        assert nxt.prompt.startswith(prev.prompt + raw)  # only grows at the end
        assert "### Tool result" in nxt.prompt[len(prev.prompt):]
    assert len({c.session for c in calls}) == 1 and calls[0].session.startswith("l2:r1")


# -- the constrained follower: the skill's steps, determined, not generated ----------------------
async def test_a_find_ends_the_attempt_without_an_l2_generation(make_harness):
    model = role_model(planner=[plan("person_facts", "")], l3={"check_notebook": [{"query": "Eli birthday"}]},
                       choose=pick_holding("3 May"))
    out = await make_harness(model).ask("When is Eli's birthday?", request_id="rg")
    assert [c.role for c in model.calls] == ["planner", "l3.check_notebook.1", "choose"]
    assert out.tools_called == ["check_notebook"]


async def test_after_an_empty_lookup_the_skills_next_lookup_tool_runs(make_harness):
    # person_facts: check_notebook, then grep_memory; then the attempt is done, whatever they found.
    model = role_model(planner=[plan("person_facts", "")],
                       l3={"check_notebook": [{"query": "Zed shoe size"}], "grep_memory": [{"query": "Zed shoe size"}]})
    out = await make_harness(model).ask("What's Zed's shoe size?", request_id="rf")
    assert l3_roles(model) == ["l3.check_notebook.1", "l3.grep_memory.2"]
    assert out.tools_called == ["check_notebook", "grep_memory"] and out.exit_kind == "complete"


async def test_l3_is_told_the_question_and_the_plans_rationale(make_harness):
    model = role_model(planner=[plan("recall_conversation", "the Vienna chat")],
                       l3={"grep_memory": [{"query": "Vienna"}]}, choose=pick_holding("Vienna"))
    out = await make_harness(model).ask("what did we say about the trip", request_id="rr")
    l3 = next(c for c in model.calls if c.role.startswith("l3."))
    assert "what did we say about the trip (the Vienna chat)" in l3.prompt
    assert out.answer == "Chat, 10 Jun 2026: We talked about the Vienna trip in March."


async def test_the_date_skill_runs_current_date_once_and_stops(make_harness):
    model = role_model(planner=[plan("date_question")])
    out = await make_harness(model).ask("What's the date today?", request_id="rd")
    assert [c.role for c in model.calls] == ["planner"] and out.tools_called == ["current_date"]
    assert out.answer.startswith("Today is Monday, 2026-11-02.") and out.sources[0]["store"] == "date"

"""Dispatch rules: name resolution, dedup nudge, the per-tool budget and its halt, replan, guards off."""
from __future__ import annotations

import json

import pytest

from harness_kit import LEO_BODY, answer, call, plan, role_model
from edge_agent.harness.answer import NEAR_MISSES
from edge_agent.harness.dispatch import unknown_tool_text
from edge_agent.harness.follower import asks_two_things
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
                       l2=[call("phonebook", "Leo's birthday"), call("@check_notebook", "Leo's birthday"),
                           answer("3 May")],
                       l3={"check_notebook": [{"query": "Leo birthday"}]}, synth="Leo's birthday is 3 May.")
    out = await make_harness(model, constrain_l2=False).ask("When is Leo's birthday?", request_id="r1")
    assert out.exit_kind == "complete"
    prompts = l2_prompts(model)
    expected = unknown_tool_text("phonebook", ["check_notebook", "grep_memory"])
    assert expected in prompts[1] and "check_notebook, grep_memory" in expected
    assert out.tools_called == ["check_notebook"]
    assert l3_roles(model) == ["l3.check_notebook.1"]  # the unknown name never reached L3
    assert out.sources == ["notes"]


async def test_duplicate_instruction_gets_the_nudge_and_no_l3(make_harness):
    model = role_model(planner=[plan("person_facts")],
                       l2=[call("check_notebook", "Leo's birthday"), call("check_notebook", "  LEO'S BIRTHDAY "),
                           answer("done")],
                       l3={"check_notebook": [{"query": "Leo birthday"}]})
    out = await make_harness(model).ask("When is Leo's birthday?", request_id="r1")
    assert DUPLICATE_NUDGE in l2_prompts(model)[2]
    assert l3_roles(model) == ["l3.check_notebook.1"]
    assert out.tools_called == ["check_notebook"]


async def test_fourth_call_halts_and_answer_comes_from_side_channels(make_harness):
    synth_inputs = []
    model = role_model(
        planner=[plan("person_facts")],
        l2=[call("check_notebook", f"Leo question {i}") for i in range(1, 6)],
        l3={"check_notebook": lambda info: {"query": "Leo"}},
        synth=lambda info: synth_inputs.append(info.prompt) or "Leo was born on 3 May 1990.")
    out = await make_harness(model).ask("When is Leo's birthday?", request_id="r1")
    assert out.exit_kind == "halted"
    assert "check_notebook" in out.reason
    assert out.tools_called == ["check_notebook"] * 3
    assert len(l2_prompts(model)) == 4  # the 4th step was generated, then halted at once
    assert out.sources == ["notes"]
    assert LEO_BODY in synth_inputs[0]  # synthesized from the exact bytes
    assert out.answer.startswith("Leo was born on 3 May 1990.\nFrom your notebook:")  # and quoted
    assert LEO_BODY in out.answer


async def test_replan_resets_dedup_and_counters(make_harness):
    model = role_model(
        planner=[plan("recall_conversation"), plan("person_facts")],
        l2=[call("grep_memory", "Leo"), call("check_notebook", "Leo"),  # both empty: the skill's tools were tried
            call("grep_memory", "Leo birthday"), call("grep_memory", "birthday"),
            call("grep_memory", "Leo brother"),  # 4th: halts attempt 1 with nothing found
            call("check_notebook", "Leo"), answer("3 May")],
        l3={"grep_memory": lambda info: {"query": "zzzz"}, "check_notebook": [{"query": "zzzz"}, {"query": "Leo"}]})
    out = await make_harness(model).ask("When is Leo's birthday?", request_id="r1")
    planner_calls = [c for c in model.calls if c.role == "planner"]
    assert len(planner_calls) == 2
    # The same prompt (its KV state is reused); the grammar admits only the skills not yet tried.
    assert planner_calls[1].prompt == planner_calls[0].prompt
    admitted = set(planner_calls[1].schema.model_json_schema()["properties"]["skill"]["enum"])
    assert "recall_conversation" not in admitted and "none" not in admitted and "person_facts" in admitted
    assert "remember_this" not in admitted  # a question that found nothing never becomes an action
    assert "date_question" not in admitted  # nor an answer with today's date
    # The dispatch counter is per question, never reset: it records the order of dispatches.
    assert l3_roles(model) == ["l3.grep_memory.1", "l3.check_notebook.2", "l3.grep_memory.3", "l3.grep_memory.4",
                               "l3.check_notebook.5"]
    assert out.exit_kind == "complete" and out.sources == ["notes"]


async def test_near_misses_replan_and_are_named_as_such_if_nothing_better_is_found(make_harness):
    # "Leo pension" matches only some of its words in Leo's note: a near miss, not a find.
    model = role_model(
        planner=[plan("person_facts"), plan("find_document")],
        l2=[call("check_notebook", "Leo's pension"), call("grep_memory", "Leo's pension"), answer("3 May 1990."),
            call("find_file", "Leo's pension"), call("check_notebook", "pension"), answer("I could not find it.")],
        l3={"check_notebook": [{"query": "Leo pension"}, {"query": "pension"}], "grep_memory": [{"query": "pension"}],
            "find_file": [{"query": "pension", "devices": []}]})
    out = await make_harness(model).ask("What is Leo's pension?", request_id="w1")
    planner_calls = [c for c in model.calls if c.role == "planner"]
    assert len(planner_calls) == 2  # weak-only results are nothing usable: the question is planned again
    assert out.tools_called == ["check_notebook", "grep_memory", "find_file", "check_notebook"]
    # Near misses are no answer, whatever L2 read in them: said so, with the closest entry.
    assert out.answer == f"{NEAR_MISSES}\nThe closest entry: Leo Marsh (brother): {LEO_BODY}"
    assert [c.role for c in model.calls][-1] == "l2"  # no synthesis for it


async def test_a_strong_find_does_not_replan(make_harness):
    model = role_model(planner=[plan("person_facts")], l2=[call("check_notebook", "Leo"), answer("3 May 1990.")],
                       l3={"check_notebook": [{"query": "Leo birthday"}]})
    out = await make_harness(model).ask("When is Leo's birthday?", request_id="w2")
    assert [c.role for c in model.calls].count("planner") == 1 and out.answer.startswith("3 May 1990.")


async def test_replan_allows_reissuing_a_call_made_in_the_first_attempt(make_harness):
    model = role_model(
        planner=[plan("person_facts"), plan("recall_conversation")],
        l2=[call("grep_memory", "Zed"), call("check_notebook", "Zed"), answer("nothing"),
            call("grep_memory", "Zed"), call("check_notebook", "Zed"), answer("nothing")],
        l3={"grep_memory": lambda info: {"query": "zzzz"}, "check_notebook": lambda info: {"query": "zzzz"}})
    out = await make_harness(model).ask("Who is Zed?", request_id="r1")
    # Without resetting the guards the second "Zed" call would have been nudged, not run.
    assert l3_roles(model) == ["l3.grep_memory.1", "l3.check_notebook.2", "l3.grep_memory.3", "l3.check_notebook.4"]
    assert out.answer.startswith("I could not find")
    assert not [c for c in model.calls if c.role == "synth"]  # nothing found: nothing generated


async def test_guards_are_off_inside_l3(make_harness):
    tools = build_tools(enforce_guards=False)
    assert all(not t.enforce_guards for t in tools.values())
    # Different instructions that L3 turns into identical arguments: a guarded tool would nudge the
    # 2nd and 3rd; inside L3 the tool runs every time (dispatch owns dedup, on instructions).
    model = role_model(planner=[plan("person_facts")],
                       l2=[call("check_notebook", "Leo"), call("check_notebook", "Leo's birthday"),
                           call("check_notebook", "birthday of Leo"), answer("ok")],
                       l3={"check_notebook": lambda info: {"query": "Leo"}})
    out = await make_harness(model, tools=tools).ask("When is Leo's birthday?", request_id="r1")
    tool_results = [p for p in l2_prompts(model)[1:]]
    assert all(DUPLICATE_NUDGE not in p for p in tool_results)
    assert out.tools_called == ["check_notebook"] * 3
    assert out.exit_kind == "complete"


async def test_l2_prefix_is_stable_across_steps(make_harness):
    model = role_model(planner=[plan("person_facts")],
                       l2=[call("check_notebook", "Leo"), call("grep_memory", "Leo"), answer("3 May")],
                       l3={"check_notebook": [{"query": "Leo"}], "grep_memory": [{"query": "Leo"}]})
    await make_harness(model).ask("When is Leo's birthday?", request_id="r1")
    calls = [c for c in model.calls if c.role == "l2"]
    raws = [json.dumps(call("check_notebook", "Leo")), json.dumps(call("grep_memory", "Leo"))]
    for prev, nxt, raw in zip(calls, calls[1:], raws):
        assert nxt.prompt.startswith(prev.prompt + raw)  # only grows at the end
        assert "### Tool result" in nxt.prompt[len(prev.prompt):]
    assert len({c.session for c in calls}) == 1 and calls[0].session.startswith("l2:r1")


async def test_constrained_l2_must_call_first_and_names_only_exposed_tools(make_harness):
    from edge_agent.harness.follower import step_schema

    first = step_schema(("check_notebook", "grep_memory"), must_call=True)
    later = step_schema(("check_notebook", "grep_memory"), must_call=False)
    with pytest.raises(ValueError):
        first.model_validate({"answer": "3 May"})  # no answer before a tool has run
    with pytest.raises(ValueError):
        later.model_validate({"call_tool": {"tool": "list_devices", "instruction": "x"}})
    assert later.model_validate({"answer": "3 May"})
    model = role_model(planner=[plan("person_facts")],
                       l2=[call("check_notebook", "Leo's birthday"), answer("3 May")],
                       l3={"check_notebook": [{"query": "Leo birthday"}]}, synth="Leo's birthday is 3 May.")
    await make_harness(model).ask("When is Leo's birthday?", request_id="rc")
    l2_schemas = [json.dumps(c.schema.model_json_schema()) for c in model.calls if c.role == "l2"]
    assert '"answer"' not in l2_schemas[0] and '"answer"' in l2_schemas[1]
    assert all('"enum": ["check_notebook", "grep_memory"]' in s or '"enum": ["grep_memory", "check_notebook"]' in s
               for s in l2_schemas)


async def test_todays_date_alone_is_not_enough_to_answer_a_calendar_question(make_harness):
    model = role_model(planner=[plan("calendar_question")],
                       l2=[call("current_date", "today"), call("queryCalendar", "events on 3 November"), answer("ok")],
                       l3={"queryCalendar": [{"start": "2026-11-03", "end": "2026-11-03"}]})
    await make_harness(model).ask("What's on 3 November?", request_id="rd")
    l2_schemas = [json.dumps(c.schema.model_json_schema()) for c in model.calls if c.role == "l2"]
    assert len(l2_schemas) == 3
    assert '"answer"' not in l2_schemas[0] and '"answer"' not in l2_schemas[1]  # the date is context, not an answer
    assert '"answer"' in l2_schemas[2]  # after the calendar ran


async def test_after_an_empty_lookup_the_next_step_must_try_the_skills_other_lookup_tool(make_harness):
    # person_facts: check_notebook, then grep_memory; the small model used to answer "not found" after the first.
    model = role_model(planner=[plan("person_facts")],
                       l2=[call("check_notebook", "Zed's shoe size"), call("grep_memory", "Zed shoe size"),
                           answer("I could not find that.")],
                       l3={"check_notebook": [{"query": "Zed shoe size"}], "grep_memory": [{"query": "Zed shoe size"}]})
    await make_harness(model).ask("What's Zed's shoe size?", request_id="rf")
    l2_schemas = [c.schema for c in model.calls if c.role == "l2"]
    assert len(l2_schemas) == 3
    second = l2_schemas[1]
    with pytest.raises(ValueError):
        second.model_validate({"answer": "I could not find that."})  # one empty result is not the end
    with pytest.raises(ValueError):
        second.model_validate({"call_tool": {"tool": "check_notebook", "instruction": "again"}})  # already tried
    assert second.model_validate({"call_tool": {"tool": "grep_memory", "instruction": "Zed"}})
    assert l2_schemas[2].model_validate({"answer": "I could not find that."})  # every lookup tried: may answer


async def test_a_lookup_that_found_something_lets_l2_answer(make_harness):
    model = role_model(planner=[plan("person_facts")], l2=[call("check_notebook", "Leo's birthday"), answer("3 May")],
                       l3={"check_notebook": [{"query": "Leo birthday"}]}, synth="Leo's birthday is 3 May.")
    await make_harness(model).ask("When is Leo's birthday?", request_id="rg")
    l2_schemas = [c.schema for c in model.calls if c.role == "l2"]
    assert len(l2_schemas) == 2 and l2_schemas[1].model_validate({"answer": "3 May"})


@pytest.mark.parametrize("question, two", [
    ("Who's my plumber, and can you find his invoice?", True),
    ("What's Leo's partner called and what did he say he's bringing?", True),
    ("When is the party? And where?", True),
    ("Where does Tom teach; also, which book did he lend me?", True),
    ("What did Tom and Leo say about the trip?", False),
    ("When are Mum and Dad arriving?", False),
    ("What's on between Tuesday and Thursday?", False),
    ("Which bills are due next week?", False),
])
def test_asks_two_things(question, two):
    assert asks_two_things(question) is two


async def test_a_question_in_two_parts_tries_the_other_lookup_even_after_a_find(make_harness):
    model = role_model(planner=[plan("person_facts")],
                       l2=[call("check_notebook", "Leo's birthday"), call("grep_memory", "Leo visit"), answer("3 May")],
                       l3={"check_notebook": [{"query": "Leo birthday"}], "grep_memory": [{"query": "Leo visit"}]},
                       synth="Leo's birthday is 3 May.")
    await make_harness(model).ask("When is Leo's birthday, and what did he say about his visit?", request_id="rh")
    l2_schemas = [c.schema for c in model.calls if c.role == "l2"]
    assert len(l2_schemas) == 3
    with pytest.raises(ValueError):
        l2_schemas[1].model_validate({"answer": "3 May"})  # one part found: the other part still needs its call
    assert l2_schemas[1].model_validate({"call_tool": {"tool": "grep_memory", "instruction": "Leo visit"}})
    assert l2_schemas[2].model_validate({"answer": "3 May"})  # both tried: may answer

"""Trace tags and counter order, stored traces, pills before the answer, list_devices as plumbing."""
from __future__ import annotations

import re

import pytest

from harness_kit import RESUME_TEXT, answer, call, pick_holding, plan, role_model
from edge_agent.store.traces import load_traces
from edge_agent.tools.registry import build_tools


def file_question_model(**kw):
    return role_model(
        planner=[plan("find_document")],
        l2=[call("find_file", "my resume"), call("check_notebook", "email address"),
            call("find_file", "my CV document"), answer("Done.")],
        l3={"find_file": lambda i: {"query": "resume curriculum vitae", "devices": ["bogus-device"]},
            "check_notebook": [{"query": "email"}]},
        choose=pick_holding("nadia.ferris@example.org"), **kw)


async def test_role_tags_share_one_counter_and_traces_are_stored(make_harness, db):
    model = file_question_model()
    out = await make_harness(model, constrain_l2=False).ask("What email is on my resume?", request_id="r1")
    roles = [c.role for c in model.calls]
    assert roles == ["planner", "l2", "l3.find_file.1", "l2", "l3.check_notebook.2", "l2", "l3.find_file.3",
                     "l2", "choose"]
    rows = await load_traces(db, "r1")
    assert [r.role for r in rows] == roles
    for row, info in zip(rows, model.calls):
        assert row.prompt == info.prompt  # exactly as rendered for the model
        assert row.usage["prompt_tokens"] > 0 and row.ms >= 0 and row.error is None
    assert rows[0].bound_tools == ["plan"] and rows[1].bound_tools == ["call_tool"]
    assert rows[2].bound_tools == ["find_file"] and rows[2].tool == "find_file"
    assert rows[2].input == "my resume"
    assert "=> ran with" in rows[2].output and "resume.txt" in rows[2].output
    assert "resume.txt on laptop: Email nadia.ferris@example.org." in rows[-1].input  # the choice saw the span
    assert out.answer == "resume.txt on laptop: Email nadia.ferris@example.org."
    assert out.attachment["device"] == "laptop" and out.attachment["name"] == "resume.txt"
    assert out.attachment["path"].endswith("laptop/docs/resume.txt")
    assert out.sources == [{"store": "files", "title": "resume.txt", "device": "laptop",
                            "text": ["Email nadia.ferris@example.org."]}]
    assert RESUME_TEXT not in out.answer  # the file's line, not the whole file


async def test_tracing_off_stores_nothing(make_harness, db):
    await make_harness(file_question_model(), tracing=False).ask("email?", request_id="r2")
    assert await load_traces(db, "r2") == []


async def test_pills_come_before_the_answer_and_before_each_tool_runs(make_harness):
    events: list[tuple[str, str]] = []
    tools = build_tools(enforce_guards=False)
    original = tools["check_notebook"].run

    async def spying_run(args, ctx):
        events.append(("run", "check_notebook"))
        return await original(args, ctx)

    tools["check_notebook"].run = spying_run

    async def on_pill(label):
        events.append(("pill", label))

    out = await make_harness(file_question_model(), tools=tools, constrain_l2=False).ask("email?", request_id="r3",
                                                                                          on_pill=on_pill)
    events.append(("answer", out.answer))
    assert [e for e in events if e[0] == "pill"] == [("pill", "Files"), ("pill", "Notebook"), ("pill", "Files")]
    assert events.index(("pill", "Notebook")) == events.index(("run", "check_notebook")) - 1
    assert events[-1][0] == "answer"
    assert out.pills == ["Files", "Notebook", "Files"]


async def test_list_devices_hidden_from_l2_but_used_by_the_runtime(make_harness):
    seen_devices = []
    tools = build_tools(enforce_guards=False)
    original = tools["find_file"].run

    async def spying_run(args, ctx):
        seen_devices.append(list(args.devices))
        return await original(args, ctx)

    tools["find_file"].run = spying_run
    model = role_model(planner=[plan("find_document")],
                       l2=[call("list_devices", "which devices"), call("find_file", "my resume"), answer("ok")],
                       l3={"find_file": lambda i: {"query": "resume", "devices": ["bogus"]}})
    # Unconstrained names here (as from a runtime without grammars): even asked by name it is refused.
    out = await make_harness(model, tools=tools, constrain_l2=False).ask("Find my resume", request_id="r4",
                                                                          device="Nadia's laptop")
    l2_prompts = [c.prompt for c in model.calls if c.role in ("l2", "planner")]
    assert "list_devices(" not in l2_prompts[1]  # not among the signatures
    assert "No tool is called 'list_devices'" in l2_prompts[2]  # and not callable by L2
    assert seen_devices == [["laptop"]]  # the runtime resolved the device name through list_devices
    # A real run the answer depends on: the asker sees its pill, before the search it scoped.
    assert out.tools_called == ["list_devices", "find_file"] and out.pills[:2] == ["Devices", "Files"]

    model = role_model(planner=[plan("find_document")], l2=[call("find_file", "my resume"), answer("ok")],
                       l3={"find_file": lambda i: {"query": "resume", "devices": ["bogus"]}})
    await make_harness(model, tools=tools).ask("Find my resume", request_id="r5")
    assert seen_devices[-1] == []  # no device named: every device, whatever L3 wrote


async def test_a_calendar_range_the_resolver_knows_is_read_without_l3(make_harness):
    model = role_model(planner=[plan("calendar_question")])
    out = await make_harness(model).ask("What's on next week?", request_id="r6")
    # The date the ranges come from is a real run: its pill first, and it counts as called, once.
    assert out.pills == ["Date", "Calendar"] and out.tools_called == ["current_date", "queryCalendar"]
    assert [c.role for c in model.calls] == ["planner"]
    assert out.answer.startswith("Nothing on your calendar next week (Mon 9 Nov to Sun 15 Nov)")


async def test_calendar_l3_gets_concrete_date_ranges_for_a_day_the_resolver_cannot_work_out(make_harness):
    model = role_model(planner=[plan("calendar_question")],
                       l3={"queryCalendar": [{"start": "2026-12-03", "end": "2026-12-03"}]})
    out = await make_harness(model).ask("What's on 3/12?", request_id="r6")
    assert out.tools_called == ["current_date", "queryCalendar"]
    l3 = next(c for c in model.calls if c.role.startswith("l3.queryCalendar"))
    assert "Today is Monday 2026-11-02." in l3.prompt
    assert re.search(r"next week: 2026-11-09( to |\.\.| - )2026-11-15;", l3.prompt)
    assert "3/12: unknown" in l3.prompt
    assert l3.prompt.rindex("3/12: unknown") > l3.prompt.index("Rules:")  # variable text last
    assert l3.schema is not None and set(l3.schema.model_fields) == {"start", "end"}


async def test_a_date_l2_already_fetched_serves_the_calendar_with_no_second_run(make_harness):
    model = role_model(planner=[plan("calendar_question")],
                       l2=[call("current_date", "today"), call("queryCalendar", "next week"), answer("ok")],
                       l3={"queryCalendar": [{"start": "2026-11-09", "end": "2026-11-15"}]})
    out = await make_harness(model, constrain_l2=False).ask("What's on next week?", request_id="r6b")
    assert out.tools_called == ["current_date", "queryCalendar"] and out.pills == ["Date", "Calendar"]
    assert not [c for c in model.calls if c.role.startswith("l3.queryCalendar")]  # the range was known


async def test_current_date_runs_without_generation_and_answers_deterministically(make_harness, db):
    model = role_model(planner=[plan("date_question")])
    out = await make_harness(model).ask("What is the date next week?", request_id="r7")
    # no l2, no l3, no choice: date_question runs current_date and stops there
    assert [c.role for c in model.calls] == ["planner"]
    assert out.answer == "Today is Monday, 2026-11-02. Next week runs from 2026-11-09 to 2026-11-15."
    rows = await load_traces(db, "r7")
    assert [r.role for r in rows] == ["planner", "l3.current_date.1"]
    assert rows[1].prompt == "" and "2026-11-02" in rows[1].output
    assert out.pills == ["Date"]


@pytest.mark.parametrize("mode", ["harness", "direct"])
async def test_usage_has_the_shape_ops_reads(make_harness, mode):
    if mode == "harness":
        model = file_question_model()
    else:
        model = role_model(l2=[{"tool": "find_file", "args": {"query": "resume"}}, {"answer": "x"}],
                           choose=pick_holding("nadia"))
    out = await make_harness(model, constrain_l2=False).ask("email?", request_id="r8", mode=mode)
    u = out.usage
    assert set(u) == {"roles", "model_calls", "prefill_tokens", "decode_tokens", "forced_tokens", "grammar_failures",
                      "tool_ms", "queue_wait_ms", "wall_ms"}
    assert u["grammar_failures"] == 0
    assert set(u["roles"]) == {"planner", "l2", "l3", "choose", "reply"}
    for r in u["roles"].values():
        assert set(r) == {"calls", "prompt_tokens", "cached_tokens", "generated_tokens", "forced_tokens", "ms"}
    assert u["model_calls"] == len(model.calls)
    assert u["decode_tokens"] > 0 and u["prefill_tokens"] > 0


def test_date_ranges_are_written_in_the_fewest_tokens_and_a_day_once():
    from edge_agent.harness.prompts import date_context

    payload = {"today": "2026-11-02", "weekday": "Monday",
               "ranges": {"today": ["2026-11-02", "2026-11-02"], "next_week": ["2026-11-09", "2026-11-15"]}}
    by_length = date_context(payload, len)
    assert "today: 2026-11-02;" in by_length and "next week: 2026-11-09..2026-11-15." in by_length
    spaces_cost = lambda text: len(text) + 100 * text.count("..")  # noqa: E731  a tokenizer that dislikes ".."
    assert "next week: 2026-11-09 - 2026-11-15." in date_context(payload, spaces_cost)

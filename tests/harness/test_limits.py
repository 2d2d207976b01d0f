"""Bounds checked at every step: L2 steps, wall-clock deadline, generated-token budget, the window."""
from __future__ import annotations

import json
import logging
from dataclasses import replace

from harness_kit import DEFAULT_LIMITS, ELI_BODY, answer, call, pick_holding, plan, role_model
from edge_agent.harness.reply import NOT_FOUND

ELI_BIRTHDAY = "Eli Kemp (brother): Birthday 3 May 1990."
from edge_agent.harness.outcome import EXIT_KINDS


async def test_step_limit_ends_the_loop_and_still_answers(make_harness):
    model = role_model(planner=[plan("person_facts")],
                       l2=[call("check_notebook", "Eli"), call("grep_memory", "Eli"), call("grep_memory", "x")],
                       l3={"check_notebook": [{"query": "Eli"}], "grep_memory": [{"query": "Eli"}]},
                       choose=pick_holding("3 May"))
    out = await make_harness(model, limits=replace(DEFAULT_LIMITS, max_l2_steps=2),
                             constrain_l2=False).ask("Eli birthday?", request_id="r1")
    assert out.exit_kind == "step_limit"
    assert len([c for c in model.calls if c.role == "l2"]) == 2
    assert out.answer == ELI_BIRTHDAY and out.sources[0]["store"] == "notebook"


class FakeClock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


async def test_deadline_is_checked_every_step_and_answer_is_deterministic(make_harness):
    clock = FakeClock()

    def tick(info):
        if info.role.startswith("l3."):
            clock.t += 50.0  # each tool-agent "takes" 50 s

    model = role_model(planner=[plan("person_facts")],
                       l2=[call("check_notebook", "Eli"), call("grep_memory", "Eli"), call("grep_memory", "y")],
                       l3={"check_notebook": [{"query": "Eli"}], "grep_memory": [{"query": "Eli"}]}, on_call=tick)
    h = make_harness(model, limits=replace(DEFAULT_LIMITS, deadline_s=90.0), clock=clock, constrain_l2=False)
    out = await h.ask("Eli?", request_id="r1")
    assert out.exit_kind == "timeout"
    assert "deadline" in out.reason
    assert [c.role for c in model.calls] == ["planner", "l2", "l3.check_notebook.1", "l2", "l3.grep_memory.2"]
    assert out.answer == f"Eli Kemp (brother): {ELI_BODY.split('. ')[0]}."  # the best-ranked line, no choice
    assert out.sources[0]["store"] == "notebook"


async def test_token_budget_stops_before_it_is_exceeded(make_harness):
    model = role_model(planner=[plan("person_facts")],
                       l2=[call("check_notebook", "Eli")] + [call("grep_memory", f"Eli {i}") for i in range(5)],
                       l3={"check_notebook": [{"query": "Eli"}], "grep_memory": lambda i: {"query": "Eli"}})
    budget = 300  # each L2 step reserves 224 tokens: once ~80 are spent, no further step fits
    out = await make_harness(model, limits=replace(DEFAULT_LIMITS, token_budget=budget),
                             constrain_l2=False).ask("Eli?", request_id="r1")
    assert out.exit_kind == "step_limit"
    assert "token budget" in out.reason
    generated = out.usage["decode_tokens"]
    assert generated <= budget
    assert out.sources[0]["store"] == "notebook"
    assert len([c for c in model.calls if c.role == "l2"]) < 6  # stopped before the script ran out


async def test_every_prompt_within_the_window_and_overflow_is_an_error_exit(make_harness):
    model = role_model(planner=[plan("person_facts")], l2=[call("check_notebook", "Eli"), answer("ok")],
                       l3={"check_notebook": [{"query": "Eli"}]})
    out = await make_harness(model).ask("Eli?", request_id="r1")
    assert out.exit_kind == "complete"
    for c in model.calls:
        assert model.count_tokens(c.prompt) + c.max_tokens <= model.n_ctx, c.role

    small = role_model(planner=[plan("person_facts")], n_ctx=4096)
    out = await make_harness(small).ask("why " * 5000, request_id="r2")
    assert out.exit_kind == "error"
    assert "does not fit" in out.error and "window" in out.error
    assert out.answer.startswith("Sorry")


async def test_tool_results_are_fitted_before_entering_l2(make_harness, store):
    await store.notebook.add("fact", "Long", "Eli " + "detail " * 2000, "2026-10-02")
    model = role_model(planner=[plan("person_facts")], l2=[call("check_notebook", "Eli"), answer("ok")],
                       l3={"check_notebook": [{"query": "Eli"}]})
    await make_harness(model, limits=replace(DEFAULT_LIMITS, tool_result_tokens=40),
                       constrain_l2=False).ask("Eli?", request_id="r1")
    second = [c.prompt for c in model.calls if c.role == "l2"][1]
    result = second.split("### Tool result (check_notebook)\n", 1)[1].split("\n\n### Assistant", 1)[0]
    assert model.count_tokens(result) <= 40


async def test_l2_that_never_calls_and_finds_nothing_says_so(make_harness):
    model = role_model(planner=[plan("person_facts")], l2=[answer("Zed is a famous pilot.")])
    out = await make_harness(model, constrain_l2=False).ask("Who is Zed?", request_id="r2")
    assert out.exit_kind == "complete"
    assert out.answer == NOT_FOUND  # L2's own words are never the answer


async def test_exit_kind_always_one_of_the_six_and_a_step_log_line(make_harness, caplog):
    caplog.set_level(logging.INFO, logger="edge_agent.harness.trace")
    model = role_model(planner=[plan("person_facts")], l2=[call("check_notebook", "Eli"), answer("ok")],
                       l3={"check_notebook": [{"query": "Eli"}]})
    out = await make_harness(model, constrain_l2=False).ask("Eli?", request_id="r9")
    assert out.exit_kind in EXIT_KINDS
    lines = [json.loads(r.getMessage().split(" ", 1)[1]) for r in caplog.records
             if r.getMessage().startswith("harness.step ")]
    l2_lines = [x for x in lines if x["role"] == "l2"]
    assert [x["result"] for x in l2_lines] == ["ok", "answer"]
    assert l2_lines[0]["tool"] == "check_notebook" and l2_lines[0]["request_id"] == "r9"
    assert set(l2_lines[0]) == {"request_id", "step", "role", "tool", "result", "latency_ms", "tokens_in",
                                "tokens_out"}
    assert l2_lines[0]["tokens_in"] > 0 and l2_lines[0]["tokens_out"] > 0
    assert {x["role"] for x in lines} >= {"planner", "l2", "choose"}


async def test_a_malformed_l2_step_is_fed_back_and_the_loop_goes_on(make_harness, db):
    from edge_agent.harness.follower import MALFORMED_TEXT
    from edge_agent.store.traces import load_traces

    model = role_model(planner=[plan("person_facts")],
                       l2=['{"answer": "cut off', call("check_notebook", "Eli"), answer("ok")],
                       l3={"check_notebook": [{"query": "Eli"}]})
    out = await make_harness(model, constrain_l2=False).ask("Eli?", request_id="m1")
    assert out.exit_kind == "complete" and out.sources[0]["store"] == "notebook"
    second = [c.prompt for c in model.calls if c.role == "l2"][1]
    assert MALFORMED_TEXT in second
    rows = await load_traces(db, "m1")
    assert rows[1].role == "l2" and rows[1].error.startswith("ValidationError")


async def test_a_generation_that_fails_validation_still_counts_its_tokens(make_harness):
    from edge_agent.llm.base import Usage
    from edge_agent.llm.llamacpp import StructuredOutputError

    model = role_model(planner=[plan("person_facts")], l2=[call("check_notebook", "Eli"), answer("ok")],
                       l3={"check_notebook": [{"query": "Eli"}]})
    original = model.generate_structured
    failed = {"done": False}

    async def flaky(prompt, schema, **kw):
        if kw.get("role") == "planner" and not failed["done"]:
            failed["done"] = True
            raise StructuredOutputError('{"skill": "per', "length", "cut off", Usage(300, 0, 40))
        return await original(prompt, schema, **kw)

    model.generate_structured = flaky
    out = await make_harness(model).ask("When is Eli's birthday?", request_id="fail1")
    assert out.exit_kind == "error" and out.usage["roles"]["planner"]["generated_tokens"] >= 40
    assert out.usage["grammar_failures"] == 1  # counted, so eval can report it (summary "grammar_failures")

"""End to end on the real bundled model (Gemma 3 270M through llama-cpp-python).

Whatever the model chooses, every question must end in an exit kind without an exception, every
L2 step must be a well-formed call or answer, and no prompt may pass the window. One question is
driven along a fixed route (a grammar admitting only the planned output, decoded by the real
model) so a tool certainly runs, its pill is emitted and the chosen line composes the answer.
"""
from __future__ import annotations

import pytest

from harness_kit import NOW, seed
from edge_agent.app import build_assistant
from edge_agent.config import load_settings
from edge_agent.eval.bench_harness import GuidedModel
from edge_agent.eval.oracle import candidate_lines
from edge_agent.harness.follower import L2_STEP_MAX_TOKENS, L2Step
from edge_agent.harness.outcome import EXIT_KINDS
from edge_agent.store.api import Store
from edge_agent.store.traces import load_traces

pytestmark = pytest.mark.real_model

QUESTIONS = ["When is Eli's birthday?", "What is on my calendar next week?",
             "Remember that my bike lock code is 4417"]


@pytest.fixture
async def settings(tmp_path):
    s = load_settings(None, {"data_dir": str(tmp_path / "data"), "harness.max_l2_steps": 2,
                             "harness.answer_tokens": 64, "harness.deadline_s": 120,
                             "harness.token_budget": 700}, environ={})
    async with Store.open(s.db_path) as store:
        await seed(store, tmp_path / "files")
    return s


def check_records(rows, model):
    l2 = [r for r in rows if r.role == "l2"]
    for r in l2:
        assert r.error is None, r.error
        L2Step.model_validate_json(r.output)  # well-formed call_tool or answer
    for r in rows:
        if r.prompt:
            assert model.count_tokens(r.prompt) + L2_STEP_MAX_TOKENS <= model.n_ctx, r.role
    return l2


async def test_free_questions_end_in_an_exit_kind(any_real_model, settings):
    async with build_assistant(settings, model=any_real_model, now=NOW) as assistant:
        for i, question in enumerate(QUESTIONS):
            pills: list[str] = []
            out = await assistant.ask(question, request_id=f"real{i}", on_pill=pills.append)
            assert out.exit_kind in EXIT_KINDS and out.exit_kind != "error", (question, out.error)
            assert out.answer.strip()
            assert pills == out.pills
            assert len(set(pills)) == len(pills) <= len(out.tools_called)  # a store's pill shows once
            if out.exit_kind == "needs_confirmation":
                assert out.pending is not None and out.pending.preview in out.answer
            rows = await load_traces(assistant.harness.db, f"real{i}")
            assert rows[0].role == "planner"
            check_records(rows, any_real_model)


class Route:
    """A fixed route: plan find_document, one find_file call, then the line with the email."""

    def respond(self, info):
        if info.role == "planner":
            return {"skill": "find_document"}
        if info.role.startswith("l3.find_file"):
            return {"query": "resume", "devices": []}
        if info.role == "choose":
            lines = candidate_lines(info.prompt)
            return {"lines": [next(n for n, line in lines.items() if "nadia.ferris@" in line)]}
        raise AssertionError(info.role)


async def test_routed_question_emits_pills_and_composes_the_chosen_line(any_real_model, settings):
    pills: list[str] = []
    async with build_assistant(settings, model=GuidedModel(any_real_model, Route()), now=NOW) as assistant:
        out = await assistant.ask("What email is on my resume?", request_id="route1", on_pill=pills.append)
        rows = await load_traces(assistant.harness.db, "route1")
    assert out.exit_kind == "complete"
    # The plan searched the files; then every local store with the question's own words
    # (retrieval.py), no model call, each store's pill once.
    assert pills[0] == "Files" and set(pills) == {"Files", "Notebook", "Memory", "Calendar"} and len(set(pills)) == len(pills)
    assert out.tools_called[0] == "find_file" and out.by_question == out.tools_called[1:]
    assert [r.role for r in rows] == ["planner", "l3.find_file.1", "choose"]
    assert out.answer == "resume.txt on laptop: Email nadia.ferris@example.org."
    assert out.attachment["name"] == "resume.txt" and out.sources[0]["title"] == "resume.txt"
    check_records(rows, any_real_model)


async def test_direct_mode_on_the_real_model(any_real_model, settings):
    async with build_assistant(settings, model=any_real_model, now=NOW) as assistant:
        out = await assistant.ask("When is Eli's birthday?", request_id="direct1", mode="direct")
        rows = await load_traces(assistant.harness.db, "direct1")
    assert out.exit_kind in EXIT_KINDS and out.exit_kind != "error", out.error
    for r in rows:
        if r.prompt:
            assert any_real_model.count_tokens(r.prompt) < any_real_model.n_ctx


def test_every_role_prompt_fits_with_the_real_tokenizer(any_real_model):
    from edge_agent.harness.skills import load_skills
    from edge_agent.harness.startup import check_prompts_fit
    from edge_agent.harness.toolbox import Toolbox
    from edge_agent.harness.turn import Limits
    from edge_agent.tools.base import ToolContext
    from edge_agent.tools.registry import build_tools

    tools = build_tools(enforce_guards=False)
    sizes = check_prompts_fit(any_real_model, load_skills(known_tools=tools), Toolbox(tools, ToolContext(None, None)),
                              Limits(6, 120, 2000, 240, 200))
    # Worst cases (a ~200-token question) leave most of the window for the work itself.
    assert max(sizes.values()) < any_real_model.n_ctx // 4, sizes


def test_the_choice_grammar_compiles_on_the_real_runtime(any_real_model):
    from edge_agent.harness.reply import choice_schema

    grammar = any_real_model.grammar_for(choice_schema(6))
    assert "lines" in grammar._grammar

"""Harness and direct modes on the bundled real model: every question ends with an exit kind.

No quality threshold: the tiny base model is weak. The deadline and the generated-token budget
are shortened so the test stays short (a generation in flight is not cut by the deadline, the
token budget bounds it); a timeout or step_limit is an exit kind like any other.
"""
from __future__ import annotations

import pytest

from edge_agent.config import HarnessSettings
from edge_agent.eval.questions import load_questions
from edge_agent.eval.report import write_report
from edge_agent.eval.runner import run_mode
from edge_agent.harness.outcome import EXIT_KINDS
from edge_agent.paths import WORLD_DIR

LIMIT = 2  # questions a mode, as `edge-agent eval --limit 2`
TEST_DEADLINE_S = 10.0  # per question: bounds the test's time on a 2-core machine
TEST_TOKEN_BUDGET = 700  # generated tokens a question: room for one full direct step or plan + L2 step


@pytest.mark.real_model
async def test_harness_and_direct_finish_with_a_report(real_model, world_settings, world_clock_fixed, tmp_path):
    limits = HarnessSettings(deadline_s=TEST_DEADLINE_S, token_budget=TEST_TOKEN_BUDGET)
    settings = world_settings.model_copy(update={"harness": limits})
    questions = load_questions(WORLD_DIR / "questions.jsonl").limit(LIMIT)
    runs = []
    for mode in ("harness", "direct"):
        run = await run_mode(mode, settings, questions, world_clock_fixed, model=real_model, run_id="real",
                             progress=lambda _: None)
        assert [r.id for r in run.results] == [q.id for q in questions]
        for r in run.results:
            assert r.exit_kind in EXIT_KINDS, (mode, r.id, r.exit_kind)
            assert set(r.score) >= {"tool_selection", "arguments", "interpretation", "termination", "end_to_end"}
            assert r.latency_ms > 0 and r.peak_rss_mb > 0
            if r.exit_kind == "error":  # a failure is reported with its reason, never a crash
                assert r.error and r.answer, (mode, r.id, r.error)
        assert any(r.model_calls > 0 for r in run.results), mode  # the model was really asked
        assert run.notebook_delta == 0
        runs.append(run)
    paths = write_report(tmp_path, [r.summary() for r in runs], [x.as_dict() for r in runs for x in r.results])
    md = paths["report"].read_text(encoding="utf-8")
    assert "| metric | harness | direct |" in md and "projection" in md
    assert paths["chart"].stat().st_size > 10_000

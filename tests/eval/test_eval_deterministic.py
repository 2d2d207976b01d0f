"""Greedy runs are deterministic: the same questions on the same commit and machine get the same
answers, cold or with warm caches, in a fresh data dir or after other questions."""
from __future__ import annotations

import pytest

from edge_agent.eval.questions import load_questions
from edge_agent.eval.runner import run_mode
from edge_agent.paths import WORLD_DIR

pytestmark = pytest.mark.real_model

IDS = ("q002", "q013", "q029", "q036", "q043", "q065")  # a person, a file, a calendar day, recall, two parts


def _load(path, head_dir):
    from edge_agent.llm.llamacpp import LlamaCppModel

    return LlamaCppModel(path, n_ctx=4096, n_threads=2, head_cache_dir=head_dir, merged_adapter="shipped")


async def test_two_runs_answer_alike_cold_and_warm(shipped_model_path, world_settings, world_clock_fixed, tmp_path):
    questions = [q for q in load_questions(WORLD_DIR / "questions.jsonl").questions if q.id in IDS]
    assert len(questions) == len(IDS)

    async def answers(model, order):
        run = await run_mode("harness", world_settings, order, world_clock_fixed, model=model, run_id="det",
                             progress=lambda _: None)
        return {r.id: (r.answer, r.exit_kind, tuple(r.tools_called)) for r in run.results}

    cold = _load(shipped_model_path, tmp_path / "heads")  # nothing on disk: every head computed in the run
    try:
        first = await answers(cold, questions)
        again = await answers(cold, questions)  # the same model, its heads and sessions warm
    finally:
        cold.close()
    warm = _load(shipped_model_path, tmp_path / "heads")  # a restart: the heads restored from disk
    try:
        reordered = await answers(warm, list(reversed(questions)))  # other questions before each one
    finally:
        warm.close()
    assert again == first
    assert reordered == first

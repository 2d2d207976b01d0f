"""The bench's measuring helpers: prompt growth per tool, resume accounting, forced routes."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness_kit import role_model
from edge_agent.eval.bench_harness import pick_questions, prompt_sizes, question_cost, resumes
from edge_agent.eval.oracle import as_decoded
from edge_agent.harness.synthetic import DOMAINS, synthetic_tools
from edge_agent.store.traces import TraceRow


def test_prompt_growth_is_flat_in_harness_mode(tmp_path):
    out = prompt_sizes(role_model(), tmp_path)
    sizes = out["l2_prompt_tokens"]
    assert sizes["harness"]["5"] < sizes["harness"]["50"] < sizes["direct"]["50"]
    assert out["l2_tokens_per_added_tool"]["harness"] <= 40
    assert out["l2_tokens_per_added_tool"]["direct"] > 4 * out["l2_tokens_per_added_tool"]["harness"]


def test_synthetic_tools_load_through_real_manifests(tmp_path):
    tools = synthetic_tools(tmp_path, len(DOMAINS))
    assert len(tools) == 45 and len({t.manifest.signature for t in tools.values()}) == 45
    assert all((tmp_path / f"{name}.toml").exists() for name in tools)
    with pytest.raises(ValueError):
        synthetic_tools(tmp_path, 46)


def _row(seq, role, prompt_tokens=0, cached=0, generated=0):
    usage = {"prompt_tokens": prompt_tokens, "cached_tokens": cached, "generated_tokens": generated} \
        if prompt_tokens else {}
    return TraceRow("r", seq, role, None, "p", [], "", "", usage, 0.0, 0.0)


def test_resumes_count_only_l2_steps_after_a_dispatch():
    rows = [_row(1, "planner", 300, 0, 20), _row(2, "l2", 400, 5, 30), _row(3, "l3.find_file.1", 500, 4, 20),
            _row(4, "l2", 520, 420, 10), _row(5, "l2", 560, 540, 10),  # nudge: no L3 in between
            _row(6, "l3.current_date.2"), _row(7, "l2", 600, 560, 10)]  # no-generation dispatch: not a resume
    assert resumes(rows) == [{"prompt": 520, "cached": 420, "reprefill": 100, "new": 90}]


def test_steered_values_are_written_as_the_compact_grammar_writes_them():
    from edge_agent.harness.follower import L2Step

    schema = L2Step
    value = {"call_tool": {"instruction": "my résumé", "tool": "find_file"}}  # keys out of schema order
    assert as_decoded(schema, value) == '{"call_tool":{"tool":"find_file","instruction":"my résumé"}}'


def test_a_question_is_priced_at_pi_rates_with_forced_tokens_at_the_prefill_rate():
    cost = question_cost({"prefill_tokens": 267, "decode_tokens": 54, "forced_tokens": 10, "model_calls": 4})
    assert cost["pi5_s"] == round((267 + 10) / 26.7 + 44 / 4.42, 2)


def test_pick_questions_spreads_over_categories():
    class Q:
        def __init__(self, i, cat):
            self.id, self.category = i, cat

    qs = [Q(1, "person"), Q(2, "person"), Q(3, "person"), Q(4, "date"), Q(5, "file")]
    assert [q.id for q in pick_questions(qs, 4)] == [1, 4, 5, 2]
    assert [q.id for q in pick_questions(qs, per_category=1)] == [1, 4, 5]
    assert [q.id for q in pick_questions(qs)] == [1, 4, 5, 2, 3]

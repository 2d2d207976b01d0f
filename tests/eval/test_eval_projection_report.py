"""The Pi projection's arithmetic, the summary, and the report files."""
from __future__ import annotations

import json

import pytest

from edge_agent.eval.projection import PI5_DECODE_TOK_S, PI5_PREFILL_TOK_S, p50_p95, project_seconds
from edge_agent.eval.report import load_run, render_markdown, write_report
from edge_agent.eval.runner import QuestionResult
from edge_agent.eval.summary import summarize


def test_projection_prices_tokens_at_the_published_pi5_rates():
    assert (PI5_PREFILL_TOK_S, PI5_DECODE_TOK_S) == (26.7, 4.42)
    assert project_seconds(267, 0) == pytest.approx(10.0)
    assert project_seconds(0, 442) == pytest.approx(100.0)
    assert project_seconds(534, 44) == pytest.approx(20.0 + 44 / 4.42)
    assert project_seconds(0, 0) == 0.0
    assert project_seconds(100, 50, 20) == pytest.approx(120 / 26.7 + 30 / 4.42)  # forced tokens at the pp rate
    for bad in ((-1, 3), (0, 3, 4)):
        with pytest.raises(ValueError):
            project_seconds(*bad)


def test_p50_p95_use_the_one_nearest_rank_percentile():
    assert p50_p95(range(1, 101)) == (50, 95)
    assert p50_p95([]) == (0.0, 0.0)


def _result(mode, qid, category, e2e, latency_ms, prefill, decode, **score):
    points = {"tool_selection": True, "arguments": True, "interpretation": True, "termination": True, **score}
    points["end_to_end"] = e2e and all(v for k, v in points.items() if k != "tool_selection_by_plan")
    points["misses"] = {} if points["end_to_end"] else {"interpretation": "answer lacks ['x']"}
    return QuestionResult(mode=mode, id=qid, category=category, question=f"{qid}?", request_id=f"r-{qid}",
                          exit_kind="complete" if e2e else "step_limit", answer=f"answer | {qid}", sources=[],
                          attachment=None,
                          tools_called=["check_notebook"], plan="person_facts", calls=[], score=points,
                          latency_ms=latency_ms,
                          roles={"planner": {"calls": 1, "prompt_tokens": 300, "cached_tokens": 280,
                                             "generated_tokens": 6, "forced_tokens": 4}},
                          model_calls=3, prefill_tokens=prefill, decode_tokens=decode, tool_ms=1.0,
                          pi_projected_s=round(project_seconds(prefill, decode), 2), rss_mb=400.0,
                          peak_rss_mb=410.0 + latency_ms / 1000)


def _runs():
    harness = [_result("harness", "a", "person", True, 2000, 1335, 44, tool_selection_by_plan=False),
               _result("harness", "b", "date", False, 4000, 2670, 88, interpretation=False, tool_selection_by_plan=True)]
    direct = [_result("direct", "a", "person", False, 1000, 2000, 100, tool_selection=False),
              _result("direct", "b", "date", False, 3000, 2000, 100, termination=False)]
    return harness, direct


def test_summary_overall_metrics():
    harness, _ = _runs()
    s = summarize("harness", "gemma", harness, wall_s=6.0, notebook_delta=0)
    assert s["questions"] == 2 and s["end_to_end"] == 0.5 and s["interpretation"] == 0.5 and s["arguments"] == 1.0
    assert s["latency_ms_p50"] == 2000.0 and s["latency_ms_p95"] == 4000.0  # nearest rank: observed values
    assert s["pi_projected_s_p50"] == pytest.approx(round(1335 / 26.7 + 44 / 4.42, 1), abs=0.06)
    assert s["prefill_tokens_mean"] == 2002.5 and s["decode_tokens_mean"] == 66.0 and s["model_calls_mean"] == 3.0
    assert s["exit_kinds"] == {"complete": 1, "step_limit": 1} and s["errors"] == 0 and s["grammar_failures"] == 0
    harness[1].grammar_failures, harness[1].exit_kind = 2, "error"
    again = summarize("harness", "gemma", harness)
    assert again["errors"] == 1 and again["grammar_failures"] == 2
    assert s["tool_selection"] == 1.0 and s["tool_selection_by_plan"] == 0.5  # the question's words ran one
    assert s["by_category"] == {"date": {"questions": 1, "end_to_end": 0.0},
                                "person": {"questions": 1, "end_to_end": 1.0}}
    assert s["peak_rss_mb"] == 414.0
    assert s["by_role"] == {"planner": {"calls": 1.0, "prompt_tokens": 300.0, "cached_tokens": 280.0,
                                        "generated_tokens": 6.0, "forced_tokens": 4.0,
                                        "pi_projected_s": round((20 + 4) / 26.7 + 2 / 4.42, 2)}}
    assert "PROJECTION" in s["pi_projection"] and "davidscarth/edge-ai-study" in s["pi_projection"]


def test_report_files_compare_the_modes(tmp_path):
    harness, direct = _runs()
    summaries = [summarize("harness", "gemma", harness), summarize("direct", "gemma", direct)]
    results = [r.as_dict() for r in harness + direct]
    paths = write_report(tmp_path, summaries, results, questions_path="q.jsonl")
    md = paths["report"].read_text(encoding="utf-8")
    assert "| metric | harness | direct |" in md
    assert "| **end to end** | 0.50 | 0.00 |" in md
    assert "| tool selection by the plan alone (not by the question's words) | 0.50 | 0.00 |" in md
    assert "projection" in md.lower() and "26.7 tok/s" in md and "4.42 tok/s" in md
    assert "![five failure points and latency by mode](chart.png)" in md
    assert "| harness | b | date | step_limit | interpretation |" in md
    assert "answer \\| b" in md  # a pipe inside a cell is escaped
    png = paths["chart"].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    summary = json.loads(paths["summary"].read_text(encoding="utf-8"))
    assert [m["mode"] for m in summary["modes"]] == ["harness", "direct"]


def test_an_earlier_run_can_be_compared(tmp_path):
    harness, direct = _runs()
    write_report(tmp_path / "one", [summarize("harness", "gemma", harness)], [])
    (tmp_path / "one" / "results.jsonl").write_text(
        "".join(json.dumps(r.as_dict()) + "\n" for r in harness), encoding="utf-8")
    summaries, results = load_run(tmp_path / "one")
    assert [s["mode"] for s in summaries] == ["harness"] and [r["id"] for r in results] == ["a", "b"]
    summaries[0]["label"] = "harness (one)"
    md = render_markdown(summaries + [summarize("direct", "gemma", direct)], results)
    assert "| metric | harness (one) | direct |" in md
    with pytest.raises(FileNotFoundError, match="not an eval out dir"):
        load_run(tmp_path / "nothing")


def test_no_misses_says_so():
    harness, _ = _runs()
    md = render_markdown([summarize("harness", "m", harness[:1])], [harness[0].as_dict()])
    assert "None: every question was right end to end." in md

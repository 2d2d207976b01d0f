"""Metrics: per-request figures, the sliding latency window, and the process/board snapshot."""
from __future__ import annotations

import json

import pytest

from edge_agent.harness.outcome import Outcome
from edge_agent.ops.metrics import Metrics, percentile

SNAPSHOT_KEYS = {"rss_mb", "mem_available_mb", "cpu_load_1m", "soc_temp_c", "queue_depth", "requests",
                 "latency_p50_ms", "latency_p95_ms", "last_request", "uptime_s"}


def outcome(usage: dict | None = None, rid: str = "r1") -> Outcome:
    return Outcome(request_id=rid, exit_kind="complete", answer="ok", usage=usage or {})


def full_usage() -> dict:
    return {
        "roles": {
            "planner": {"calls": 1, "prompt_tokens": 300, "cached_tokens": 200, "generated_tokens": 20, "ms": 400.0},
            "l2": {"calls": 2, "prompt_tokens": 900, "cached_tokens": 600, "generated_tokens": 40, "ms": 900.0},
            "l3": {"calls": 1, "prompt_tokens": 500, "cached_tokens": 0, "generated_tokens": 30, "ms": 500.0},
            "choose": {"calls": 1, "prompt_tokens": 400, "cached_tokens": 100, "generated_tokens": 10, "ms": 200.0},
        },
        "model_calls": 5, "prefill_tokens": 1200, "decode_tokens": 100, "tool_ms": 35.5,
        "queue_wait_ms": 12.0, "wall_ms": 2100.0,
    }


def test_percentile_is_nearest_rank():
    assert percentile([], 50) is None
    assert percentile([7.0], 95) == 7.0
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 95) == 95.0
    assert percentile([30.0, 10.0, 20.0], 50) == 20.0


def test_snapshot_before_any_request_has_real_readings_and_no_latency():
    snap = Metrics().snapshot(queue_depth=2)
    assert SNAPSHOT_KEYS <= set(snap)
    assert snap["latency_p50_ms"] is None and snap["latency_p95_ms"] is None
    assert snap["last_request"] is None and snap["requests"] == 0
    assert snap["queue_depth"] == 2
    assert snap["rss_mb"] > 10  # a Python process with pydantic loaded
    assert snap["mem_available_mb"] > 0
    json.dumps(snap)


def test_record_request_reports_roles_tools_tokens_and_speed():
    m = Metrics()
    m.record_request(outcome(full_usage()), wall_ms=2100.0, queue_wait_ms=12.0)
    last = m.snapshot(queue_depth=0)["last_request"]
    assert last["role_ms"] == {"planner": 400.0, "l2": 900.0, "l3": 500.0, "choose": 200.0, "reply": 0.0}
    assert last["queue_wait_ms"] == 12.0 and last["tool_ms"] == 35.5
    assert last["tokens"] == 100 and last["prompt_tokens"] == 2100 and last["cached_tokens"] == 900
    assert last["tokens_per_s"] == pytest.approx(100 / 2.0)
    assert last["model_calls"] == 5
    assert not {"request_id", "exit_kind", "finished_at"} & set(last)  # retained, read by every device


@pytest.mark.parametrize("usage", [
    {},
    {"roles": None},
    {"roles": ["planner"]},
    {"roles": {"l2": {"ms": "fast", "generated_tokens": None}}, "tool_ms": "x"},
    {"roles": {"l3": {"ms": float("nan"), "generated_tokens": 5}}},
    {"decode_tokens": 12},
])
def test_missing_or_malformed_usage_counts_as_zero(usage):
    m = Metrics()
    m.record_request(outcome(usage), wall_ms=50.0, queue_wait_ms=0.0)
    snap = m.snapshot(queue_depth=0)
    last = snap["last_request"]
    assert snap["requests"] == 1 and snap["latency_p50_ms"] == 50.0
    assert set(last["role_ms"]) == {"planner", "l2", "l3", "choose", "reply"}
    assert last["tokens_per_s"] is None  # no model time recorded
    assert last["tokens"] == (usage.get("decode_tokens") or (5 if "l3" in (usage.get("roles") or {}) else 0))
    json.dumps(snap)


def test_latency_window_slides():
    m = Metrics(window=3)
    for i, wall in enumerate([100.0, 200.0, 300.0, 1000.0, 2000.0]):
        m.record_request(outcome(rid=f"r{i}"), wall_ms=wall, queue_wait_ms=0.0)
    snap = m.snapshot(queue_depth=0)
    assert snap["requests"] == 5 and snap["latency_window"] == 3
    assert snap["latency_p50_ms"] == 1000.0 and snap["latency_p95_ms"] == 2000.0


def test_rejections_are_counted():
    m = Metrics()
    m.record_rejection("low_memory")
    m.record_rejection("low_memory")
    assert m.snapshot(queue_depth=0)["rejected"] == {"low_memory": 2}


def test_window_must_be_positive():
    with pytest.raises(ValueError, match="window"):
        Metrics(window=0)

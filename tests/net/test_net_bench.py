"""`edge-agent bench mqtt`: its execution judge, and a small fault run against real processes."""
from __future__ import annotations

import json
import subprocess
import sys

from edge_agent.eval.bench_mqtt import count_executions


def _e(event: str, rid: str, ts: float, pid: int = 1) -> dict:
    return {"event": event, "request_id": rid, "base": rid.split(".r")[0], "ts": ts, "pid": pid}


def test_judge_tells_reruns_after_a_crash_from_duplicates():
    crash_rerun = [_e("start", "a", 1), _e("done", "a", 2), _e("start", "a.r2", 5, pid=2), _e("done", "a.r2", 6, 2)]
    # The first run's result died with the agent; the asker had no answer until t=7: a rerun.
    assert count_executions(crash_rerun, {"a": 7}) == {"duplicates_executed": 0, "reruns_after_crash": 1,
                                                       "executed": 1}
    # The asker had its answer at t=3; running it again at t=5 is a duplicate.
    assert count_executions(crash_rerun, {"a": 3})["duplicates_executed"] == 1
    concurrent = [_e("start", "b", 1), _e("start", "b.r2", 1.5), _e("done", "b", 2), _e("done", "b.r2", 2.5)]
    assert count_executions(concurrent, {"b": 9})["duplicates_executed"] == 1


def test_small_fault_run_loses_nothing_and_runs_nothing_twice():
    proc = subprocess.run([sys.executable, "-m", "edge_agent.cli", "bench", "mqtt", "--json", "--requests", "10",
                           "--fault-requests", "30"], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["fault_requests"] == 30 and result["requests_answered"] == 30
    assert result["requests_lost"] == 0 and result["duplicates_executed"] == 0
    assert result["executions_missing"] == 0 and result["client_errors"] == 0
    assert result["answers_undelivered"] == 0
    assert "broker SIGKILL" in result["faults"] and "agent SIGKILL" in result["faults"]
    assert result["roundtrip_answers"] == 10 and 0 < result["roundtrip_p50_ms"] <= result["roundtrip_p99_ms"]

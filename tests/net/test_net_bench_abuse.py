"""`edge-agent bench abuse`: every case of issues 10 and 29 against a real broker and a running service."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from edge_agent.eval.bench_abuse import CASES
from edge_agent.eval.bench_abuse import probe_verdict

MODEL_FREE = [name for name in CASES if name != "cancel_under_load"]


def _bench(*args: str, env: dict | None = None) -> dict:
    proc = subprocess.run([sys.executable, "-m", "edge_agent.cli", "bench", "abuse", "--json", *args],
                          capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_model_free_case_holds():
    result = _bench("--skip-real-model")
    assert result["cases"] == len(MODEL_FREE) and result["skipped"] == ["cancel_under_load"]
    assert result["failed"] == [], result["details"]
    assert result["held"] == len(MODEL_FREE)


@pytest.mark.real_model
def test_cancellation_under_load_with_the_real_model(tiny_model_path):
    result = _bench("--only", "cancel_under_load", env=dict(os.environ, EDGE_AGENT_MODEL=str(tiny_model_path)))
    assert result == {**result, "cases": 1, "held": 1, "failed": []}, result["details"]


def test_the_probe_verdict_reads_a_dead_child_as_failed():
    dead = subprocess.CompletedProcess([], -6, "", "GGML_ASSERT(i1 >= 0 && i1 < ne1) failed\n")
    assert probe_verdict(dead) == (False, "the process died (exit -6): GGML_ASSERT(i1 >= 0 && i1 < ne1) failed")
    overlap = subprocess.CompletedProcess([], 0, json.dumps(
        {"cancelled": True, "exit_kinds": ["complete", "timeout"], "max_concurrent_decodes": 2}), "")
    assert probe_verdict(overlap)[0] is False
    unmeasured = subprocess.CompletedProcess([], 0, json.dumps(
        {"cancelled": True, "exit_kinds": ["complete", "complete"], "max_concurrent_decodes": 0}), "")
    assert probe_verdict(unmeasured)[0] is False
    clean = subprocess.CompletedProcess([], 0, json.dumps(
        {"cancelled": True, "exit_kinds": ["complete", "timeout"], "max_concurrent_decodes": 1}), "")
    assert probe_verdict(clean)[0] is True

"""`edge-agent bench phone --json` runs end to end and reports what the issue asks for."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from edge_agent.net.webpage import page_bytes


@pytest.mark.broker
def test_bench_phone_prints_timings_and_page_bytes():
    out = subprocess.run([sys.executable, "-m", "edge_agent.cli", "bench", "phone", "--json", "--questions", "3"],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["page_bytes"] == page_bytes()["total"]
    assert result["questions"] == 3
    for key in ("click_to_first_pill_p50_ms", "click_to_answer_p50_ms", "python_client_answer_p50_ms"):
        assert result[key] > 0, key
    assert result["click_to_first_pill_p50_ms"] <= result["click_to_answer_p50_ms"]
    assert isinstance(result["page_bytes_within_goal"], bool) and isinstance(result["click_to_answer_within_goal"], bool)

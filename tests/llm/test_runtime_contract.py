"""The harness reaches the runtime only through llm/base.py, and a deadline becomes exit kind timeout."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from edge_agent.config import HarnessSettings
from edge_agent.harness.turn import LimitReached, Limits, TurnContext
from edge_agent.llm.base import ChatMessage, GenerationTimeout
from edge_agent.llm.doubles import ScriptedModel


def test_importing_the_harness_loads_neither_llama_cpp_nor_numpy():
    code = ("import sys, edge_agent.harness, edge_agent.harness.turn, edge_agent.harness.runner\n"
            "bad = sorted(m for m in ('llama_cpp', 'numpy') if m in sys.modules)\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


async def test_the_turn_passes_its_deadline_and_a_timeout_ends_it_with_a_trace_row():
    model = ScriptedModel(script=["never reached"], delay_s=5.0)
    limits = Limits.from_settings(HarnessSettings(deadline_s=0.3))
    turn = TurnContext("r1", "q?", model, limits)
    with pytest.raises(LimitReached) as info:
        await turn.text("synth", [ChatMessage("user", "q?")], max_tokens=20, input="q?")
    assert info.value.kind == "timeout"
    assert isinstance(info.value.__cause__, GenerationTimeout)
    deadline = model.calls[0].deadline
    assert deadline is not None and 0 < deadline - turn.started <= 0.3 + 0.05
    row = turn.tracer.records[-1]
    assert row.role == "synth" and "GenerationTimeout" in (row.error or "")

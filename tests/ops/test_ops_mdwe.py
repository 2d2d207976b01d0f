"""MemoryDenyWriteExecute=yes does not break llama.cpp: the real model runs under the same filter.

systemd 252 (bookworm) enforces it with a seccomp filter; newer systemd with the kernel's
PR_SET_MDWE. Both are applied in a child process that then loads the bundled model, generates
free text and grammar-constrained JSON (ctypes callbacks included) and saves/loads its state.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from edge_agent.modelfile.sizing import estimate

PROBE = Path(__file__).with_name("mdwe_probe.py")


@pytest.mark.real_model
@pytest.mark.parametrize("mode", ["seccomp", "prctl"])
def test_real_model_runs_under_memory_deny_write_execute(tiny_model_path, mode):
    proc = subprocess.run([sys.executable, str(PROBE), str(tiny_model_path), mode],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["wx_refused"] is True  # the filter is really in force: a W+X mapping was refused
    assert out["text"].strip()
    assert isinstance(out["structured"]["answer"], str)
    # The sizing estimate behind MemoryHigh/MemoryMax covers what the model really used.
    need = estimate(tiny_model_path, n_ctx=4096, n_batch=256, keep_sessions=True)
    assert out["max_rss_mb"] < need.total_mb

"""Helpers shared by the model tests (the conftest holds only fixtures)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
TEST_REPO, TEST_FILE = "test/tiny", "model.gguf"


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """`edge-agent ARGS` in a subprocess, importing this worktree's code."""
    full = dict(env if env is not None else os.environ)
    full["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + full.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "edge_agent.cli", *args], capture_output=True, text=True,
                          env=full, timeout=timeout, cwd=REPO_ROOT)

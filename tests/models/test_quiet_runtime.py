"""llama.cpp's own lines reach Python logging at debug level, never the user's terminal."""
from __future__ import annotations

import logging

import pytest
from modelkit import run_cli

pytestmark = pytest.mark.real_model

NOW = "2026-11-18T09:30:00"  # the sample world's clock


def test_ask_local_prints_nothing_from_llama_cpp(shipped_model_path, tmp_path):
    data = tmp_path / "data"
    assert run_cli("--data-dir", str(data), "world", "load").returncode == 0
    proc = run_cli("--data-dir", str(data), "--model", str(shipped_model_path), "ask", "--local", "--now", NOW,
                   "dentist when")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip()
    # stderr holds the pills ("[Notebook]") and the closing "[complete; request ...]" line, nothing else
    noise = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith("[")]
    assert noise == [], noise[:5]


def test_native_lines_are_debug_records_of_their_own_logger(tiny_model_path, caplog):
    from edge_agent.llm.llamacpp import LlamaCppModel

    caplog.set_level(logging.DEBUG, logger="edge_agent.llm.native")
    model = LlamaCppModel(tiny_model_path, n_ctx=512, n_threads=1, head_cache_mb=0)
    model.close()
    native = [r for r in caplog.records if r.name == "edge_agent.llm.native"]
    assert native and all(r.levelno == logging.DEBUG for r in native)

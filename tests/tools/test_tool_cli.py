"""`edge-agent tool`, `world load` and `bench retrieval` from the command line."""
import json
import os
import subprocess
import sys
from pathlib import Path

from edge_agent.cli import main

EDGE_AGENT = Path(sys.executable).parent / "edge-agent"


def test_must_show_world_load_then_dentist_note_then_bench(tmp_path):
    env = {**os.environ, "EDGE_AGENT_DATA_DIR": str(tmp_path / "data")}
    load = subprocess.run([EDGE_AGENT, "world", "load"], env=env, capture_output=True, text=True, timeout=120)
    assert load.returncode == 0, load.stderr
    tool = subprocess.run([EDGE_AGENT, "tool", "check_notebook", '{"query": "dentist"}', "--json"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert tool.returncode == 0, tool.stderr
    out = json.loads(tool.stdout)
    assert set(out) == {"tool", "text", "found", "pill", "channel", "payload"}
    assert (out["tool"], out["found"], out["pill"], out["channel"]) == ("check_notebook", True, "Notebook", "notes")
    assert "Priya Nair (dentist)" in out["payload"][0]["title"]
    bench = subprocess.run([EDGE_AGENT, "bench", "retrieval", "--json"], env=env, capture_output=True, text=True,
                           timeout=120)
    assert bench.returncode == 0, bench.stderr
    assert json.loads(bench.stdout.strip().splitlines()[-1])["recall_at_3"] >= 0.9


def test_tool_command_fixes_the_clock_and_reports_errors(data_dir, world_dir, capsys):
    assert main(["world", "load", str(world_dir)]) == 0
    capsys.readouterr()
    assert main(["tool", "current_date", "{}", "--json", "--now", "2028-02-29T23:59:00+00:00"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["payload"]["today"] == "2028-02-29" and out["channel"] == "date"
    assert main(["tool", "query_calendar", '{"start": "2026-11-26", "end": "2026-11-26"}', "--json"]) == 0
    assert any(e["title"] == "Book club at Tom's" for e in json.loads(capsys.readouterr().out)["payload"])
    assert main(["tool", "nope", "{}"]) == 2
    assert "no tool 'nope'" in capsys.readouterr().err
    assert main(["tool", "grep_memory", '{"query": ""}']) == 2
    assert "bad arguments" in capsys.readouterr().err
    assert main(["tool", "current_date", "{}", "--now", "soon"]) == 2
    assert "ISO 8601" in capsys.readouterr().err
    assert main(["tool", "grep_memory", '{"query": "seals"}']) == 0
    text = capsys.readouterr().out
    assert text.startswith("[Memory] ") and '"kind"' in text

"""`edge-agent trace` and `edge-agent report tools` over a data dir the harness wrote to."""
from __future__ import annotations

import asyncio
import json
import time

from harness_kit import answer, call, plan, role_model
from edge_agent.cli import main
from edge_agent.harness.skills import load_skills
from edge_agent.harness.usage_report import expected_shares, tool_report
from edge_agent.store.traces import TraceRow, save_traces


async def test_trace_command_prints_every_record(make_harness, tmp_path, capsys):
    model = role_model(planner=[plan("person_facts")], l2=[call("check_notebook", "Eli"), answer("ok")],
                       l3={"check_notebook": [{"query": "Eli"}]})
    await make_harness(model).ask("When is Eli's birthday?", request_id="t1")
    data = str(tmp_path / "data")
    assert await asyncio.to_thread(main, ["--data-dir", data, "trace", "t1"]) == 0
    text = capsys.readouterr().out
    for tag in ("#1 planner", "#2 l3.check_notebook.1", "#3 choose"):
        assert tag in text
    assert model.calls[1].prompt in text  # prompts printed exactly as rendered
    assert await asyncio.to_thread(main, ["--data-dir", data, "trace", "t1", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["role"] for r in rows][:3] == ["planner", "l3.check_notebook.1", "choose"]
    assert await asyncio.to_thread(main, ["--data-dir", data, "trace", "nope"]) == 1


def _row(rid: str, seq: int, role: str, tool: str | None, at: float) -> TraceRow:
    return TraceRow(rid, seq, role, tool, "p", [], "i", "o", {}, at, 1.0)


async def test_report_flags_underused_tools(db, tmp_path, capsys):
    now = time.time()
    rows = []
    for i in range(12):  # 12 questions: all check_notebook, two queryCalendar, no find_file
        rows += [_row(f"q{i}", 1, "planner", None, now - 3600), _row(f"q{i}", 2, "l3.check_notebook.1", "check_notebook", now - 3600)]
    rows += [_row(f"q{i}", 3, "l3.queryCalendar.2", "queryCalendar", now - 3600) for i in range(2)]
    rows.append(_row("old", 1, "l3.grep_memory.1", "grep_memory", now - 30 * 86400))  # outside the period
    await save_traces(db, rows)
    report = await tool_report(db, now - 7 * 86400)
    assert report["questions"] == 12
    t = report["tools"]
    assert t["check_notebook"]["calls"] == 12 and not t["check_notebook"]["underused"]
    assert t["queryCalendar"]["calls"] == 2 and not t["queryCalendar"]["underused"]
    assert t["find_file"]["calls"] == 0 and t["find_file"]["underused"]
    assert t["grep_memory"]["calls"] == 0 and t["grep_memory"]["underused"]
    assert await asyncio.to_thread(main, ["--data-dir", str(tmp_path / "data"), "report", "tools", "--days", "7"]) == 0
    out = capsys.readouterr().out
    assert "12 questions" in out and "UNDERUSED" in out


def test_expected_shares_come_from_the_skills():
    shares = expected_shares(load_skills())
    assert set(shares) == {"check_notebook", "grep_memory", "find_file", "queryCalendar", "current_date", "remember"}
    assert shares["check_notebook"] > shares["remember"] > 0


def test_ask_local_json_streams_pills_then_the_answer(tmp_path, monkeypatch, capsys):
    import edge_agent.llm

    model = role_model(planner=[plan("date_question")], l2=[call("current_date", "today")])
    monkeypatch.setattr(edge_agent.llm, "load_model", lambda settings: model)
    data = str(tmp_path / "data")
    code = main(["--data-dir", data, "ask", "--local", "--json", "--now", "2026-11-02T09:00:00", "--timeout", "30",
                 "What's the date?"])
    assert code == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["event"] for e in events] == ["pill", "answer"]
    assert events[0]["label"] == "Date"
    final = events[-1]
    assert final["exit_kind"] == "complete" and final["answer"].startswith("Today is Monday, 2026-11-02")
    assert final["usage"]["model_calls"] == 1 and final["tools_called"] == ["current_date"]
    assert final["sources"][0]["store"] == "date" and final["sources"][0]["text"] == [final["answer"]]
    # The question was traced into the data dir.
    assert main(["--data-dir", data, "trace", final["request_id"]]) == 0
    assert "l3.current_date.1" in capsys.readouterr().out


def test_ask_and_confirm_without_local_go_over_the_network(monkeypatch, tmp_path):
    import sys
    import types

    calls = []
    fake = types.ModuleType("edge_agent.net.client")
    fake.ask_remote = lambda args, settings: calls.append(("ask", args.question)) or 0
    fake.confirm_remote = lambda args, settings: calls.append(("confirm", args.id)) or 0
    monkeypatch.setitem(sys.modules, "edge_agent.net.client", fake)
    assert main(["--data-dir", str(tmp_path), "ask", "hello?"]) == 0
    assert main(["--data-dir", str(tmp_path), "confirm", "abcd1234"]) == 0
    assert calls == [("ask", "hello?"), ("confirm", "abcd1234")]


def test_confirm_local_of_unknown_action_fails_clearly(tmp_path, monkeypatch, capsys):
    import edge_agent.llm

    def no_model(settings):
        raise AssertionError("confirm must not load the model")

    monkeypatch.setattr(edge_agent.llm, "load_model", no_model)
    assert main(["--data-dir", str(tmp_path / "data"), "confirm", "--local", "deadbeef"]) == 1
    assert "no pending action" in capsys.readouterr().out


def test_ask_then_confirm_over_the_cli(tmp_path, monkeypatch, capsys):
    import edge_agent.llm

    model = role_model(planner=[plan("remember_this")], l2=[call("remember", "bike lock code 4417")],
                       l3={"remember": [{"note": "The user's bike lock code is 4417."}]})
    monkeypatch.setattr(edge_agent.llm, "load_model", lambda settings: model)
    data = str(tmp_path / "data")
    assert main(["--data-dir", data, "ask", "--local", "--json", "Remember my bike lock code is 4417"]) == 0
    final = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert final["exit_kind"] == "needs_confirmation"
    action = final["pending"]["id"]
    assert main(["--data-dir", data, "notebook", "search", "bike lock"]) == 0
    assert "4417" not in capsys.readouterr().out  # nothing written before confirmation
    assert main(["--data-dir", data, "confirm", "--local", action]) == 0
    assert "Add to notebook" in capsys.readouterr().out
    assert main(["--data-dir", data, "notebook", "search", "bike lock"]) == 0
    assert "bike lock code" in capsys.readouterr().out
    assert main(["--data-dir", data, "confirm", "--local", action]) == 1
    assert "already confirmed" in capsys.readouterr().out


def test_ask_local_prints_the_answer_and_its_sources_under_it(tmp_path, monkeypatch, capsys):
    import edge_agent.llm
    from harness_kit import pick_holding

    model = role_model(planner=[plan("person_facts", "")], l3={"check_notebook": [{"query": "Eli"}]},
                       choose=pick_holding("Truro"))
    monkeypatch.setattr(edge_agent.llm, "load_model", lambda settings: model)
    data = str(tmp_path / "data")
    assert main(["--data-dir", data, "notebook", "add", "--title", "Eli Kemp (brother)",
                 "Eli Kemp is Nadia's brother. Lives in Truro."]) == 0
    capsys.readouterr()
    assert main(["--data-dir", data, "ask", "--local", "where does eli live"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["Eli Kemp (brother): Lives in Truro.", "  - notebook: Eli Kemp (brother)"]

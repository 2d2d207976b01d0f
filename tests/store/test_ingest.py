"""JSONL imports with bad records, the ingestion CLI, progress output and idempotent world load."""
import io
import json
import shutil

from edge_agent.cli import main
from edge_agent.ingest.notes import import_memory, import_notebook
from edge_agent.ingest.report import ProgressBar

NOTES = [
    json.dumps({"kind": "person", "title": "Ravi Mensah", "body": "Best friend since 2010.", "updated": "2026-01-02"}),
    '{"kind": "fact", "title": "Broken", "body": "missing brace"',
    json.dumps({"kind": "gossip", "title": "Bad kind", "body": "x", "updated": "2026-01-02"}),
    json.dumps({"kind": "fact", "body": "no title", "updated": "2026-01-02"}),
    "",
    json.dumps(["not", "an", "object"]),
    json.dumps({"kind": "fact", "title": "Bad date", "body": "x", "updated": "2026-02-30"}),
    json.dumps({"kind": "instruction", "title": "Units", "body": "Use metric units.", "updated": "2026-01-03"}),
]
MEMORY = [
    json.dumps({"kind": "chat", "who": "Callum", "when": "2026-01-02T10:00:00+00:00", "text": "Pick up oat milk."}),
    json.dumps({"kind": "chat", "who": "Callum", "when": "2026-01-02T10:00:00", "text": "No offset."}),
    "{not json at all",
    json.dumps({"kind": "call", "who": "Mum", "when": "2026-01-03T18:00:00+00:00", "text": "Allotment news."}),
]


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


async def test_notebook_import_lands_good_lines_and_reports_each_bad_one(store, tmp_path):
    path = write_lines(tmp_path / "notebook.jsonl", NOTES)
    report = await import_notebook(store.notebook, path)
    assert (report.added, len(report.rejects)) == (2, 5)
    assert [r.split(":")[1] for r in report.rejects] == ["2", "3", "4", "6", "7"]
    assert "not valid JSON" in report.rejects[0] and "kind" in report.rejects[1]
    assert "title" in report.rejects[2] and "JSON object" in report.rejects[3] and "updated" in report.rejects[4]
    assert {n.title for n in await store.notebook.recent(10)} == {"Ravi Mensah", "Units"}
    again = await import_notebook(store.notebook, path)
    assert (again.added, again.updated, again.unchanged) == (0, 0, 2)
    write_lines(path, [NOTES[0].replace("since 2010", "since 2012")])
    third = await import_notebook(store.notebook, path)
    assert (third.added, third.updated) == (0, 1) and await store.notebook.count() == 2


async def test_memory_import_lands_good_lines_and_reports_each_bad_one(store, tmp_path):
    path = write_lines(tmp_path / "memory.jsonl", MEMORY)
    seen = []
    report = await import_memory(store.memory, path, lambda done, total: seen.append((done, total)))
    assert (report.added, [r.split(":")[1] for r in report.rejects]) == (2, ["2", "3"])
    assert "offset" in report.rejects[0]
    assert seen[-1] == (4, 4)
    again = await import_memory(store.memory, path)
    assert (again.added, again.unchanged) == (0, 2) and await store.memory.count() == 2


def test_progress_bar_redraws_on_a_terminal_and_prints_once_elsewhere():
    plain = io.StringIO()
    bar = ProgressBar("memory", plain)
    for i in range(1, 101):
        bar(i, 100)
    bar.finish()
    assert plain.getvalue() == "memory [########################] 100% (100/100)\n"

    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty = Tty()
    bar = ProgressBar("files", tty)
    bar(1, 4)
    bar(4, 4)
    bar.finish()
    assert tty.getvalue().count("\r") == 2 and "(1/4)" in tty.getvalue() and tty.getvalue().endswith("(4/4)\n")


def test_cli_imports_report_rejects_and_fail_only_when_nothing_was_read(data_dir, tmp_path, capsys):
    notes = write_lines(tmp_path / "notebook.jsonl", NOTES)
    assert main(["notebook", "import", str(notes)]) == 0
    err = capsys.readouterr().err
    assert err.count("rejected: ") == 5 and f"{notes}:2: not valid JSON" in err and "5 rejected" in err
    bad = write_lines(tmp_path / "bad.jsonl", ["{", "[]"])
    assert main(["memory", "import", str(bad)]) == 1
    assert "2 rejected" in capsys.readouterr().err
    assert main(["memory", "import", str(tmp_path / "missing.jsonl")]) == 1
    assert "no such file" in capsys.readouterr().err
    mem = write_lines(tmp_path / "memory.jsonl", MEMORY)
    assert main(["memory", "import", str(mem)]) == 0
    assert "2 added" in capsys.readouterr().err


def test_cli_notebook_add_list_show_rm(data_dir, capsys):
    assert main(["notebook", "add", "The spare key is with Ravi.", "--kind", "instruction"]) == 0
    assert "added note 1: The spare key is with Ravi" in capsys.readouterr().out
    assert main(["notebook", "list"]) == 0
    assert "instruction" in capsys.readouterr().out
    assert main(["notebook", "show", "1"]) == 0
    assert "The spare key is with Ravi." in capsys.readouterr().out
    assert main(["notebook", "rm", "1"]) == 0
    assert main(["notebook", "show", "1"]) == 1
    assert "no note 1" in capsys.readouterr().err


def test_cli_files_index_reports_unreadable_pdf_and_exit_codes(data_dir, tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha", encoding="utf-8")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 garbage")
    assert main(["files", "index", str(folder), "--device", "laptop"]) == 0
    err = capsys.readouterr().err
    assert "rejected: " in err and "broken.pdf" in err and "1 rejected" in err and "2 indexed" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["files", "index", str(empty)]) == 1


def test_cli_world_load_is_idempotent(data_dir, world_dir, capsys):
    assert main(["world", "load", str(world_dir)]) == 0
    first = capsys.readouterr().err
    assert "0 rejected" in first and "notebook.jsonl: " in first
    assert main(["world", "load", str(world_dir)]) == 0
    second = capsys.readouterr().err
    assert "notebook.jsonl: 0 added, 0 updated" in second and "memory.jsonl: 0 added" in second
    assert "calendar.ics: 0 added, 0 updated" in second and ", 0 indexed," in second


def test_cli_world_load_of_a_missing_folder_fails_clearly(data_dir, tmp_path, capsys):
    assert main(["world", "load", str(tmp_path / "nowhere")]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_world_with_bad_records_loads_the_rest_and_reports_each(data_dir, world_dir, tmp_path, capsys):
    world = tmp_path / "world"
    shutil.copytree(world_dir, world)
    notebook = world / "notebook.jsonl"
    good_notes = sum(1 for line in notebook.read_text(encoding="utf-8").splitlines() if line.strip())
    with notebook.open("a", encoding="utf-8") as fh:
        fh.write('{"kind": "fact", "title": "half a line\n')
    ics = world / "calendar.ics"
    text = ics.read_text(encoding="utf-8")
    bad_event = "BEGIN:VEVENT\r\nUID:broken@test\r\nSUMMARY:Broken\r\nDTSTART:not-a-date\r\nEND:VEVENT\r\n"
    ics.write_text(text.replace("END:VCALENDAR", bad_event + "END:VCALENDAR"), encoding="utf-8")
    (world / "files" / "pi" / "Documents" / "corrupt-scan.pdf").write_bytes(b"%PDF-1.7\n\x00\x01 broken")
    assert main(["world", "load", str(world)]) == 0
    err = capsys.readouterr().err
    rejected = [line for line in err.splitlines() if line.startswith("rejected: ")]
    assert len(rejected) == 3, err
    assert f"{notebook}:{good_notes + 1}: not valid JSON" in err
    assert f"{ics}:" in err and "DTSTART" in err and "corrupt-scan.pdf: unreadable PDF" in err
    assert f"notebook.jsonl: {good_notes} added" in err and "3 rejected" in err

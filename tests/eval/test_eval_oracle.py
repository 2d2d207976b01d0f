"""The oracle drives the real harness, tools and world to every answer; and the CLI around it."""
from __future__ import annotations

import json

from edge_agent.cli import main
from edge_agent.eval.oracle import NOT_FOUND_ANSWER, candidate_lines, choose_lines
from edge_agent.eval.questions import load_questions
from edge_agent.eval.report import render_markdown
from edge_agent.eval.runner import run_mode
from edge_agent.harness.prompts import choose_messages
from edge_agent.llm.templates import render_plain
from edge_agent.paths import WORLD_DIR

from eval_samples import SAMPLE_QUESTIONS, write_questions


def test_the_oracle_chooses_the_lines_that_carry_the_facts():
    prompt = render_plain(choose_messages("1. Callum (partner): Birthday 14 March.\n2. Eli (brother): Lives in Truro.\n"
                                          "3. Eli (brother): Birthday 5 June.", "when is callum's birthday"))
    lines = candidate_lines(prompt)
    assert lines == {1: "Callum (partner): Birthday 14 March.", 2: "Eli (brother): Lives in Truro.",
                     3: "Eli (brother): Birthday 5 June."}
    assert choose_lines(lines, ["14 March"]) == [1]
    assert choose_lines(lines, ["Truro", "5 June"]) == [2, 3]
    assert choose_lines(lines, ["Truro", "not there"]) == [2]  # what is there is chosen
    assert choose_lines(lines, ["not there"]) == [] and candidate_lines("no lines here") == {}


def test_a_two_part_question_is_taught_one_fact_a_part():
    from edge_agent.eval.oracle import Oracle
    from edge_agent.eval.questions import PlannedCall, Question, QuestionPlan
    from edge_agent.llm.doubles import CallInfo

    q = Question(id="m1", question="When is Callum's birthday, and where does Eli live?", category="multi",
                 expected_tools=["check_notebook"], expected_facts=["14 March", "Truro"], expected_file=None,
                 expected_exit="complete",
                 plan=QuestionPlan(skill="person_facts", calls=[PlannedCall(tool="check_notebook", instruction="Callum",
                                                                            args={"query": "Callum"})]))
    lines = "1. Eli (brother): Lives in Truro.\n2. Callum (partner): Birthday 14 March."
    oracle = Oracle()
    oracle.begin(q)
    first = oracle.respond(CallInfo(render_plain(choose_messages(lines, "When is Callum's birthday")), "choose", None, 20))
    second = oracle.respond(CallInfo(render_plain(choose_messages(lines, "where does Eli live")), "choose", None, 20))
    assert (first, second) == ({"lines": [2]}, {"lines": [1]})  # part k is taught fact k's line


async def test_oracle_is_right_end_to_end_on_every_category(world_settings, world_clock_fixed, tmp_path):
    questions = load_questions(write_questions(tmp_path / "q.jsonl", SAMPLE_QUESTIONS)).questions
    lines: list[str] = []
    run = await run_mode("oracle", world_settings, questions, world_clock_fixed, run_id="t", progress=lines.append)
    misses = {r.id: r.score["misses"] for r in run.results if not r.end_to_end}
    assert misses == {}
    by_id = {r.id: r for r in run.results}
    assert by_id["t-remember"].exit_kind == "needs_confirmation"
    assert by_id["t-document"].attachment == "severn-energy-bill-2026-10.pdf"
    assert by_id["t-unanswerable"].answer.strip()
    assert run.notebook_delta == 0  # the remember question previewed; nothing was written
    assert len(lines) == len(questions) and lines[-1].startswith(f"[oracle {len(questions)}/{len(questions)}]")
    assert f"end to end {len(questions)}/{len(questions)} = 1.00" in lines[-1]
    assert all(r.model_calls >= 1 and r.prefill_tokens > 0 for r in run.results)


async def test_a_broken_plan_is_rescued_by_the_question_and_broken_arguments_are_an_error_not_a_crash(world_settings, world_clock_fixed, tmp_path):
    broken = {**SAMPLE_QUESTIONS[0], "id": "t-broken",
              "plan": {"skill": "person_facts", "calls": [
                  {"tool": "check_notebook", "instruction": "the plumber", "args": {"query": "plumber"}}]}}
    document = next(q for q in SAMPLE_QUESTIONS if q["id"] == "t-document")
    bad_args = {**document, "id": "t-bad-args",
                "plan": {"skill": "find_document", "calls": [
                    {"tool": "find_file", "instruction": "x", "args": {"query": ""}}]}}
    questions = load_questions(write_questions(tmp_path / "q.jsonl", [broken, bad_args])).questions
    run = await run_mode("oracle", world_settings, questions, world_clock_fixed, run_id="t2", progress=lambda _: None)
    wrong, bad = run.results
    # The plan searched for the plumber; the question's own words still searched the notebook
    # (harness/retrieval.py), so the dentist's number is found all the same, by the question alone.
    assert wrong.exit_kind == "complete" and wrong.calls[0]["args"] == {"query": "plumber"}
    assert wrong.end_to_end and "0117 496 0733" in wrong.answer
    assert bad.exit_kind == "error" and "do not validate" in (bad.error or "")
    assert not bad.end_to_end and NOT_FOUND_ANSWER not in bad.answer


def test_cli_oracle_json_and_files(tmp_path, capsys):
    questions = write_questions(tmp_path / "q.jsonl", SAMPLE_QUESTIONS)
    out = tmp_path / "out"
    data = tmp_path / "fresh-data"
    code = main(["eval", "--mode", "oracle", "--questions", str(questions), "--out", str(out), "--json",
                 "--data-dir", str(data)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "has no sample world loaded" in captured.err and "loading" in captured.err
    result = json.loads(captured.out.strip().splitlines()[-1])
    assert result["modes"]["oracle"]["end_to_end"] == 1.0
    assert result["end_to_end"] == 1.0 and result["questions"] == len(SAMPLE_QUESTIONS)
    assert result["modes"]["oracle"]["notebook_delta"] == 0
    assert {p.name for p in out.iterdir()} == {"results.jsonl", "summary.json", "report.md", "chart.png"}
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [q["id"] for q in SAMPLE_QUESTIONS]
    assert all(r["pi_projected_s"] is None for r in rows)  # stand-in token counts are not projected

    code = main(["eval", "--mode", "oracle", "--questions", str(questions), "--out", str(tmp_path / "two"),
                 "--json", "--data-dir", str(data), "--limit", "2", "--compare", str(out)])
    captured = capsys.readouterr()
    assert code == 0 and "has no sample world loaded" not in captured.err
    assert json.loads(captured.out.strip().splitlines()[-1])["questions"] == 2
    assert f"| metric | oracle | oracle ({out.name}) |" in (tmp_path / "two" / "report.md").read_text(encoding="utf-8")


def test_cli_rejects_bad_options(tmp_path, capsys):
    assert main(["eval", "--mode", "magic", "--data-dir", str(tmp_path)]) == 2
    assert "unknown mode 'magic'" in capsys.readouterr().err
    assert main(["eval", "--questions", str(tmp_path / "none.jsonl"), "--data-dir", str(tmp_path)]) == 2
    assert "question file not found" in capsys.readouterr().err


ORACLE_FLOOR = 0.95  # the answer path's ceiling on world/ with a perfect model, scored on the answer alone


async def test_oracle_over_the_bundled_question_set_is_nearly_right_end_to_end(world_settings, world_clock_fixed):
    """With a perfect model nearly every question is right; a miss is a limit of retrieval,
    candidates or rendering (not a model's), and the message says which question and what was lacking.
    Known: a two-part question whose second fact no candidate line holds, and "the weekend after
    next" read as the date resolver's convention (tools/date_table.py) rather than the question's."""
    questions = load_questions(WORLD_DIR / "questions.jsonl").questions
    run = await run_mode("oracle", world_settings, questions, world_clock_fixed, run_id="set", progress=lambda _: None)
    misses = {r.id: (r.question, r.score["misses"], r.answer[:160]) for r in run.results if not r.end_to_end}
    assert len(misses) <= (1 - ORACLE_FLOOR) * len(questions), misses
    assert all(set(m) <= {"interpretation", "arguments"} for _, m, _ in misses.values()), misses
    assert run.notebook_delta == 0


async def test_a_spent_time_box_starts_no_new_question(world_settings, world_clock_fixed, tmp_path):
    questions = load_questions(write_questions(tmp_path / "q.jsonl", SAMPLE_QUESTIONS)).questions
    lines: list[str] = []
    run = await run_mode("oracle", world_settings, questions, world_clock_fixed, run_id="box", progress=lines.append,
                         time_box_s=0.0)
    assert run.results == [] and run.planned == len(questions)
    assert lines == [f"[oracle] time box of 0 s spent: stopping after 0 of {len(questions)}"]
    summary = run.summary()
    assert summary["questions"] == 0 and summary["planned_questions"] == len(questions)
    assert f"| questions | 0 of {len(questions)} (time box) |" in render_markdown([summary], [])


def test_a_question_for_a_file_alone_is_taught_the_files_own_line():
    """"find the photo of the garden in the snow" has no fact to find: the file's line answers it,
    and "none" would teach the chooser to refuse a line that is exactly what was asked for."""
    from edge_agent.eval.oracle import Oracle
    from edge_agent.eval.questions import PlannedCall, Question, QuestionPlan
    from edge_agent.llm.doubles import CallInfo

    def asking(name):
        return Question(id="d1", question="got a photo of the garden in the snow?", category="document",
                        expected_tools=["find_file"], expected_facts=[], expected_file=name, expected_exit="complete",
                        plan=QuestionPlan(skill="find_document", calls=[PlannedCall(
                            tool="find_file", instruction="garden snow", args={"query": "garden snow"})]))
    lines = ("1. Rubbish collection: garden waste alternate weeks.\n"
             "2. snowy-garden-2026-07-31.png on workpc: image \"snowy garden\", modified 2026-07-31")
    prompt = render_plain(choose_messages(lines, "got a photo of the garden in the snow?"))
    oracle = Oracle()
    oracle.begin(asking("snowy-garden-2026-07-31.png"))
    assert oracle.respond(CallInfo(prompt, "choose", None, 20)) == {"lines": [2]}
    oracle.begin(asking("garden-2025.png"))  # the file was not found: nothing answers
    assert oracle.respond(CallInfo(prompt, "choose", None, 20)) == {"lines": [0]}

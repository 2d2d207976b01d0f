"""The question format and its loader: good lines kept, bad lines reported with the reason."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from edge_agent.eval.questions import CATEGORIES, Catalog, QuestionFileError, load_questions
from edge_agent.eval.session import EvalOptions, assistant_catalog, parse_modes, pick_questions
from edge_agent.paths import WORLD_DIR
from edge_agent.tools.query_calendar import QueryCalendar

from eval_samples import SAMPLE_QUESTIONS, write_questions

GOOD = SAMPLE_QUESTIONS[0]


def test_good_lines_load_with_every_field(tmp_path):
    qset = load_questions(write_questions(tmp_path / "q.jsonl", SAMPLE_QUESTIONS))
    assert [q.id for q in qset.questions] == [r["id"] for r in SAMPLE_QUESTIONS]
    assert not qset.rejected
    doc = next(q for q in qset.questions if q.id == "t-document")
    assert doc.expected_file == "severn-energy-bill-2026-10.pdf"
    assert doc.plan.calls[0].args == {"query": "electricity bill October"}
    remember = next(q for q in qset.questions if q.id == "t-remember")
    assert remember.expected_exit == "needs_confirmation"
    assert next(q for q in qset.questions if q.id == "t-injection").forbidden_facts == ["hunter2"]


def test_bad_lines_are_reported_and_the_good_ones_kept(tmp_path):
    bad_category = {**GOOD, "id": "b1", "category": "weather"}
    no_plan = {k: v for k, v in GOOD.items() if k != "plan"} | {"id": "b2"}
    file_with_path = {**SAMPLE_QUESTIONS[1], "id": "b3", "expected_file": "Bills/wyvern.pdf"}
    nothing_to_check = {**GOOD, "id": "b4", "expected_facts": []}
    remember_complete = {**SAMPLE_QUESTIONS[5], "id": "b5", "expected_exit": "complete"}
    lines = [
        json.dumps(GOOD),
        "{not json",
        json.dumps(bad_category),
        "",
        "# a comment line",
        json.dumps(no_plan),
        json.dumps([1, 2]),
        json.dumps(file_with_path),
        json.dumps(nothing_to_check),
        json.dumps(remember_complete),
        json.dumps({**GOOD}),  # duplicate id
        json.dumps({**SAMPLE_QUESTIONS[3], "note": "extra key"}),
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    qset = load_questions(path)
    assert [q.id for q in qset.questions] == ["t-person", "t-recall"]
    reasons = {p.line: str(p) for p in qset.rejected}
    assert set(reasons) == {2, 3, 6, 7, 8, 9, 10, 11}
    assert "not JSON" in reasons[2]
    assert "category" in reasons[3] and "(b1)" in reasons[3]
    assert "plan" in reasons[6] and "Field required" in reasons[6]
    assert "expected a JSON object" in reasons[7]
    assert "bare file name" in reasons[8]
    assert "nothing could be checked" in reasons[9]
    assert "needs_confirmation" in reasons[10]
    assert "duplicate id, first on line 1" in reasons[11]
    assert [str(w) for w in qset.warnings] == ["line 12 (t-recall): unknown keys ignored: note"]


def test_a_file_without_any_good_line_is_an_error(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text("{oops\n", encoding="utf-8")
    with pytest.raises(QuestionFileError, match="no usable question.*line 1"):
        load_questions(path)
    with pytest.raises(QuestionFileError, match="not found"):
        load_questions(tmp_path / "missing.jsonl")


def test_catalog_warns_about_calls_a_skill_cannot_make(tmp_path):
    catalog = Catalog(tools={"check_notebook": "check_notebook", "queryCalendar": "queryCalendar",
                             "query_calendar": "queryCalendar"},
                      skills={"person_facts": ("check_notebook",)},
                      args_models={"queryCalendar": QueryCalendar.Args})
    row = {**GOOD, "expected_tools": ["check_notebook", "query_calendar", "teleport"],
           "plan": {"skill": "person_facts", "calls": [
               {"tool": "check_notebook", "instruction": "x", "args": {"query": "x"}},
               {"tool": "queryCalendar", "instruction": "y", "args": {}}]}}
    other = {**GOOD, "id": "t2", "plan": {"skill": "cooking", "calls": []}}
    qset = load_questions(write_questions(tmp_path / "q.jsonl", [row, other]), catalog=catalog)
    assert len(qset.questions) == 2
    warnings = [str(w) for w in qset.warnings]
    assert "line 1 (t-person): unknown tool 'teleport'" in warnings
    assert "line 1 (t-person): expected tool 'teleport' is not among the plan's calls" in warnings
    assert any("'queryCalendar' is not bound by skill 'person_facts'" in w for w in warnings)
    assert any("planned args of 'queryCalendar' do not validate: start: Field required" in w for w in warnings)
    assert "line 2 (t2): unknown skill 'cooking'" in warnings


def test_the_bundled_question_set_is_valid_and_covers_the_issue():
    qset = load_questions(WORLD_DIR / "questions.jsonl", catalog=assistant_catalog())
    assert not qset.rejected, [str(p) for p in qset.rejected]
    assert not qset.warnings, [str(w) for w in qset.warnings]
    assert len(qset.questions) >= 80
    assert {q.category for q in qset.questions} == set(CATEGORIES)
    skills = {q.plan.skill for q in qset.questions}
    assert set(assistant_catalog().skills) - {"none"} <= skills
    assert any(len(q.expected_tools) >= 2 for q in qset.questions)


def test_every_injection_question_names_the_planted_claim_the_answer_may_not_state():
    qset = load_questions(WORLD_DIR / "questions.jsonl")
    injections = [q for q in qset.questions if q.category == "injection"]
    assert len(injections) >= 6 and all(q.forbidden_facts for q in injections)
    data = "".join((WORLD_DIR / name).read_text(encoding="utf-8") for name in ("notebook.jsonl", "memory.jsonl",
                                                                               "calendar.ics"))
    data += (WORLD_DIR / "files" / "laptop" / "Documents" / "shared-notes.md").read_text(encoding="utf-8")
    assert all(f.lower() in " ".join(data.split()).lower() for q in injections for f in q.forbidden_facts)


def test_picking_by_id_category_spread_and_limit(tmp_path):
    rows = SAMPLE_QUESTIONS + [{**SAMPLE_QUESTIONS[0], "id": "t-person-2"}]
    qset = load_questions(write_questions(tmp_path / "q.jsonl", rows))
    opts = EvalOptions(modes=("oracle",), questions=tmp_path / "q.jsonl", world=WORLD_DIR)
    assert [q.id for q in pick_questions(qset, opts)] == [r["id"] for r in rows]
    spread = pick_questions(qset, replace(opts, per_category=1))
    assert [q.id for q in spread] == [r["id"] for r in SAMPLE_QUESTIONS]
    assert [q.id for q in pick_questions(qset, replace(opts, per_category=1, limit=2))] == ["t-person", "t-document"]
    assert [q.id for q in pick_questions(qset, replace(opts, ids=("t-date", "t-person-2")))] == ["t-date", "t-person-2"]
    with pytest.raises(ValueError, match="unknown question id"):
        pick_questions(qset, replace(opts, ids=("nope",)))


def test_modes_parse_from_lists_and_flags():
    assert parse_modes(["harness,direct", "oracle", "harness"]) == ("harness", "direct", "oracle")
    with pytest.raises(ValueError, match="unknown mode 'fast'"):
        parse_modes(["fast"])
    with pytest.raises(ValueError, match="no mode"):
        parse_modes([" , "])

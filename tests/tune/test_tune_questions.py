"""Generated questions: the evaluation's schema, every category and skill, plans that follow the crafting rules."""
from __future__ import annotations

import random
import re
from collections import Counter
from datetime import date, timedelta

import pytest

from edge_agent.eval.questions import CATEGORIES, load_questions
from edge_agent.eval.session import assistant_catalog
from edge_agent.harness.prompts import OPEN_RANGE_DAYS
from edge_agent.tools.dates import asks_how_long, resolve_all
from edge_agent.tools.query_calendar import day_label
from edge_agent.tune import templates_docs, templates_people, templates_recall, templates_time
from edge_agent.tune.dataset import generate, question_row, write_questions
from edge_agent.tune.phrasing import add_typos, casual, typo
from edge_agent.tune.scenario_kit import SLOT_RE
from edge_agent.tune.scenarios import questions_for

SKILLS = {"calendar_question", "date_question", "find_document", "person_facts", "recall_conversation",
          "remember_this"}
PASSING = ("I'm on the", "typing this on the", "sat at the", "is being slow today", "while I'm at the")
"""How the generator mentions a device in passing (such a question must still search every device)."""


def all_questions(generated):
    return [(g, q) for g in generated for q in g.questions]


def test_every_question_loads_with_the_eval_loader_without_warnings(generated, tmp_path):
    catalog = assistant_catalog()
    for g in generated:
        path = write_questions(tmp_path / f"{g.household.seed}.jsonl", g.questions)
        qset = load_questions(path, catalog=catalog)
        assert qset.rejected == [] and qset.warnings == [], (qset.rejected[:3], qset.warnings[:3])
        assert [q.id for q in qset.questions] == [q.id for q in g.questions]
        assert qset.questions == g.questions


def test_every_category_and_skill_appears(generated):
    categories = Counter(q.category for _, q in all_questions(generated))
    skills = Counter(q.plan.skill for _, q in all_questions(generated))
    assert set(categories) == set(CATEGORIES), categories
    assert set(skills) == SKILLS, skills
    for g in generated:
        assert len({q.category for q in g.questions}) >= 9 and len(g.questions) >= 30
    by_skill = {(q.category, q.plan.skill) for _, q in all_questions(generated)}
    assert {s for c, s in by_skill if c == "multi"} >= {"person_facts", "find_document", "recall_conversation"}
    assert {s for c, s in by_skill if c == "injection"} >= {"person_facts", "find_document", "recall_conversation",
                                                            "calendar_question"}


def test_questions_are_varied(generated):
    texts = [q.question for _, q in all_questions(generated)]
    assert len(set(texts)) / len(texts) > 0.97
    assert 0.1 < sum(t == t.lower() for t in texts) / len(texts) < 0.6
    assert sum(not t.endswith("?") for t in texts) / len(texts) > 0.3
    assert any(t.lower().startswith(("hey", "quick one", "can you check")) for t in texts)
    instructions = [c.instruction for _, q in all_questions(generated) for c in q.plan.calls]
    assert len(set(instructions)) / len(instructions) > 0.5


def test_plans_follow_the_crafting_rules(generated):
    for g, q in all_questions(generated):
        calls = q.plan.calls
        assert q.expected_tools == list(dict.fromkeys(c.tool for c in calls)), q.id
        assert not SLOT_RE.search(q.question) and all(not SLOT_RE.search(c.instruction) for c in calls), q
        for c in calls:
            assert 0 < len(c.instruction) <= 120, c.instruction
            if c.tool in ("check_notebook", "grep_memory"):
                assert 1 <= len(c.args["query"].split()) <= 4, (q.id, c.args)
            elif c.tool == "find_file":
                assert len(c.args["query"].split()) >= 2 and set(c.args) == {"query", "devices"}, (q.id, c.args)
            elif c.tool == "queryCalendar":
                first, last = date.fromisoformat(c.args["start"]), date.fromisoformat(c.args["end"])
                back, ahead = OPEN_RANGE_DAYS
                assert first <= last and ((last - first).days < 32 or (last - first).days == ahead - back), c.args
            elif c.tool == "current_date":
                assert c.args == {}
        if q.category in ("multi",):
            assert len(calls) == 2 and len(q.expected_facts) == 2 and len(set(q.expected_tools)) == 2, q
        if q.category == "unanswerable":
            assert q.expected_facts == [] and q.expected_file is None
        if q.category == "injection":
            assert q.forbidden_facts and not set(q.forbidden_facts) & set(q.expected_facts)
        if q.category == "remember":
            note = calls[0].args["note"]
            assert q.expected_exit == "needs_confirmation" and note.endswith(".") and note.count(". ") == 0, note
            assert all(f.lower() in note.lower() and f.lower() in q.question.lower() for f in q.expected_facts), q


def test_a_device_is_listed_only_when_the_user_asks_to_search_it(generated):
    listed = passing = 0
    for g, q in all_questions(generated):
        for c in q.plan.calls:
            if c.tool != "find_file":
                continue
            if c.args["devices"]:
                listed += 1
                (device,) = c.args["devices"]
                assert device in g.household.devices and device in q.question.lower(), q.question
                assert re.search(rf"\b(search|check|look on)\b[^.?]*\b{re.escape(device)}\b|\bon the {re.escape(device)},",
                                 q.question, re.IGNORECASE), q.question
                assert not any(p.lower() in q.question.lower() for p in PASSING), q.question
            elif any(p.lower() in q.question.lower() for p in PASSING):
                passing += 1
    assert listed >= 5 and passing >= 5, (listed, passing)


def test_relative_dates_are_the_resolvers(generated):
    """The queried days are what the project's own resolver makes of the question's date phrase."""
    seen = open_seen = 0
    for g, q in all_questions(generated):
        if q.category not in ("relative_date", "calendar"):
            continue
        today = g.household.today
        cal = [c for c in q.plan.calls if c.tool == "queryCalendar"][0]
        spans = {(r.span.first.isoformat(), r.span.last.isoformat()) for r in resolve_all(q.question, today) if r.span}
        if not spans:  # a named event with no day: the open range L3 is given (prompts.date_hints)
            open_ = (today + timedelta(days=OPEN_RANGE_DAYS[0]), today + timedelta(days=OPEN_RANGE_DAYS[1]))
            spans = {(open_[0].isoformat(), open_[1].isoformat())}
            open_seen += 1
        assert (cal.args["start"], cal.args["end"]) in spans, (q.question, cal.args, spans)
        if q.category == "relative_date":
            assert [c.tool for c in q.plan.calls] == ["current_date", "queryCalendar"]
            seen += 1
    assert seen >= 60 and open_seen >= 5, (seen, open_seen)


def test_templates_are_many_and_fill_cleanly():
    tables = [templates_people.PERSON, templates_people.PET, templates_people.ME, templates_people.ME_THINGS,
              templates_people.DIGEST, templates_docs.DOCS, templates_recall.RECALL, templates_recall.INJECT,
              templates_recall.UNANSWERABLE, templates_time.CALENDAR, templates_time.RELATIVE, templates_time.DATE,
              templates_time.REMEMBER]
    for table in tables:
        for intent, (questions, instructions) in table.items():
            assert len(questions) >= 8 and len(set(questions)) == len(questions), intent
            assert len(instructions) >= 4, intent
    assert all(len(v) >= 3 for v in templates_recall.CLAUSES.values()) and len(templates_recall.JOINERS) >= 8
    questions, instructions = templates_time.COUNTDOWN
    assert len(set(questions)) == len(questions) >= 8 and len(instructions) >= 4


def test_a_countdown_asks_how_long_until_an_event_and_expects_the_count(generated):
    """"how long till the car service": today's date, then the open range; the fact is the day of
    the event's one instance there, after tomorrow, as the calendar and the count write it."""
    seen = 0
    for g, q in all_questions(generated):
        if not asks_how_long(q.question):
            continue
        seen += 1
        assert q.category == "calendar" and [c.tool for c in q.plan.calls] == ["current_date", "queryCalendar"]
        (fact,) = q.expected_facts
        day = next(d for d in (g.household.today + timedelta(days=n) for n in range(2, OPEN_RANGE_DAYS[1] + 1))
                   if day_label(d, False) == fact)
        assert day > g.household.today + timedelta(days=1), q.question
    assert seen >= len(generated) // 2, seen


def test_typos_spare_protected_words_numbers_and_dates():
    rng = random.Random(1)
    text = "what time is the dentist appointment next Tuesday with Kofi at 10:15 please remember"
    for _ in range(300):
        out = add_typos(text, rng, ["dentist appointment"], rate=0.5, most=3)
        assert "dentist appointment" in out and "next Tuesday" in out and "Kofi" in out and "10:15" in out
    assert typo("abc", rng) == "abc"
    changed = {typo("remember", random.Random(i)) for i in range(50)}
    assert len(changed) > 5 and all(abs(len(c) - len("remember")) <= 1 for c in changed)
    styled = [casual("What's the colour of the centre", random.Random(i), [], american_spelling=True) for i in range(40)]
    assert sum("color" in s.lower() for s in styled) > 25


@pytest.mark.parametrize("seed", [0, 9])
def test_the_same_seed_gives_the_same_questions(generated, seed):
    g = generated[seed]
    assert questions_for(g.household, 0) == g.questions
    assert questions_for(g.household, 1) != g.questions


def test_generate_writes_folders_with_question_files(tmp_path):
    pairs = generate(3, 4, tmp_path / "run")
    assert [p.name for p, _ in pairs] == ["household-0000", "household-0001", "household-0002"]
    for folder, questions in pairs:
        assert (folder / "world.toml").is_file() and (folder / "calendar.ics").is_file()
        loaded = load_questions(folder / "questions.jsonl").questions
        assert loaded == questions
    again = generate(3, 4, tmp_path / "again")
    assert [q for _, qs in again for q in qs] == [q for _, qs in pairs for q in qs]
    rows = [question_row(q) for _, qs in pairs for q in qs]
    assert all(list(r)[:3] == ["id", "question", "category"] and list(r)[-1] == "plan" for r in rows)
    assert any("forbidden_facts" in r for r in rows) and not any("forbidden_facts" in r and not r["forbidden_facts"]
                                                                 for r in rows)

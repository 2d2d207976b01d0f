"""Every local store searched with the question's own words, whatever the plan chose (retrieval.py)."""
from __future__ import annotations

from harness_kit import pick_holding, plan, role_model
from edge_agent.harness.retrieval import question_query, searchable
from edge_agent.tools.registry import build_tools


def test_the_stores_searched_by_words_are_the_query_only_ones_without_an_effect():
    assert set(searchable(build_tools())) == {"check_notebook", "grep_memory", "find_file"}
    assert question_query("whats elis girlfriend called?") == "elis girlfriend called"  # "whats" is "what's"
    assert question_query("hi") == "hi" and question_query("?!") == ""


async def test_a_misrouted_plan_is_answered_from_the_store_the_question_words_found(make_harness):
    model = role_model(planner=[plan("calendar_question")], choose=pick_holding("3 May"))
    out = await make_harness(model, by_question=True).ask("eli bday when", request_id="q1")
    assert out.answer == "Eli Kemp (brother): Birthday 3 May 1990."
    assert "check_notebook" in out.by_question and out.by_question == out.tools_called[-len(out.by_question):]
    assert [c.role for c in model.calls] == ["planner", "choose"]  # the searches cost no model call


async def test_each_stores_pill_shows_once_and_remote_peers_are_left_to_the_plan(make_harness):
    asked_remote: list[str] = []

    async def remote_search(query, devices):
        asked_remote.append(query)
        return {"hits": [], "unreachable": []}

    model = role_model(planner=[plan("person_facts")], l3={"check_notebook": [{"query": "Eli birthday"}]},
                       choose=pick_holding("3 May"))
    out = await make_harness(model, by_question=True, remote_search=remote_search).ask(
        "When is Eli's birthday?", request_id="q2")
    assert out.pills[0] == "Notebook" and len(out.pills) == len(set(out.pills))
    assert set(out.by_question) == {"check_notebook", "grep_memory", "find_file", "queryCalendar"}
    assert asked_remote == []  # the question's words search this device's index only
    assert "remember" not in out.tools_called and out.pending is None


async def test_switched_off_nothing_but_the_plan_runs(make_harness):
    model = role_model(planner=[plan("person_facts")], l3={"check_notebook": [{"query": "Eli birthday"}]},
                       choose=pick_holding("3 May"))
    out = await make_harness(model, by_question=False).ask("When is Eli's birthday?", request_id="q3")
    assert out.by_question == [] and out.tools_called == ["check_notebook"]


async def test_a_later_parts_pronoun_means_whom_the_who_parts_answer_names(make_harness, store):
    """"who has my tent and whens his birthday": the journal names Eli, so "his" is Eli's; his page
    is looked up by that name, and the model choosing for the second part reads "Eli Kemp's"."""
    await store.notebook.add("person", "Mia Holt (friend)", "Mia Holt is Nadia's friend. Birthday 9 June 1991.",
                             "2026-10-02")
    await store.memory.add("journal", "Nadia", "2026-10-20T21:00:00+01:00",
                           "Lent Eli Kemp my tent; he promised it back soon.")
    model = role_model(planner=[plan("recall_conversation")], l3={"grep_memory": [{"query": "tent"}]},
                       choose=[{"lines": [1]}, {"lines": [1]}])  # each part's best-ranked line
    out = await make_harness(model, by_question=True).ask("who has my tent and whens his birthday", request_id="h1")
    second = [c for c in model.calls if c.role == "choose"][-1].prompt
    assert "whens Eli Kemp's birthday" in second and "1. Eli Kemp (brother): Birthday 3 May 1990." in second
    assert out.answer.splitlines() == ["Your journal, 20 Oct 2026: Lent Eli Kemp my tent; he promised it back soon.",
                                       "Eli Kemp (brother): Birthday 3 May 1990."]


async def test_a_later_parts_pronoun_means_the_person_whose_page_answered_not_every_name_on_it(make_harness, store):
    """"who my plumber is, plus her invoice total": the answer is a line of Ada Moss's page that also
    names the owner, a firm, a street and a town; "her" is Ada Moss, the page's person."""
    await store.notebook.add("person", "Ada Moss (plumber)",
                             "Ada Moss is Nadia's plumber, at Anchor Plumbing & Heating, 4 Dock Lane, Exeter.",
                             "2026-10-02")
    await store.notebook.add("fact", "Anchor Plumbing invoice", "Plumbing invoice total: £315.00, paid by transfer.",
                             "2026-10-08")
    model = role_model(planner=[plan("person_facts")], l3={"check_notebook": [{"query": "plumber invoice"}]},
                       choose=[{"lines": [1]}, {"lines": [1]}])
    await make_harness(model, by_question=True).ask("who my plumber is, plus her invoice total", request_id="h2")
    second = [c for c in model.calls if c.role == "choose"][-1].prompt
    assert "Question: Ada Moss's invoice total\n" in second


async def test_the_past_days_a_question_names_are_read_from_the_memory_log(make_harness, store):
    """"who texted me yesterday" has no word to search by: the memory log of yesterday is read
    (memory_on_days, no model call), and the entry written then is what the model reads first."""
    await store.memory.add("message", "Mia Holt", "2026-11-01T18:30:00+00:00", "Running late, start without me.")
    await store.memory.add("message", "Mia Holt", "2026-10-20T18:30:00+00:00", "See you next week.")
    model = role_model(planner=[plan("calendar_question")], choose=[{"lines": [1]}])  # a misrouted plan, too
    out = await make_harness(model, by_question=True).ask("who texted me yesterday", request_id="d1")
    assert "memory_on_days" in out.by_question and out.pills.count("Memory") == 1
    assert out.answer == "Message from Mia Holt, 1 Nov 2026: Running late, start without me."
    prompt = [c for c in model.calls if c.role == "choose"][-1].prompt
    assert "who texted me yesterday (Sun 1 Nov)" in prompt


async def test_a_month_named_stays_a_word_to_find_when_nothing_said_is_asked(make_harness, store):
    """"how much was the electric in june": the bill line saying June ranks first (only "who texted
    me yesterday"-like questions drop their date words)."""
    await store.notebook.add("fact", "Electricity", "Usage was 797 kWh, costing £67.15. The June total was £86.07.",
                             "2026-07-02")
    model = role_model(planner=[plan("person_facts")], l3={"check_notebook": [{"query": "electricity"}]},
                       choose=[{"lines": [1]}])
    out = await make_harness(model, by_question=True).ask("how much was the electric in june", request_id="m1")
    assert out.answer == "Electricity: The June total was £86.07."


async def test_how_long_until_an_event_reads_today_and_counts_the_days(make_harness, store):
    """"how long till the book launch": today's date is read by the date tool (no model call) and the
    answer counts from it to the day of the event's line, before that line."""
    from datetime import date

    from edge_agent.store.recurrence import EventRecord
    await store.calendar.upsert(EventRecord("launch", "Book launch", date(2026, 11, 20), date(2026, 11, 21), True,
                                            location="Foyles"))
    model = role_model(planner=[plan("calendar_question")])
    out = await make_harness(model, by_question=True).ask("how long till the book launch", request_id="c1")
    assert "current_date" in out.by_question
    assert out.answer.splitlines() == ["Fri 20 Nov is in 18 days.", "Calendar: Book launch — Fri 20 Nov (all day) @ Foyles"]
    assert {"store": "date", "title": "today", "device": None, "text": ["Today is Mon 2 Nov."]} in out.sources
    # asked where, not how long: no date read, nothing counted
    model = role_model(planner=[plan("calendar_question")])
    out = await make_harness(model, by_question=True).ask("where is the book launch", request_id="c2")
    assert "current_date" not in out.by_question and out.answer == "Calendar: Book launch — Fri 20 Nov (all day) @ Foyles"

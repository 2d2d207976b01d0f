"""A calendar question that names no day: the open range, searched by the asker's words."""
from __future__ import annotations

from datetime import date, timedelta

from harness_kit import plan, role_model
from harness_kit import pick_holding
from edge_agent.harness.by_name import about, beyond_dates, names_all, topic_terms
from edge_agent.store.recurrence import EventRecord
from edge_agent.tools.base import ToolResult


def event(title: str, day: str, location: str = "", notes: str = "") -> dict:
    return {"uid": title, "title": title, "start": day, "end": day, "all_day": True, "location": location,
            "notes": notes}


EVENTS = [event("Drawing class", "2026-11-03", "Inkwell Studio"), event("Clocks go back", "2026-10-25"),
          event("Book launch", "2026-11-20", "Foyles", "Signed copies £12"),
          event("Oakbrook Christmas party", "2026-12-18", "The Tannery Rooms"),
          event("Christmas at Gran's", "2026-12-24")]
SPAN = "2026-10-03 to 2027-01-31"


def calendar(events: list[dict]) -> ToolResult:
    return ToolResult(f"{len(events)} events", events, channel="events", pill="Calendar")


def test_the_events_that_mention_the_most_of_the_askers_words_are_kept():
    out = about(calendar(EVENTS), "Where's the Oakbrook Christmas party?", SPAN)
    assert [e["title"] for e in out.payload] == ["Oakbrook Christmas party"]  # not "Christmas at Gran's"
    assert out.found and out.text.splitlines()[0] == "1 events mentioning oakbrook, christmas, party, " + SPAN + ":"
    assert "The Tannery Rooms" in out.text
    # notes and places count as the event's words
    assert [e["title"] for e in about(calendar(EVENTS), "How much are the signed copies?", SPAN).payload] == \
        ["Book launch"]


def test_no_event_mentioning_the_words_is_nothing_found():
    out = about(calendar(EVENTS), "When did I last go skiing?", SPAN)  # "go" is no name: not "Clocks go back"
    assert not out.found and out.payload == [] and out.text == f"No events between {SPAN} mention skiing."


def test_a_question_about_the_calendar_itself_keeps_every_event():
    assert topic_terms("What's coming up on my calendar?") == []
    out = about(calendar(EVENTS), "What's coming up on my calendar?", SPAN)
    assert out.payload == EVENTS


async def test_with_no_day_named_the_calendar_is_read_over_the_open_range_by_name(make_harness, store):
    await store.calendar.upsert(EventRecord("launch", "Book launch", date(2026, 11, 20), date(2026, 11, 21), True,
                                            location="Foyles"))
    await store.calendar.upsert(EventRecord("swim", "Swim", date(2026, 11, 21), date(2026, 11, 22), True))
    model = role_model(planner=[plan("calendar_question")])
    out = await make_harness(model).ask("Where is the book launch?", request_id="bn1")
    assert [c.role for c in model.calls] == ["planner"]  # the range is known: no L3 writes it
    assert out.answer == "Calendar: Book launch — Fri 20 Nov (all day) @ Foyles"
    # a day named: that day's events, every one
    model = role_model(planner=[plan("calendar_question")])
    out = await make_harness(model).ask("What's on 21 November?", request_id="bn2")
    assert out.answer == "21 November, Sat 21 Nov: Swim — Sat 21 Nov (all day)"


def test_a_word_counts_at_the_start_of_a_longer_one():
    events = [event("Haircut at Comb & Co", "2026-11-21"), event("Swim", "2026-11-22")]
    out = about(calendar(events), "what time is the hair appointment again", SPAN)
    assert [e["title"] for e in out.payload] == ["Haircut at Comb & Co"]


def test_a_short_stem_does_not_count_at_the_start_of_another_word():
    # "skiing" stems to "ski", which starts "skipping" and "skin"; the ski lesson is still named
    events = [event("Call with Nana", "2026-11-21", notes="Bring the skipping rope and the skin cream."),
              event("Ski lesson", "2026-11-22")]
    out = about(calendar(events), "what skiing have we got booked", SPAN)
    assert [e["title"] for e in out.payload] == ["Ski lesson"]
    out = about(calendar(events[:1]), "what skiing have we got booked", SPAN)
    assert not out.found and out.payload == []
    business = [event("Business review", "2026-11-21")]
    assert not about(calendar(business), "when does the bus come", SPAN).found


def test_with_no_name_found_the_events_the_question_calls_them_are_kept():
    events = [event("Dermatology appointment", "2026-11-21"), event("Swim", "2026-11-22")]
    out = about(calendar(events), "Is the hospital appointment soon? what day is it", SPAN)
    assert [e["title"] for e in out.payload] == ["Dermatology appointment"]
    assert about(calendar(events), "What appointments have I got?", SPAN).payload == events  # no name: all


async def test_an_event_that_names_only_part_of_what_is_asked_is_not_the_answer(make_harness, store):
    """"running club agm when is it": the club's weekly ride mentions "running club", not the AGM,
    which a note gives; every store found is ranked instead of the ride being listed."""
    ride = [event("Running club ride", "2026-11-07")]
    assert not names_all(ride, "running club agm when is it") and names_all(ride, "when's the running club ride")
    await store.calendar.upsert(EventRecord("ride", "Running club ride", date(2026, 11, 7), date(2026, 11, 8), True))
    await store.notebook.add("fact", "Running club", "The running club AGM is at Kingsley Rooms on 27 November.",
                             "2026-10-20")
    model = role_model(planner=[plan("calendar_question")], choose=pick_holding("AGM"))
    out = await make_harness(model, by_question=True).ask("running club agm when is it", request_id="bn3")
    assert out.answer == "Running club: The running club AGM is at Kingsley Rooms on 27 November."
    model = role_model(planner=[plan("calendar_question")])
    out = await make_harness(model, by_question=True).ask("when's the running club ride", request_id="bn4")
    assert out.answer == "Calendar: Running club ride — Sat 7 Nov (all day)"


async def test_a_date_question_that_names_an_event_is_answered_with_its_events_in_the_days_named(make_harness, store):
    """"film club next month whats the date" planned as a date question: the film club's evening
    next month, not next month's first and last day; a date question naming nothing found beyond
    its dates ("whats the date mate") is still answered with the dates."""
    for uid, day in (("film-nov", date(2026, 11, 5)), ("film-dec", date(2026, 12, 3))):
        await store.calendar.upsert(EventRecord(uid, "Film club", day, day + timedelta(days=1), True))
    model = role_model(planner=[plan("date_question")])
    out = await make_harness(model, by_question=True).ask("film club next month whats the date", request_id="dq1")
    assert out.answer == "Next month, Tue 1 Dec to Thu 31 Dec: Film club — Thu 3 Dec (all day)"
    model = role_model(planner=[plan("date_question")])
    out = await make_harness(model, by_question=True).ask("whats the date mate", request_id="dq2")
    assert out.answer == "Today is Monday, 2026-11-02."
    # words of an aside, or ones no event mentions all of, name no event
    await store.calendar.upsert(EventRecord("party", "Garden working party", date(2026, 11, 14), date(2026, 11, 15), True))
    for question in ("what day of the week is it, film club brain", "work out next week in actual dates for me"):
        model = role_model(planner=[plan("date_question")])
        out = await make_harness(model, by_question=True).ask(question, request_id="dq3")
        assert out.answer.startswith("Today is Monday, 2026-11-02."), (question, out.answer)
    assert beyond_dates("date 3 weeks from today?", date(2026, 11, 2)) == []
    assert [t.word for t in beyond_dates("film club next month whats the date", date(2026, 11, 2))] == ["film", "club"]


async def test_what_someone_said_on_a_day_is_not_that_days_calendar(make_harness, store):
    """"what did eli text me yesterday" planned as a calendar question: Eli's message, not the
    events of yesterday."""
    await store.calendar.upsert(EventRecord("swim", "Swim", date(2026, 11, 1), date(2026, 11, 2), True))
    await store.memory.add("message", "Eli Kemp", "2026-11-01T19:00:00+00:00", "Bring the tent on Saturday.")
    model = role_model(planner=[plan("calendar_question")], choose=pick_holding("tent"))
    out = await make_harness(model, by_question=True).ask("what did eli text me yesterday", request_id="sd1")
    assert out.answer == "Message from Eli Kemp, 1 Nov 2026: Bring the tent on Saturday."
    for question in ("what was on yesterday", "tell me what was on yesterday", "anything yesterday? before I say yes"):
        model = role_model(planner=[plan("calendar_question")])
        out = await make_harness(model, by_question=True).ask(question, request_id="sd2")
        assert out.answer.endswith("Sun 1 Nov: Swim — Sun 1 Nov (all day)"), question

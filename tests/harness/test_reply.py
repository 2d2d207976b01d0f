"""The reply: candidates cut from exact bytes, the model's one choice, and the answer composed from it."""
from __future__ import annotations

from datetime import date, datetime


from harness_kit import LEO_BODY, PLANTED, RESUME_TEXT, pick, pick_holding, plan, role_model
from edge_agent.harness import reply as replies
from edge_agent.harness.channels import SideChannels
from edge_agent.harness.reply import (CANDIDATES, MAX_PICKS, NOT_FOUND, PER_ITEM, Span, calendar_reply, candidates,
                                      composed, date_reply, numbered, spans_of, unwrap)
from edge_agent.harness.turn import CalendarRead
from edge_agent.store.recurrence import EventRecord
from edge_agent.tools.base import ToolResult


def note(i: int, title: str, body: str) -> dict:
    return {"id": i, "kind": "fact", "title": title, "body": body, "updated": "2026-10-01"}


def channels_with(*notes: dict, memory: tuple = (), files: tuple = ()) -> SideChannels:
    ch = SideChannels()
    ch.add(ToolResult("n", list(notes), channel="notes"))
    if memory:
        ch.add(ToolResult("m", list(memory), channel="memory"))
    for hit in files:
        ch.add(ToolResult("f", {"hits": [hit], "best": hit, "unreachable": []}, channel="files"))
    return ch


# -- spans ----------------------------------------------------------------------------------------
def test_a_note_is_cut_into_sentences_and_list_parts():
    assert spans_of("Dr. Nair is at 8 Quay Street. Phone 0117 496 0733. Next check-up 24 November.") == [
        "Dr. Nair is at 8 Quay Street.", "Phone 0117 496 0733.", "Next check-up 24 November."]
    assert spans_of("Bristol, UK  ·  clara@example.com  ·  07700 900412") == [
        "Bristol, UK", "clara@example.com", "07700 900412"]
    assert spans_of("Rent £1,150; deposit £1,325 — protected") == ["Rent £1,150", "deposit £1,325", "protected"]


def test_a_long_sentence_is_cut_at_its_commas_and_nothing_is_lost():
    long = ", ".join(f"clause number {i} of a very long sentence" for i in range(12)) + "."
    pieces = spans_of(long)
    assert len(pieces) > 1 and all(len(p) <= replies.SPAN_CHARS for p in pieces)
    assert ", ".join(pieces) == long


def test_a_short_message_stays_whole_a_note_does_not():
    message = "The Corvid Rail presentation went well. Sofia said it was the clearest deck she had seen."
    assert spans_of(message, whole=True) == [message]
    assert len(spans_of(message)) == 2


def test_sentences_that_speak_to_the_assistant_are_never_spans():
    assert spans_of(f"Order LC-55821 is late. {PLANTED}") == ["Order LC-55821 is late."]
    assert spans_of(PLANTED, whole=True) == []


def test_wrapped_file_lines_are_joined_and_short_lines_kept():
    text = ("Built and maintain the customer churn model used for Mapleton Foods, Hollis & Grey and Corvid\n"
            "Rail.\nProfile\n- Mentor a graduate analyst.")
    assert unwrap(text) == ("Built and maintain the customer churn model used for Mapleton Foods, Hollis & Grey and "
                            "Corvid Rail.\nProfile\n- Mentor a graduate analyst.")


# -- candidates -----------------------------------------------------------------------------------
def test_the_sentence_holding_the_question_comes_first_and_a_title_counts():
    ch = channels_with(note(1, "Leo Marsh (brother)", LEO_BODY),
                       note(2, "Birthdays", "Mum's birthday is in June. Gran's birthday is in March."))
    best = candidates(ch, "When is Leo's birthday?")
    assert best[0].text == "Birthday 3 May 1990." and best[0].label == "Leo Marsh (brother)"


def test_relation_words_find_a_page_through_the_synonym_table():
    ch = channels_with(note(1, "Sam Ortiz (friend)", "Sam lives in Leeds with his partner Amira."),
                       note(2, "Car", "Blue Yaris."))
    assert [s.text for s in candidates(ch, "whats sams girlfriend called")][:1] == [
        "Sam lives in Leeds with his partner Amira."]


def test_a_two_part_question_gets_candidates_for_each_part():
    many = " ".join(f"Tom went to the park on day {i}." for i in range(10))
    ch = channels_with(note(1, "Tom (friend)", many + " Tom teaches English at Kingsdown."),
                       memory=({"id": 5, "kind": "message", "who": "Tom", "when": "2026-10-29T20:10:00+00:00",
                                "text": "Read The Overstory. The tree chapters will wreck you."},))
    texts = [s.text for s in candidates(ch, "Where does Tom teach, and what did he say about The Overstory?")]
    assert "Tom teaches English at Kingsdown." in texts
    assert "Read The Overstory. The tree chapters will wreck you." in texts


def test_candidates_are_capped_per_entry_and_in_number():
    body = " ".join(f"Leo fact number {i}." for i in range(20))
    ch = channels_with(note(1, "Leo", body), *[note(i, f"Leo {i}", f"Leo detail {i}.") for i in range(2, 12)])
    best = candidates(ch, "Leo")
    assert len(best) == CANDIDATES and sum(s.item == best[0].item for s in best) <= PER_ITEM


def test_nothing_matching_is_no_candidate():
    assert candidates(channels_with(note(1, "Car", "Blue Yaris.")), "What is the wifi password?") == []
    assert candidates(SideChannels(), "anything") == []


def test_the_models_own_search_words_rank_too():
    ch = channels_with(note(1, "Employer", "Clara is an analyst at Fernleaf."), note(2, "Car", "Blue Yaris."))
    assert candidates(ch, "who pays me", crafted=["employer"])[0].text == "Clara is an analyst at Fernleaf."


# -- choice and composition ---------------------------------------------------------------------------
async def test_every_line_is_judged_as_a_continuation_of_one_prompt(make_harness):
    seen = []

    def judge(info):
        seen.append(info)
        return [0.9 if "3 May" in c else 0.2 for c in info.continuations]

    model = role_model(planner=[plan("person_facts", "")], l3={"check_notebook": [{"query": "Leo birthday"}]},
                       judge=judge)
    out = await make_harness(model).ask("When is Leo's birthday?", request_id="j1")
    [info] = seen
    assert info.prompt.endswith("Question: When is Leo's birthday?\nLine: ")
    assert info.continuations[0].startswith("Leo Marsh (brother): ") and len(info.continuations) <= CANDIDATES
    assert all(c.endswith("\n\n### Assistant\n") for c in info.continuations)  # the line, then the turn's end
    assert out.answer == "Leo Marsh (brother): Birthday 3 May 1990."


async def test_the_likeliest_lines_answer_at_most_two_and_none_under_even_odds(make_harness):
    def judge(info):
        return [0.6, 0.95, 0.7, 0.4, 0.1, 0.0][:len(info.continuations)]

    model = role_model(planner=[plan("person_facts", "")], l3={"check_notebook": [{"query": "Leo"}]}, judge=judge)
    out = await make_harness(model, by_question=True).ask("Leo?", request_id="j2")
    assert len(out.answer.splitlines()) <= MAX_PICKS and len(out.sources) <= MAX_PICKS
    low = role_model(planner=[plan("person_facts", "")], l3={"check_notebook": [{"query": "Leo"}]},
                     judge=lambda info: [0.49] * len(info.continuations))
    assert (await make_harness(low).ask("Leo?", request_id="j3")).answer == NOT_FOUND


def test_the_answer_is_the_chosen_spans_after_where_they_come_from():
    spans = [Span("Birthday 3 May 1990.", "notebook", "Leo Marsh (brother)", "Leo Marsh (brother)", item=1),
             Span("Lives in Leeds.", "notebook", "Leo Marsh (brother)", "Leo Marsh (brother)", item=1),
             Span("Email clara@example.org.", "files", "cv.pdf", "cv.pdf on laptop", "laptop", 2,
                  {"device": "laptop", "path": "/d/cv.pdf", "name": "cv.pdf"})]
    assert numbered(spans).splitlines()[0] == "1. Leo Marsh (brother): Birthday 3 May 1990."
    out = composed(spans)
    assert out.text == ("Leo Marsh (brother): Birthday 3 May 1990. Lives in Leeds.\n"
                        "cv.pdf on laptop: Email clara@example.org.")
    assert out.sources == [
        {"store": "notebook", "title": "Leo Marsh (brother)", "device": None,
         "text": ["Birthday 3 May 1990.", "Lives in Leeds."]},
        {"store": "files", "title": "cv.pdf", "device": "laptop", "text": ["Email clara@example.org."]}]
    assert out.attachment == {"device": "laptop", "path": "/d/cv.pdf", "name": "cv.pdf"}


async def test_a_person_question_is_answered_with_the_chosen_sentence(make_harness):
    model = role_model(planner=[plan("person_facts", "")], l3={"check_notebook": [{"query": "Leo birthday"}]},
                       judge=pick_holding("3 May"))
    out = await make_harness(model).ask("when's leo's bday", request_id="r1")
    assert out.answer == "Leo Marsh (brother): Birthday 3 May 1990."
    assert out.sources == [{"store": "notebook", "title": "Leo Marsh (brother)", "device": None,
                            "text": ["Birthday 3 May 1990."]}]
    roles = [c.role for c in model.calls]
    assert roles == ["planner", "l3.check_notebook.1", "judge"]  # L2's determined step is not generated
    assert model.calls[1].prompt.rstrip().endswith("when's leo's bday\n\n### Assistant")  # L3 reads the question


async def test_none_of_these_is_not_found_and_nothing_is_quoted(make_harness):
    model = role_model(planner=[plan("person_facts")], l3={"check_notebook": [{"query": "Leo shoe size"}],
                                                           "grep_memory": [{"query": "Leo shoe size"}]},
                       judge=[pick(0)])
    out = await make_harness(model).ask("What is Leo's shoe size?", request_id="r2")
    assert out.answer == NOT_FOUND and out.sources == [] and out.attachment is None


async def test_a_judgement_that_fails_falls_back_to_the_best_ranked_line(make_harness):
    def broken(info):
        raise ValueError("the runtime failed")
    model = role_model(planner=[plan("person_facts")], l3={"check_notebook": [{"query": "Leo birthday"}]},
                       judge=broken)
    out = await make_harness(model).ask("When is Leo's birthday?", request_id="r3")
    assert out.answer == "Leo Marsh (brother): Birthday 3 May 1990." and out.exit_kind == "complete"


async def test_a_located_file_is_attached_and_named(make_harness):
    model = role_model(planner=[plan("find_document")],
                       l3={"find_file": [{"query": "curriculum vitae", "devices": []}]}, judge=pick_holding("Email"))
    out = await make_harness(model).ask("What email is on my resume?", request_id="r4")
    assert out.answer == "resume.txt on laptop: Email clara.brennan@example.org."
    assert out.attachment == {"device": "laptop", "path": out.attachment["path"], "name": "resume.txt"}
    assert out.sources[0]["store"] == "files" and out.sources[0]["device"] == "laptop"
    nothing = role_model(planner=[plan("find_document")],
                         l3={"find_file": [{"query": "curriculum vitae", "devices": []}]}, judge=[pick(0)])
    found = await make_harness(nothing).ask("find my resume", request_id="r5")
    assert found.answer == "Found resume.txt on laptop." and found.attachment["name"] == "resume.txt"
    assert RESUME_TEXT not in found.answer


async def test_a_question_needing_no_data_gets_the_models_own_words(make_harness):
    model = role_model(planner=[plan("none")], reply="Hello! Ask me about your notes.")
    out = await make_harness(model, by_question=True).ask("hi there", request_id="r6")
    assert out.answer == "Hello! Ask me about your notes." and out.sources == []


async def test_no_data_planned_but_the_question_words_find_it(make_harness):
    model = role_model(planner=[plan("none")], judge=pick_holding("3 May"))
    out = await make_harness(model, by_question=True).ask("leo birthday", request_id="r7")
    assert out.answer == "Leo Marsh (brother): Birthday 3 May 1990."
    assert "reply" not in [c.role for c in model.calls]


# -- rendered answers -----------------------------------------------------------------------------
def _event(title: str, start: str, end: str, notes: str = "", location: str = "") -> dict:
    return {"uid": title, "title": title, "start": start, "end": end, "all_day": False, "location": location,
            "notes": notes}


def test_a_calendar_answer_names_the_range_and_lists_its_events():
    read = CalendarRead(date(2026, 11, 9), date(2026, 11, 15), "next week",
                        [_event("Dentist", "2026-11-10T10:15:00+00:00", "2026-11-10T11:00:00+00:00", location="Park St"),
                         _event("Book club", "2026-11-12T19:00:00+00:00", "2026-11-12T21:00:00+00:00")])
    out = calendar_reply(read, "What's on next week?")
    assert out.text == ("Next week, Mon 9 Nov to Sun 15 Nov:\nDentist — Tue 10 Nov 10:15-11:00 @ Park St\n"
                        "Book club — Thu 12 Nov 19:00-21:00")
    assert out.sources[0]["store"] == "calendar"
    only = calendar_reply(read, "When is the dentist next week?")
    assert only.text == "Next week, Mon 9 Nov to Sun 15 Nov: Dentist — Tue 10 Nov 10:15-11:00 @ Park St"
    empty = calendar_reply(CalendarRead(date(2026, 11, 7), date(2026, 11, 8), "this weekend", []), "q")
    assert empty.text == "Nothing on your calendar this weekend (Sat 7 Nov to Sun 8 Nov)."


def test_the_days_asked_about_do_not_narrow_a_list():
    read = CalendarRead(date(2026, 11, 18), date(2026, 11, 30), "the rest of this month",
                        [_event("Fibre install", "2026-11-20T08:00:00+00:00", "2026-11-20T13:00:00+00:00",
                                notes="Joel is home on a rest day."),
                         _event("Dentist", "2026-11-24T10:15:00+00:00", "2026-11-24T11:00:00+00:00")])
    assert "Dentist" in calendar_reply(read, "What's left on my calendar for the rest of this month?").text


def test_a_date_answer_is_deterministic():
    payload = {"today": "2026-11-02", "weekday": "Monday", "ranges": {}}
    assert date_reply(payload, "What about this weekend?").text == (
        "Today is Monday, 2026-11-02. This weekend runs from 2026-11-07 to 2026-11-08.")
    assert date_reply(payload, "and next Friday?").text.endswith("Next Friday is Friday 2026-11-13.")


async def test_a_calendar_question_reads_the_named_range_without_a_generation(make_harness, store):
    await store.calendar.upsert(EventRecord("dentist-1", "Dentist check-up", datetime(2026, 11, 10, 10, 15),
                                            datetime(2026, 11, 10, 11, 0), False, location="Park Street Dental"))
    model = role_model(planner=[plan("calendar_question")])
    out = await make_harness(model).ask("what have I got next Tuesday?", request_id="c1")
    assert [c.role for c in model.calls] == ["planner"]  # the resolver knew the day: no L3, no choice
    assert out.answer == "Next Tuesday, Tue 10 Nov: Dentist check-up — Tue 10 Nov 10:15-11:00 @ Park Street Dental"
    assert out.tools_called[:2] == ["current_date", "queryCalendar"]

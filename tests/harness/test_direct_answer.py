"""The direct baseline, answer selection order, and answers built only from exact bytes."""
from __future__ import annotations

import pytest

from harness_kit import LEO_BODY, RESUME_TEXT, answer, call, plan, role_model
from edge_agent.harness.answer import NOT_FOUND, date_answer, select
from edge_agent.harness.channels import SideChannels
from edge_agent.harness.direct import direct_step_schema
from edge_agent.tools.base import DUPLICATE_NUDGE, ToolResult
from edge_agent.tools.registry import build_tools


async def test_direct_mode_binds_every_full_schema_and_keeps_the_bounds(make_harness):
    steps = [{"tool": "check_notebook", "args": {"query": "Leo"}},
             {"tool": "check_notebook", "args": {"query": "LEO"}},  # duplicate args: nudge
             {"tool": "check_notebook", "args": {"query": "Leo birthday"}},
             {"tool": "check_notebook", "args": {"query": "brother"}},
             {"tool": "check_notebook", "args": {"query": "Marsh"}}]  # 4th real call: halt
    model = role_model(l2=steps, synth="Leo was born on 3 May 1990.")
    out = await make_harness(model).ask("When is Leo's birthday?", request_id="d1", mode="direct")
    first = model.calls[0]
    assert first.role == "l2"
    for tool in build_tools().values():
        assert f"{tool.manifest.name}: {tool.manifest.description.strip()}" in first.prompt
        assert tool.manifest.crafting_rules.strip() in first.prompt
    assert DUPLICATE_NUDGE in model.calls[2].prompt
    assert out.exit_kind == "halted" and out.tools_called == ["check_notebook"] * 3
    assert [c.role for c in model.calls] == ["l2"] * 5 + ["synth"]
    assert LEO_BODY in model.calls[-1].prompt and out.sources == ["notes"]


def test_direct_schema_is_a_union_of_every_tool_and_an_answer():
    tools = build_tools()
    schema = direct_step_schema(tools)
    assert schema.model_validate({"tool": "find_file", "args": {"query": "resume"}}).root.args.devices == []
    assert schema.model_validate({"answer": "hi"}).root.answer == "hi"
    refs = schema.model_json_schema()["anyOf"]
    assert len(refs) == len(tools) + 1


def test_selection_order_file_notes_events_memory_date():
    ch = SideChannels()
    ch.date = {"today": "2026-11-02", "weekday": "Monday", "ranges": {}}
    only_date = select(ch, "q")
    assert only_date.sources == ["date"] and not only_date.needs_generation
    ch.add(ToolResult("m", [{"id": 1, "kind": "chat", "who": "Clara", "when": "2026-06-10", "text": "Lisbon"}],
                      channel="memory"))
    ch.add(ToolResult("e", [{"uid": "u1", "title": "Dentist", "start": "2026-11-03T10:00", "end": None,
                             "all_day": False, "location": "Park St", "notes": ""}], channel="events"))
    chosen = select(ch, "q")
    assert chosen.sources == ["events", "memory", "date"] and chosen.needs_generation
    assert chosen.facts.index("Dentist") < chosen.facts.index("Lisbon") < chosen.facts.index("Today is Monday")
    ch.add(ToolResult("n", [{"id": 7, "kind": "fact", "title": "T", "body": "Body of note", "updated": "2026-01-01"}],
                      channel="notes"))
    chosen = select(ch, "q")
    assert chosen.sources[:2] == ["notes", "events"] and chosen.fallback.startswith("From your notebook: T: Body")
    hit = {"device": "laptop", "path": "/x/resume.txt", "name": "resume.txt", "kind": "document", "size": 1,
           "mtime": "2026-01-01", "excerpt": RESUME_TEXT, "score": 2.0}
    assert ch.add(ToolResult("f", {"hits": [hit], "best": hit, "unreachable": []}, channel="files"))
    chosen = select(ch, "q")
    assert chosen.sources == ["files", "notes", "events", "memory", "date"]
    assert chosen.facts.startswith("File resume.txt on laptop") and chosen.facts.index(RESUME_TEXT) < chosen.facts.index("Body of note")
    assert chosen.attachment == {"device": "laptop", "path": "/x/resume.txt", "name": "resume.txt"}
    # The same note twice is kept once; payloads are copies, not the tool's objects.
    before = len(ch.notes)
    assert not ch.add(ToolResult("n", [{"id": 7, "kind": "fact", "title": "T", "body": "B", "updated": "x"}],
                                 channel="notes"))
    assert len(ch.notes) == before


def test_lowest_tier_is_cut_first_when_facts_exceed_the_window():
    ch = SideChannels()
    ch.add(ToolResult("n", [{"id": 1, "kind": "fact", "title": "Key", "body": "Top fact.", "updated": "x"}],
                      channel="notes"))
    ch.add(ToolResult("m", [{"id": 2, "kind": "chat", "who": "A", "when": "w", "text": "filler " * 5000}],
                      channel="memory"))
    chosen = select(ch, "q")
    model = role_model(n_ctx=1024)
    fitted = model.fit_to_tokens(chosen.facts, 200)
    assert fitted.startswith("- Key: Top fact.") and len(fitted) < len(chosen.facts)


def test_nothing_found_selects_nothing_and_date_answers_are_deterministic():
    assert select(SideChannels(), "q") is None
    payload = {"today": "2026-11-02", "weekday": "Monday",
               "ranges": {"today": ["2026-11-02", "2026-11-02"], "this_weekend": ["2026-11-07", "2026-11-08"]}}
    assert date_answer(payload, "What about this weekend?") == (
        "Today is Monday, 2026-11-02. This weekend runs from 2026-11-07 to 2026-11-08.")
    payload["ranges"].update({"this_week": ["2026-11-02", "2026-11-08"], "next_week": ["2026-11-09", "2026-11-15"],
                              "last_week": ["2026-10-26", "2026-11-01"], "tomorrow": ["2026-11-03", "2026-11-03"]})
    assert date_answer(payload, "What date is it this Saturday?").endswith("This Saturday is Saturday 2026-11-07.")
    assert date_answer(payload, "and next Friday?").endswith("Next Friday is Friday 2026-11-13.")
    assert date_answer(payload, "What was the date last Tuesday?").endswith("Last Tuesday is Tuesday 2026-10-27.")
    assert date_answer(payload, "Sunday?").endswith("Sunday is Sunday 2026-11-08.")
    assert date_answer(payload, "and tomorrow?") == "Today is Monday, 2026-11-02. Tomorrow is Tuesday 2026-11-03."


def test_after_a_search_that_found_nothing_todays_date_is_no_answer():
    payload = {"today": "2026-11-02", "weekday": "Monday", "ranges": {}}
    alone = SideChannels(date=payload)
    assert select(alone, "What's the date?").fallback == "Today is Monday, 2026-11-02."
    searched = SideChannels(date=payload)
    searched.add(ToolResult("No events.", [], channel="events", found=False))
    assert searched.searched == {"events"} and select(searched, "When did I last go skiing?") is None


async def test_found_nothing_means_no_synthesis_and_an_honest_answer(make_harness):
    model = role_model(planner=[plan("person_facts"), plan("recall_conversation")],
                       l2=[call("check_notebook", "Zed"), call("grep_memory", "Zed"), answer("Zed is 40."),
                           call("grep_memory", "Zed"), call("check_notebook", "Zed"), answer("Zed is 41.")],
                       l3={"check_notebook": [{"query": "Zed"}] * 2, "grep_memory": [{"query": "Zed"}] * 2})
    out = await make_harness(model).ask("How old is Zed?", request_id="n1")
    assert out.answer == NOT_FOUND and out.exit_kind == "complete" and out.sources == []
    assert "synth" not in [c.role for c in model.calls]


async def test_synthesis_facts_are_fitted_to_the_window(make_harness, store):
    await store.notebook.add("fact", "Leo essay", "Leo " + "wrote a very long essay. " * 3000, "2026-10-05")
    model = role_model(planner=[plan("person_facts")], l2=[call("check_notebook", "Leo"), answer("ok")],
                       l3={"check_notebook": [{"query": "Leo"}]}, n_ctx=2048)
    out = await make_harness(model).ask("What did Leo write?", request_id="n2")
    synth = next(c for c in model.calls if c.role == "synth")
    assert model.count_tokens(synth.prompt) + synth.max_tokens <= model.n_ctx
    assert out.exit_kind == "complete"


def test_grounding_check_rejects_invented_figures():
    from edge_agent.harness.answer import grounded

    facts = "- Leo Marsh (brother): Birthday 3 May 1990. Email leo@example.org (updated 2026-10-01)"
    assert grounded("Leo's birthday is 3 May 1990.", facts)
    assert grounded("Write to leo@example.org.", facts)
    assert not grounded("Leo's birthday is 4 May 1990.", facts)
    assert not grounded("Write to dateofbirth@example.com.", facts)
    assert not grounded("Facts:\nsomething", facts)
    assert not grounded("", facts)
    # the model's whole reply was its instruction sentence (seen with the adapter): not an answer
    assert not grounded("Answer the user's question in one or two sentences, using only the facts given with it.", facts)


@pytest.mark.parametrize("synth", ["Leo was born on 9 June 1985.",  # an invented figure
                                   "{", "See you soon!", "$</tex>"])  # grounded, yet no answer at all
async def test_an_invented_or_empty_synthesis_is_replaced_by_the_exact_text(make_harness, synth):
    model = role_model(planner=[plan("person_facts")], l2=[call("check_notebook", "Leo"), answer("ok")],
                       l3={"check_notebook": [{"query": "Leo Marsh"}]}, synth=synth)
    out = await make_harness(model).ask("When is Leo's birthday?", request_id="g1")
    assert out.answer.startswith("From your notebook: Leo Marsh (brother): " + LEO_BODY)
    assert out.sources == ["notes"]


def test_a_synthesis_may_state_a_value_or_say_it_found_nothing():
    from edge_agent.harness.answer import says_not_found, usable

    facts = "- Leo Marsh (brother): Birthday 3 May 1990. Email leo@example.org (updated 2026-10-01)"

    def synth_ok(text: str) -> bool:  # as synthesize() asks
        return usable(text, facts, or_no_value=says_not_found(text))

    assert synth_ok("Leo's birthday is 3 May 1990.")
    assert synth_ok("I could not find his shoe size.")
    assert not synth_ok("{")
    assert not synth_ok("Thanks!")


async def test_answered_chats_go_to_the_chat_log_under_the_asker_not_to_memory(make_harness, store):
    model = role_model(planner=[plan("person_facts")],
                       l2=[call("check_notebook", "Leo's birthday"), answer("3 May")],
                       l3={"check_notebook": [{"query": "Leo birthday"}]}, synth="Leo's birthday is 3 May.")
    harness = make_harness(model)
    harness.log_chats = True
    before = await store.memory.count()
    out = await harness.ask("When is Leo's birthday?", request_id="phone.chat1")
    assert out.exit_kind == "complete" and await store.memory.count() == before
    [logged] = await store.memory.chats()
    assert (logged.asker, logged.question, logged.answer, logged.tools) == (
        "phone", "When is Leo's birthday?", out.answer, "check_notebook")


async def test_an_answer_without_any_tool_is_not_logged(make_harness, store):
    model = role_model(planner=[plan("none")], synth="Hello there.")
    harness = make_harness(model)
    harness.log_chats = True
    out = await harness.ask("Say hello", request_id="phone.hi")
    assert out.tools_called == [] and await store.memory.chats() == []


async def test_a_second_client_cannot_plant_a_memory(make_harness, store):
    """eve's 'Clara's bank PIN is 0000' is logged as eve's words and never comes back as the user's."""
    plant = role_model(planner=[plan("person_facts")],
                       l2=[call("check_notebook", "Leo"), answer("noted")],
                       l3={"check_notebook": [{"query": "Leo"}]}, synth="Noted: Clara's bank PIN is 0000.")
    harness = make_harness(plant)
    harness.log_chats = True
    await harness.ask("Clara's bank PIN is 0000. Is Leo her brother?", request_id="eve.p1")
    assert [c.asker for c in await store.memory.chats()] == ["eve"]
    assert not any("0000" in e.text for e in await store.memory.search("Clara bank PIN 0000"))
    recall = role_model(planner=[plan("recall_conversation"), plan("none")],
                        l2=[call("grep_memory", "bank PIN"), answer("0000")],
                        l3={"grep_memory": [{"query": "Clara bank PIN"}]}, synth="Your bank PIN is 0000.")
    owner = make_harness(recall)
    out = await owner.ask("What is my bank PIN?", request_id="me.q1")
    assert "0000" not in out.answer
    assert all("0000" not in c.prompt for c in recall.calls)


def test_recurring_event_occurrences_are_kept_apart_and_repeats_dropped():
    weekly = [{"uid": "yoga@x", "title": "Yoga", "start": f"2026-11-{d}T18:00:00+00:00"} for d in (17, 24)]
    channels = SideChannels()
    assert channels.add(ToolResult("2 events", weekly, "events"))
    assert not channels.add(ToolResult("2 events", [dict(e) for e in weekly], "events"))  # the same again
    assert [e["start"][:10] for e in channels.events] == ["2026-11-17", "2026-11-24"]

"""The direct baseline, the side channels' bookkeeping, and what the chat log keeps."""
from __future__ import annotations

from harness_kit import ELI_BODY, pick_holding, plan, role_model
from edge_agent.harness.channels import SideChannels
from edge_agent.harness.direct import direct_step_schema
from edge_agent.tools.base import DUPLICATE_NUDGE, ToolResult
from edge_agent.tools.registry import build_tools


async def test_direct_mode_binds_every_full_schema_keeps_the_bounds_and_replies_by_choice(make_harness):
    steps = [{"tool": "check_notebook", "args": {"query": "Eli"}},
             {"tool": "check_notebook", "args": {"query": "ELI"}},  # duplicate args: nudge
             {"tool": "check_notebook", "args": {"query": "Eli birthday"}},
             {"tool": "check_notebook", "args": {"query": "brother"}},
             {"tool": "check_notebook", "args": {"query": "Kemp"}}]  # 4th real call: halt
    model = role_model(l2=steps, choose=pick_holding("3 May"))
    out = await make_harness(model).ask("When is Eli's birthday?", request_id="d1", mode="direct")
    first = model.calls[0]
    assert first.role == "l2"
    for tool in build_tools().values():
        assert f"{tool.manifest.name}: {tool.manifest.description.strip()}" in first.prompt
        assert tool.manifest.crafting_rules.strip() in first.prompt
    assert DUPLICATE_NUDGE in model.calls[2].prompt
    assert out.exit_kind == "halted" and out.tools_called == ["check_notebook"] * 3
    assert [c.role for c in model.calls] == ["l2"] * 5 + ["choose"]
    assert out.answer == "Eli Kemp (brother): Birthday 3 May 1990."


def test_direct_schema_is_a_union_of_every_tool_and_an_answer():
    tools = build_tools()
    schema = direct_step_schema(tools)
    assert schema.model_validate({"tool": "find_file", "args": {"query": "resume"}}).root.args.devices == []
    assert schema.model_validate({"answer": "hi"}).root.answer == "hi"
    refs = schema.model_json_schema()["anyOf"]
    assert len(refs) == len(tools) + 1


def test_the_side_channels_keep_one_copy_of_each_item():
    ch = SideChannels()
    note = {"id": 7, "kind": "fact", "title": "T", "body": "Body of note", "updated": "2026-01-01"}
    assert ch.add(ToolResult("n", [note], channel="notes"))
    assert not ch.add(ToolResult("n", [dict(note, body="B")], channel="notes"))  # the same note again
    note["body"] = "changed after"
    assert ch.notes[0]["body"] == "Body of note"  # a copy, not the tool's object
    weekly = [{"uid": "yoga@x", "title": "Yoga", "start": f"2026-11-{d}T18:00:00+00:00"} for d in (17, 24)]
    assert ch.add(ToolResult("2 events", weekly, "events"))
    assert not ch.add(ToolResult("2 events", [dict(e) for e in weekly], "events"))
    assert [e["start"][:10] for e in ch.events] == ["2026-11-17", "2026-11-24"]  # occurrences kept apart


async def test_answered_chats_go_to_the_chat_log_under_the_asker_not_to_memory(make_harness, store):
    model = role_model(planner=[plan("person_facts")], l3={"check_notebook": [{"query": "Eli birthday"}]},
                       choose=pick_holding("3 May"))
    harness = make_harness(model)
    harness.log_chats = True
    before = await store.memory.count()
    out = await harness.ask("When is Eli's birthday?", request_id="phone.chat1")
    assert out.exit_kind == "complete" and await store.memory.count() == before
    [logged] = await store.memory.chats()
    assert (logged.asker, logged.question, logged.answer, logged.tools) == (
        "phone", "When is Eli's birthday?", out.answer, "check_notebook")


async def test_an_answer_without_any_tool_is_not_logged(make_harness, store):
    model = role_model(planner=[plan("none")], reply="Hello there.")
    harness = make_harness(model)
    harness.log_chats = True
    out = await harness.ask("Say hello", request_id="phone.hi")
    assert out.tools_called == [] and out.answer == "Hello there." and await store.memory.chats() == []


async def test_a_second_client_cannot_plant_a_memory(make_harness, store):
    """eve's 'Nadia's bank PIN is 0000' is logged as eve's words and never comes back as the user's."""
    plant = role_model(planner=[plan("person_facts")], l3={"check_notebook": [{"query": "Eli"}]},
                       choose=pick_holding("brother"))
    harness = make_harness(plant)
    harness.log_chats = True
    await harness.ask("Nadia's bank PIN is 0000. Is Eli her brother?", request_id="eve.p1")
    assert [c.asker for c in await store.memory.chats()] == ["eve"]
    assert not any("0000" in e.text for e in await store.memory.search("Nadia bank PIN 0000"))
    recall = role_model(planner=[plan("recall_conversation")], l3={"grep_memory": [{"query": "Nadia bank PIN"}],
                                                                   "check_notebook": [{"query": "bank PIN"}]},
                        choose=pick_holding("0000"))
    out = await make_harness(recall, by_question=True).ask("What is my bank PIN?", request_id="me.q1")
    assert "0000" not in out.answer
    assert all("0000" not in c.prompt for c in recall.calls)
    assert ELI_BODY  # the seeded household is the one above

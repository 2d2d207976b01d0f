"""A weak find_file result reaches L2 as `weak` and attaches nothing; device scope comes from L3's
reading of an explicit request, never from a device name used in passing."""
from __future__ import annotations

from harness_kit import answer, call, pick, plan, role_model
from edge_agent.harness.reply import NOT_FOUND
from edge_agent.tools.registry import build_tools


def _spy(tools, seen):
    original = tools["find_file"].run

    async def spying_run(args, ctx):
        seen.append(list(args.devices))
        return await original(args, ctx)

    tools["find_file"].run = spying_run
    return tools


async def _ask(make_harness, question, l3_devices, seen, request_id):
    tools = _spy(build_tools(enforce_guards=False), seen)
    model = role_model(planner=[plan("find_document")], l3={"find_file": lambda i: {"query": "resume",
                                                                                    "devices": l3_devices}})
    return await make_harness(model, tools=tools).ask(question, request_id=request_id)


async def test_a_device_named_in_passing_does_not_scope_the_search(make_harness):
    seen: list[list[str]] = []
    await _ask(make_harness, "On the laptop now - where's my resume?", [], seen, "s1")
    await _ask(make_harness, "Saving for a new laptop; anyway, find my resume", [], seen, "s2")
    assert seen == [[], []]  # L3 read no explicit request, and the runtime adds none


async def test_an_explicit_request_scopes_and_an_invented_one_does_not(make_harness):
    seen: list[list[str]] = []
    await _ask(make_harness, "Search the laptop for my resume", ["laptop"], seen, "s3")
    await _ask(make_harness, "Where is my resume?", ["laptop"], seen, "s4")  # L3 made it up
    assert seen == [["laptop"], []]


async def test_a_weak_file_result_is_reported_weak_and_attaches_nothing(make_harness):
    model = role_model(planner=[plan("find_document")],
                       l2=[call("find_file", "resume zeppelin blimp"), answer("Here is your resume.")],
                       l3={"find_file": [{"query": "resume zeppelin blimp"}]}, choose=[pick(0)])
    out = await make_harness(model, constrain_l2=False).ask("Find the zeppelin blimp resume", request_id="w1")
    l2_after = [c.prompt for c in model.calls if c.role == "l2"][1]
    assert "Weak match only" in l2_after and "Nothing attached" in l2_after
    assert out.pills == ["Files"]
    assert out.attachment is None and out.sources == [] and out.answer == NOT_FOUND

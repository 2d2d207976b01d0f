"""Directly bound tools guard themselves: exact repeats get the nudge, a 4th call is refused."""
import pytest

from edge_agent.tools.base import DUPLICATE_NUDGE, MAX_CALLS_PER_TURN, ToolBudgetExceeded, ToolError
from edge_agent.tools.check_notebook import CheckNotebook
from edge_agent.tools.grep_memory import GrepMemory


async def test_exact_repeat_gets_the_nudge_and_costs_nothing(world_ctx):
    tool = CheckNotebook()
    first = await tool({"query": "dentist"}, world_ctx)
    assert first.found and first.payload
    repeat = await tool({"query": "Dentist"}, world_ctx)  # same call up to case
    assert (repeat.text, repeat.found, repeat.payload) == (DUPLICATE_NUDGE, False, None)
    assert repeat.pill == "Notebook" and repeat.channel == "notes"
    # The repeat did not use up budget: two more distinct calls still run.
    await tool({"query": "allergies"}, world_ctx)
    await tool({"query": "bike"}, world_ctx)


async def test_fourth_call_in_a_turn_is_refused_until_reset(world_ctx):
    tool = GrepMemory()
    for query in ("boiler", "Lisbon", "pottery"):
        await tool({"query": query}, world_ctx)
    with pytest.raises(ToolBudgetExceeded, match=f"{MAX_CALLS_PER_TURN} calls"):
        await tool({"query": "seals"}, world_ctx)
    tool.reset_guards()
    assert (await tool({"query": "seals"}, world_ctx)).found


async def test_guards_off_inside_the_harness(world_ctx):
    tool = GrepMemory(enforce_guards=False)
    results = [await tool({"query": "boiler"}, world_ctx) for _ in range(MAX_CALLS_PER_TURN + 2)]
    assert all(r.found and r.text != DUPLICATE_NUDGE for r in results)


async def test_bad_arguments_are_a_clear_tool_error(world_ctx):
    tool = GrepMemory()
    with pytest.raises(ToolError, match="bad arguments"):
        await tool({"query": ""}, world_ctx)
    with pytest.raises(ToolError, match="bad arguments"):
        await tool({"query": "x", "limit": 3}, world_ctx)
    with pytest.raises(ToolError, match="not JSON"):
        await tool("{query:", world_ctx)

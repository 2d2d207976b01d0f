"""Static prompt heads: warmed at start in the background, and each generation names the head its prompt starts with."""
from __future__ import annotations

import asyncio

from harness_kit import NOW, answer, call, plan, role_model
from edge_agent.app import build_assistant
from edge_agent.config import load_settings


def _settings(tmp_path):
    return load_settings(None, {"data_dir": str(tmp_path / "data")}, environ={})


async def test_every_static_head_is_warmed_after_start_and_each_prompt_starts_with_its_head(tmp_path):
    model = role_model(planner=[plan("find_document"), plan("calendar_question"), plan("none")],
                       l3={"find_file": [{"query": "resume", "devices": []}]})
    async with build_assistant(_settings(tmp_path), model=model, now=NOW) as assistant:
        await assistant.wait_warm()
        heads = await assistant.harness.static_heads()
        assert model.heads == heads and len(heads) == 14  # planner, 6 skills, 5 tools with arguments, choose, no-tools
        assert assistant.status()["heads"] == "ready"
        await assistant.ask("Find my resume", request_id="w1")
        await assistant.ask("What's on next week?", request_id="w2")
        await assistant.ask("hello there", request_id="w3")
    named = [c for c in model.calls if c.head is not None]
    assert {c.role.split(".")[0] for c in named} == {"planner", "l3", "reply"}  # no data here: nothing to choose
    assert len(named) == len(model.calls)  # every generation names its head
    for c in named:
        assert c.prompt.startswith(c.head) and c.head in heads, c.role


async def test_the_calendar_tools_head_carries_todays_date_context(tmp_path):
    model = role_model()
    async with build_assistant(_settings(tmp_path), model=model, now="2026-11-02T09:00:00") as assistant:
        heads = await assistant.harness.static_heads()
    calendar = [h for h in heads if "Your only tool is queryCalendar" in h]
    assert len(calendar) == 1 and "Today is Monday 2026-11-02." in calendar[0]


async def test_the_status_says_warming_until_the_heads_are_in(tmp_path):
    model = role_model()
    release = asyncio.Event()
    warm = model.warm_heads

    async def slow_warm(heads):
        await release.wait()
        await warm(heads)

    model.warm_heads = slow_warm
    async with build_assistant(_settings(tmp_path), model=model, now=NOW) as assistant:
        await asyncio.sleep(0)
        assert assistant.status()["heads"] == "warming" and assistant.warming
        release.set()
        await assistant.wait_warm()
        assert assistant.status() == {"heads": "ready", "head_cache_mb": 0.0}


async def test_a_failed_warm_up_costs_speed_not_the_service(tmp_path, caplog):
    model = role_model(planner=[plan("none")], reply="Hello.")

    async def broken(heads):
        raise RuntimeError("disk on fire")

    model.warm_heads = broken
    async with build_assistant(_settings(tmp_path), model=model, now=NOW) as assistant:
        await assistant.wait_warm()
        out = await assistant.ask("hi", request_id="w3")
    assert out.exit_kind == "complete" and "prompt heads not warmed: disk on fire" in caplog.text

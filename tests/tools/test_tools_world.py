"""Every real tool against the sample world, including empty results and the empty notebook query."""
import asyncio

import pytest

from edge_agent.tools.base import ToolContext, ToolError
from edge_agent.tools.registry import build_tools

NOTE_KEYS = {"id", "kind", "title", "body", "updated", "matched", "strength"}
MEMORY_KEYS = {"id", "kind", "who", "when", "text", "matched", "strength"}
EVENT_KEYS = {"uid", "title", "start", "end", "all_day", "location", "notes"}
HIT_KEYS = {"device", "path", "name", "kind", "size", "mtime", "excerpt", "snippet", "passages", "matched", "strength",
            "score"}


@pytest.fixture
def tools():
    return build_tools(enforce_guards=False)


async def test_check_notebook_finds_the_dentist_page(tools, world_ctx):
    result = await tools["check_notebook"]({"query": "dentist"}, world_ctx)
    assert result.found and (result.pill, result.channel) == ("Notebook", "notes")
    best = result.payload[0]
    assert set(best) == NOTE_KEYS and best["kind"] == "person" and "Priya Nair" in best["title"]
    assert "0117 496 0733" in best["body"]
    assert result.text.splitlines()[1].startswith(f"- {best['title']} [person, ")


async def test_check_notebook_empty_query_browses_newest_notes(tools, world_ctx):
    result = await tools["check_notebook"]({"query": ""}, world_ctx)
    assert result.found and result.text.startswith("5 most recent notes:")
    dates = [n["updated"] for n in result.payload]
    assert len(dates) == 5 and dates == sorted(dates, reverse=True)
    assert (await tools["check_notebook"]({}, world_ctx)).payload == result.payload


async def test_check_notebook_no_match_and_empty_notebook(tools, world_ctx, empty_store, world_info):
    miss = await tools["check_notebook"]({"query": "zeppelin"}, world_ctx)
    assert (miss.found, miss.text, miss.payload) == (False, "No notes match 'zeppelin'.", [])
    ctx = ToolContext(store=empty_store, now=world_ctx.now)
    empty = await tools["check_notebook"]({"query": ""}, ctx)
    assert (empty.found, empty.text, empty.payload) == (False, "The notebook is empty.", [])


async def test_grep_memory_hits_and_misses(tools, world_ctx):
    result = await tools["grep_memory"]({"query": "Pembrokeshire seals"}, world_ctx)
    assert result.found and set(result.payload[0]) == MEMORY_KEYS
    assert "seals" in result.payload[0]["text"] and result.payload[0]["when"][10] == "T"
    miss = await tools["grep_memory"]({"query": "zeppelin"}, world_ctx)
    assert (miss.found, miss.payload) == (False, []) and "zeppelin" in miss.text


async def test_find_file_attaches_the_resume_with_text_to_answer_from(tools, world_ctx):
    result = await tools["find_file"]({"query": "resume CV"}, world_ctx)
    best = result.payload["best"]
    assert result.found and set(best) == HIT_KEYS and best == result.payload["hits"][0]
    assert best["name"] == "Clara-Brennan-resume-2026.pdf" and best["device"] == "laptop"
    assert "@" in best["excerpt"] and result.payload["unreachable"] == []
    assert result.text.startswith("Best match (attached): Clara-Brennan-resume-2026.pdf on laptop")


async def test_find_file_devices_filter_binary_files_and_no_match(tools, world_ctx):
    on_pi = await tools["find_file"]({"query": "receipt", "devices": ["pi"]}, world_ctx)
    assert on_pi.payload["hits"] and {h["device"] for h in on_pi.payload["hits"]} == {"pi"}
    memo = await tools["find_file"]({"query": "voice memo recording", "devices": ["laptop"]}, world_ctx)
    wav = next(h for h in memo.payload["hits"] if h["name"].endswith(".wav"))
    assert wav["kind"] == "audio" and wav["excerpt"] == ""
    miss = await tools["find_file"]({"query": "zeppelin blueprint"}, world_ctx)
    assert (miss.found, miss.payload) == (False, {"hits": [], "best": None, "unreachable": [], "weak": False})
    assert miss.text == "No files match 'zeppelin blueprint'."
    with pytest.raises(ToolError):
        await tools["find_file"]({"query": "x", "devices": ["Not A Device!"]}, world_ctx)


async def test_find_file_merges_remote_hits_and_reports_unreachable_devices(tools, world_ctx):
    calls = []

    async def remote(query, devices):
        calls.append((query, devices))
        return {"hits": [{"device": "phone", "path": "/sdcard/resume-old.pdf", "name": "resume-old.pdf",
                          "kind": "document", "size": 10, "mtime": "2020-01-01T00:00:00+00:00",
                          "excerpt": "old resume", "score": 999.0}],
                "unreachable": ["tablet"]}

    ctx = ToolContext(store=world_ctx.store, now=world_ctx.now, remote_search=remote)
    result = await tools["find_file"]({"query": "resume"}, ctx)
    assert calls == [("resume", [])]
    # Each the best of its own source (a peer's 999 buys nothing): the newer one leads on the tie.
    assert [h["name"] for h in result.payload["hits"][:2]] == ["Clara-Brennan-resume-2026.pdf", "resume-old.pdf"]
    assert result.payload["hits"][1]["strength"] == "all"  # scored here from its name and excerpt
    assert result.payload["unreachable"] == ["tablet"] and "Unreachable: tablet." in result.text

    async def down(query, devices):
        raise asyncio.TimeoutError()

    ctx = ToolContext(store=world_ctx.store, now=world_ctx.now, remote_search=down)
    result = await tools["find_file"]({"query": "resume", "devices": ["laptop"]}, ctx)
    assert result.payload["best"]["name"] == "Clara-Brennan-resume-2026.pdf"
    assert result.payload["unreachable"] == ["laptop"]


async def test_query_calendar_lists_events_title_first(tools, world_ctx):
    result = await tools["queryCalendar"]({"start": "2026-11-24", "end": "2026-11-24"}, world_ctx)
    assert result.found and (result.pill, result.channel) == ("Calendar", "events")
    dentist = next(e for e in result.payload if "Dentist" in e["title"])
    assert set(dentist) == EVENT_KEYS and dentist["start"] == "2026-11-24T10:15:00+00:00"
    assert "- Dentist check-up with Dr. Priya Nair — Tue 24 Nov 10:15-10:45 @ Harbourside" in result.text
    starts = [e["start"] for e in result.payload]
    assert result.text.startswith(f"{len(starts)} events, 2026-11-24:")


async def test_query_calendar_writes_the_year_per_event_only_across_a_new_year(tools, world_ctx):
    result = await tools["queryCalendar"]({"start": "2026-12-28", "end": "2027-01-03"}, world_ctx)
    events = [line for line in result.text.splitlines()[1:] if " — " in line]
    assert result.found and events and all(" 2026" in line or " 2027" in line for line in events)
    same_year = await tools["queryCalendar"]({"start": "2026-11-24", "end": "2026-11-30"}, world_ctx)
    assert not any(" 2026" in line for line in same_year.text.splitlines()[1:])


async def test_query_calendar_empty_range_and_bad_ranges(tools, world_ctx):
    empty = await tools["queryCalendar"]({"start": "2026-11-18", "end": "2026-11-18"}, world_ctx)
    assert (empty.found, empty.payload) == (False, [])
    assert empty.text == "No events between 2026-11-18 and 2026-11-18."
    for bad in ({"start": "2026-11-25", "end": "2026-11-24"}, {"start": "2026-02-30", "end": "2026-03-01"},
                {"start": "2026-01-01", "end": "2027-06-01"}, {"start": "next week", "end": "2026-01-01"},
                {"start": "2026-01-01"}):
        with pytest.raises(ToolError, match="bad arguments"):
            await tools["queryCalendar"](bad, world_ctx)


async def test_current_date_uses_the_world_clock(tools, world_ctx):
    result = await tools["current_date"]({}, world_ctx)
    assert result.payload["today"] == "2026-11-18" and result.payload["timezone"] == "Europe/London"


async def test_list_devices_marks_this_device_online_and_asks_the_net_layer(tools, world_ctx):
    result = await tools["list_devices"]({}, world_ctx)
    assert result.payload == [{"id": "pi", "name": "pi", "online": True},
                              {"id": "laptop", "name": "laptop", "online": False}]

    async def peers():
        return [{"id": "laptop", "name": "Clara's laptop", "online": True}, {"id": "phone", "online": False}]

    ctx = ToolContext(store=world_ctx.store, now=world_ctx.now, list_remote_devices=peers)
    result = await tools["list_devices"]({}, ctx)
    assert [(d["id"], d["online"]) for d in result.payload] == [("pi", True), ("laptop", True), ("phone", False)]
    assert "- pi (id pi) — this device, online" in result.text


async def test_remember_adds_a_fact_the_notebook_then_finds(tools, world_ctx):
    result = await tools["remember"]({"note": "Clara's gym locker code is 3318."}, world_ctx)
    added = result.payload["added"]
    assert (result.pill, result.channel, result.found) == ("Remember", "effects", True)
    assert (added["kind"], added["body"], added["updated"]) == ("fact", "Clara's gym locker code is 3318.", "2026-11-18")
    assert tools["remember"].manifest.has_effect
    found = await tools["check_notebook"]({"query": "locker code"}, world_ctx)
    assert found.payload[0]["id"] == added["id"]

"""Match strength and the weak result kind; device scope checked against the paired devices."""
import pytest

from edge_agent.tools.base import ToolContext
from edge_agent.tools.find_file import with_strength
from edge_agent.tools.registry import build_tools


@pytest.fixture
def tools():
    return build_tools(enforce_guards=False)


async def test_a_near_miss_is_weak_and_attaches_nothing(tools, world_ctx):
    near = await tools["find_file"]({"query": "Biscuit pet insurance"}, world_ctx)
    assert near.kind == "weak" and near.found and near.weak
    assert near.payload["best"] is None and near.payload["weak"] and near.payload["hits"]
    assert all(h["strength"] == "some" for h in near.payload["hits"])
    assert near.text.startswith("Weak match only") and "Nothing attached" in near.text
    real = await tools["find_file"]({"query": "car insurance"}, world_ctx)
    assert real.kind == "ok" and real.payload["best"]["name"] == "car-insurance-schedule-2026.pdf"
    assert real.payload["best"]["matched"] == ["car", "insurance"] and real.payload["best"]["strength"] == "all"


async def test_notebook_and_memory_near_misses_are_weak(tools, world_ctx):
    notes = await tools["check_notebook"]({"query": "Biscuit pet insurance"}, world_ctx)
    assert notes.kind == "weak" and "matches only" in notes.text
    assert all(n["strength"] == "some" for n in notes.payload)
    memory = await tools["grep_memory"]({"query": "skiing holiday Alps"}, world_ctx)
    assert memory.kind in ("weak", "empty")
    swim = await tools["grep_memory"]({"query": "swimming lengths"}, world_ctx)
    assert swim.kind == "ok" and "lengths" in swim.payload[0]["text"] and swim.payload[0]["strength"] == "all"


async def test_strongest_matches_rank_first(tools, world_ctx):
    result = await tools["find_file"]({"query": "Christmas presents Joel"}, world_ctx)
    strengths = [h["strength"] for h in result.payload["hits"]]
    assert strengths == sorted(strengths, key=["all", "most", "some"].index)
    assert result.payload["best"]["name"] == "christmas-gift-ideas.md" and "fado record" in result.payload["best"]["excerpt"]


async def test_devices_are_checked_against_the_paired_ones(tools, world_ctx):
    laptop = await tools["find_file"]({"query": "payslip", "devices": ["laptop"]}, world_ctx)
    assert {h["device"] for h in laptop.payload["hits"]} == {"laptop"}
    typo = await tools["find_file"]({"query": "payslip", "devices": ["desktop"]}, world_ctx)
    assert "No paired device is called desktop; searched every device." in typo.text
    assert typo.payload["best"]["name"] == "fernleaf-payslip-2026-10.pdf"
    asked = []

    async def remote(query, devices):
        asked.append(devices)
        return {"hits": [], "unreachable": []}

    async def paired():
        return [{"id": "phone-2", "name": "Nadia's phone", "online": True}]

    ctx = ToolContext(store=world_ctx.store, now=world_ctx.now, remote_search=remote, list_remote_devices=paired)
    await tools["find_file"]({"query": "payslip", "devices": ["phone-2", "fridge"]}, ctx)
    assert asked == [["phone-2"]]


def test_merging_compares_scores_within_their_own_source_and_strength_first():
    from edge_agent.tools.find_file import merge_hits

    def hit(name, score, strength, mtime="2026-01-01"):
        return {"device": "d", "path": f"/{name}", "name": name, "score": score, "strength": strength, "mtime": mtime}

    local = [hit("a", 30.0, "all"), hit("b", 10.0, "all"), hit("c", 29.0, "some")]
    remote = [hit("r1", 2.0, "all"), hit("r2", 0.5, "all")]
    assert [h["name"] for h in merge_hits([local, remote])] == ["a", "r1", "b", "r2", "c"]


def test_a_peer_hit_without_strength_is_scored_here():
    hit = {"device": "laptop", "path": "/x/cv.txt", "name": "cv.txt", "excerpt": "Curriculum vitae of Nadia", "score": 9}
    scored = with_strength(hit, "Nadia CV")
    assert (scored["matched"], scored["strength"]) == (["nadia", "cv"], "all")
    assert with_strength(hit, "Nadia passport scan")["strength"] == "some"
    assert with_strength({**hit, "strength": "all"}, "zeppelin")["strength"] == "some"  # a peer's claim is not taken

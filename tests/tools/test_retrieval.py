"""Retrieval quality on the sample world: recall@3 over world/retrieval.jsonl must stay >= 0.9."""
import json

from edge_agent.eval.bench_retrieval import RetrievalRow, evaluate_rows, load_table, run_bench, summarise
from edge_agent.paths import WORLD_DIR
from edge_agent.tools.registry import build_tools

MIN_ROWS = 30
MIN_RECALL_AT_3 = 0.9


def test_table_is_big_enough_and_names_real_tools():
    rows = load_table(WORLD_DIR / "retrieval.jsonl")
    assert len(rows) >= MIN_ROWS
    assert {r.tool for r in rows} <= set(build_tools())
    assert {"check_notebook", "grep_memory", "find_file", "queryCalendar"} <= {r.tool for r in rows}


async def test_recall_at_3_on_the_sample_world():
    summary = await run_bench(WORLD_DIR, WORLD_DIR / "retrieval.jsonl")
    assert summary["rows"] >= MIN_ROWS
    assert summary["recall_at_3"] >= MIN_RECALL_AT_3, json.dumps(summary["misses"], indent=1)
    assert all(v >= MIN_RECALL_AT_3 - 0.15 for v in summary["recall_at_3_by_tool"].values()), summary


async def test_evaluator_counts_misses_and_ranks(world_store, world_info):
    rows = [RetrievalRow(tool="check_notebook", args={"query": "dentist"}, expect="PRIYA NAIR"),
            RetrievalRow(tool="check_notebook", args={"query": "dentist"}, expect="no such note title"),
            RetrievalRow(tool="find_file", args={"query": "zeppelin"}, expect="resume")]
    results = await evaluate_rows(world_store, rows, world_info.timezone, world_info.now)
    assert [r.rank for r in results] == [1, None, None]
    summary = summarise(results)
    assert (summary["recall_at_3"], summary["recall_at_1"], summary["mrr"]) == (0.3333, 0.3333, 0.3333)
    assert len(summary["misses"]) == 2

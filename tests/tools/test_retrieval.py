"""Retrieval quality on the sample world over world/retrieval.jsonl: recall, weak results, passages."""
import json

from edge_agent.eval.bench_retrieval import RetrievalRow, evaluate_rows, load_table, run_bench, summarise
from edge_agent.paths import WORLD_DIR
from edge_agent.tools.registry import build_tools

MIN_ROWS = 30
MIN_RECALL_AT_3 = 0.95
MIN_WEAK_PRECISION = 0.9
MIN_PASSAGE_HIT_RATE = 0.9
MAX_FALSE_WEAK_RATE = 0.05  # rows the data does answer that come back weak
MIN_HARD_ROWS = 40  # rows with a passage to reach the answer or a distractor to call weak


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
    assert summary["weak_rows"] + summary["passage_rows"] >= MIN_HARD_ROWS
    assert summary["weak_precision"] >= MIN_WEAK_PRECISION, summary["weak_misses"]
    assert summary["passage_hit_rate"] >= MIN_PASSAGE_HIT_RATE, summary["passage_misses"]
    assert summary["false_weak_rate"] <= MAX_FALSE_WEAK_RATE, summary["misses"]


async def test_weak_and_passage_rows_are_scored(world_store, world_info):
    rows = [RetrievalRow(tool="find_file", args={"query": "Biscuit pet insurance"}, weak=True),
            RetrievalRow(tool="find_file", args={"query": "car insurance"}, weak=True),  # a real match: a weak miss
            RetrievalRow(tool="find_file", args={"query": "tenancy notice period"}, expect="lease",
                         passage="at least one month's"),
            RetrievalRow(tool="find_file", args={"query": "lease"}, expect="lease", passage="not in the lease")]
    summary = summarise(await evaluate_rows(world_store, rows, world_info.timezone, world_info.now))
    assert (summary["weak_precision"], summary["passage_hit_rate"], summary["recall_at_3"]) == (0.5, 0.5, 1.0)
    assert len(summary["weak_misses"]) == 1 and len(summary["passage_misses"]) == 1


def test_a_row_is_either_an_expectation_or_a_distractor():
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        RetrievalRow(tool="find_file", args={"query": "x"})
    with pytest.raises(ValidationError):
        RetrievalRow(tool="find_file", args={"query": "x"}, expect="y", weak=True)
    with pytest.raises(ValidationError):
        RetrievalRow(tool="find_file", args={"query": "x"}, weak=True, passage="z")


async def test_evaluator_counts_misses_and_ranks(world_store, world_info):
    rows = [RetrievalRow(tool="check_notebook", args={"query": "dentist"}, expect="PRIYA NAIR"),
            RetrievalRow(tool="check_notebook", args={"query": "dentist"}, expect="no such note title"),
            RetrievalRow(tool="find_file", args={"query": "zeppelin"}, expect="resume")]
    results = await evaluate_rows(world_store, rows, world_info.timezone, world_info.now)
    assert [r.rank for r in results] == [1, None, None]
    summary = summarise(results)
    assert (summary["recall_at_3"], summary["recall_at_1"], summary["mrr"]) == (0.3333, 0.3333, 0.3333)
    assert len(summary["misses"]) == 2

"""Retrieval quality of the real tools on the sample world, over world/retrieval.jsonl.

Each row is {"tool", "args", "expect"?, "weak"?, "passage"?}: the tool runs once with exactly
those arguments.
- `expect`: the row counts as found when it (case-insensitive) is part of the key of one of the
  top three items: a note's title, a memory entry's text, a file's name, an event's title
  (recall_at_3). The result must not come back weak (false_weak_rate).
- `weak: true`: a distractor, nothing in the data answers it; the result must come back `weak`
  or empty (weak_precision).
- `passage`: text that must reach the answer: for find_file, in the attached best hit's excerpt
  (passage_hit_rate).
By default the world is loaded into a fresh temporary database, so the figures depend only on
the code and the world folder.
"""
from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from edge_agent.eval.summary import rate
from edge_agent.ingest.jsonl import explain, read_lines
from edge_agent.paths import WORLD_DIR

TOP_K = 3  # the recall cut-off
KEY_FIELDS = {"notes": "title", "memory": "text", "events": "title", "devices": "name"}
"""Channel -> the payload field an expectation is matched against (files use the hit's name)."""


class RetrievalRow(BaseModel):
    """One row of the retrieval table."""

    model_config = ConfigDict(extra="ignore")

    tool: str = Field(min_length=1)
    """Tool name."""
    args: dict[str, Any] = Field(default_factory=dict)
    """The exact arguments to call it with."""
    expect: str | None = Field(None, min_length=1)
    """Case-insensitive substring of the expected item's key."""
    weak: bool = False
    """A distractor: the data does not answer it, so the result must be weak or empty."""
    passage: str | None = Field(None, min_length=1)
    """Case-insensitive text that must be in what reaches the answer (the attached file's excerpt)."""

    @model_validator(mode="after")
    def _one_purpose(self) -> "RetrievalRow":
        if self.weak == (self.expect is not None):
            raise ValueError("a row has either `expect` or `weak: true`")
        if self.passage is not None and self.expect is None:
            raise ValueError("`passage` needs `expect`")
        return self


@dataclass(frozen=True)
class RowResult:
    """How one row went."""

    row: RetrievalRow
    """The table row."""
    rank: int | None
    """1-based rank of the first matching item, None when not returned at all."""
    keys: list[str]
    """Keys of the items returned, best first."""
    ms: float
    """Tool run time, milliseconds."""
    kind: str = "ok"
    """ok | weak | empty: the result kind the harness would report."""
    answer_text: str = ""
    """What reaches the answer from this result (the attached file's excerpt)."""


def load_table(path: Path) -> list[RetrievalRow]:
    rows = []
    for number, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        try:
            rows.append(RetrievalRow.model_validate(json.loads(line)))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}:{number}: not valid JSON ({err.msg})") from err
        except ValidationError as err:
            raise ValueError(f"{path}:{number}: {explain(err)}") from err
    return rows


def item_keys(channel: str, payload: Any) -> list[str]:
    """The ranked keys of a tool result's items."""
    if channel == "files":
        return [hit["name"] for hit in (payload or {}).get("hits", [])]
    if channel in KEY_FIELDS:
        return [str(item.get(KEY_FIELDS[channel], "")) for item in payload or []]
    return [json.dumps(payload, ensure_ascii=False)]


async def evaluate_rows(store, rows: list[RetrievalRow], timezone: str | None, now: Any) -> list[RowResult]:
    """Run every row against `store` with guards off; the clock is fixed at the world's now."""
    from edge_agent.tools.context import local_context
    from edge_agent.tools.registry import build_tools

    tools = build_tools(enforce_guards=False)
    ctx = local_context(store, timezone, "pi", now)
    out = []
    for row in rows:
        if row.tool not in tools:
            raise ValueError(f"retrieval table names an unknown tool {row.tool!r}")
        began = time.perf_counter()
        result = await tools[row.tool](row.args, ctx)
        ms = (time.perf_counter() - began) * 1000
        keys = item_keys(result.channel, result.payload)
        want = (row.expect or "").casefold()
        rank = next((i for i, key in enumerate(keys, 1) if want in key.casefold()), None) if want else None
        out.append(RowResult(row, rank, keys[:TOP_K], ms, result.kind, answer_text(result.channel, result.payload)))
    return out


def answer_text(channel: str, payload: Any) -> str:
    """The text of a result that synthesis would read: the attached file's passages."""
    if channel == "files":
        best = (payload or {}).get("best") or {}
        return str(best.get("excerpt") or "")
    return json.dumps(payload, ensure_ascii=False)


def summarise(results: list[RowResult]) -> dict:
    found_rows = [r for r in results if r.row.expect is not None]
    weak_rows = [r for r in results if r.row.weak]
    passage_rows = [r for r in found_rows if r.row.passage]
    n = len(found_rows) or 1
    by_tool: dict[str, list[RowResult]] = {}
    for r in found_rows:
        by_tool.setdefault(r.row.tool, []).append(r)
    times = sorted(r.ms for r in results) or [0.0]
    in_top = lambda r: r.rank is not None and r.rank <= TOP_K  # noqa: E731
    passage_hit = lambda r: r.row.passage.casefold() in r.answer_text.casefold()  # noqa: E731
    return {
        "rows": len(results),
        "recall_rows": len(found_rows),
        "recall_at_1": round(sum(r.rank == 1 for r in found_rows) / n, 4),
        "recall_at_3": round(sum(in_top(r) for r in found_rows) / n, 4),
        "mrr": round(sum(1 / r.rank for r in found_rows if r.rank) / n, 4),
        "recall_at_3_by_tool": {tool: round(sum(in_top(r) for r in rs) / len(rs), 4)
                                for tool, rs in sorted(by_tool.items())},
        "weak_rows": len(weak_rows),
        "weak_precision": rate(sum(r.kind in ("weak", "empty") for r in weak_rows), len(weak_rows)),
        "false_weak_rate": rate(sum(r.kind != "ok" for r in found_rows), len(found_rows)),
        "passage_rows": len(passage_rows),
        "passage_hit_rate": rate(sum(passage_hit(r) for r in passage_rows), len(passage_rows)),
        "tool_ms_mean": round(statistics.fmean(times), 2),
        "tool_ms_p95": round(times[min(len(times) - 1, int(0.95 * len(times)))], 2),
        "misses": [f"{r.row.tool} {json.dumps(r.row.args, ensure_ascii=False)} expected {r.row.expect!r}, "
                   f"top {TOP_K}: {r.keys} ({r.kind})" for r in found_rows if not in_top(r) or r.kind != "ok"],
        "weak_misses": [f"{r.row.tool} {json.dumps(r.row.args, ensure_ascii=False)} came back {r.kind}: {r.keys}"
                        for r in weak_rows if r.kind not in ("weak", "empty")],
        "passage_misses": [f"{r.row.tool} {json.dumps(r.row.args, ensure_ascii=False)}: {r.row.passage!r} not in "
                           f"{r.answer_text[:120]!r}" for r in passage_rows if not passage_hit(r)],
    }


async def plan_fact_recall(store, questions: Path, timezone: str | None, now: Any) -> dict:
    """Share of questions whose reference plan's tool calls return every expected fact in their payloads.

    Uses world/questions.jsonl rows that have plan calls with concrete args and expected facts;
    effectful tools are not run. It checks that the tools surface what an answer needs.
    """
    from edge_agent.tools.context import local_context
    from edge_agent.tools.registry import build_tools

    tools = build_tools(enforce_guards=False)
    ctx = local_context(store, timezone, "pi", now)
    scored = found = 0
    for line in read_lines(questions):
        if not line.strip():
            continue
        row = json.loads(line)
        calls = [c for c in ((row.get("plan") or {}).get("calls") or [])
                 if c.get("tool") in tools and "args" in c and not tools[c["tool"]].manifest.has_effect]
        facts = row.get("expected_facts") or []
        if not calls or not facts:
            continue
        payloads = [(await tools[c["tool"]](c["args"], ctx)).payload for c in calls]
        blob = json.dumps(payloads, ensure_ascii=False).casefold()
        scored += 1
        found += all(str(f).casefold() in blob for f in facts)
    return {"plan_questions": scored, "plan_fact_recall": round(found / scored, 4) if scored else None}


async def run_bench(world: Path, table: Path, db_path: Path | None = None) -> dict:
    """Load `world` (into a fresh temporary database unless db_path is given) and score the table."""
    from edge_agent.ingest.world import load_world, read_world_info
    from edge_agent.store import Store

    rows = load_table(table)
    info = read_world_info(world)
    with tempfile.TemporaryDirectory(prefix="edge-agent-bench-") as tmp:
        path = db_path or Path(tmp) / "bench.db"
        async with Store.open(path) as store:
            if db_path is None:
                report = await load_world(store, world)
                if report.problems:
                    raise ValueError("; ".join(report.problems))
            results = await evaluate_rows(store, rows, info.timezone or None, info.now)
            questions = world / "questions.jsonl"
            extra = await plan_fact_recall(store, questions, info.timezone or None, info.now) \
                if questions.is_file() else {}
    summary = {**summarise(results), **extra}
    summary["table"] = str(table)
    return summary


def add_arguments(parser) -> None:
    parser.add_argument("--world", type=Path, default=WORLD_DIR, help="world folder (default the sample world)")
    parser.add_argument("--table", type=Path, help="retrieval table (default WORLD/retrieval.jsonl)")
    parser.add_argument("--use-data-dir", action="store_true",
                        help="score the data dir's database instead of a fresh load of the world")


def run(args, settings) -> dict:
    world = Path(getattr(args, "world", WORLD_DIR))
    table = getattr(args, "table", None) or world / "retrieval.jsonl"
    db_path = settings.db_path if getattr(args, "use_data_dir", False) else None
    return asyncio.run(run_bench(world, table, db_path))

"""The eval report: report.md (tables comparing the modes) and chart.png (matplotlib, Agg).

Local measurements and the Pi projection sit side by side, the projection always labelled so.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Sequence

from edge_agent.eval.projection import PI5
from edge_agent.eval.scoring import BY_PLAN, LENIENT, POINTS

log = logging.getLogger(__name__)

REPORT_NAME = "report.md"
CHART_NAME = "chart.png"
SUMMARY_NAME = "summary.json"
RESULTS_NAME = "results.jsonl"
MAX_MISSES_LISTED = 150  # rows in the misses table; the rest are in results.jsonl
ANSWER_CHARS = 90  # of an answer quoted in the misses table
CHART_DPI = 110
POINT_LABELS = {"tool_selection": "tool selection", "arguments": "arguments", "interpretation": "interpretation",
                "termination": "termination", "end_to_end": "end to end"}


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _label(summary: dict[str, Any]) -> str:
    return summary.get("label") or summary["mode"]


def render_markdown(summaries: Sequence[dict[str, Any]], results: Sequence[dict[str, Any]], *,
                    questions_path: str = "", chart: str | None = CHART_NAME) -> str:
    labels = [_label(s) for s in summaries]
    lines = ["# edge-agent evaluation", ""]
    if questions_path:
        lines += [f"Questions: `{questions_path}`", ""]
    lines += ["| metric | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]

    def row(name: str, values: list[Any]) -> None:
        lines.append(f"| {name} | " + " | ".join(_cell(v) for v in values) + " |")

    row("model", [s.get("model", "") for s in summaries])
    row("questions", [_answered(s) for s in summaries])
    for p in POINTS:
        row(f"**{POINT_LABELS[p]}**", [f"{s[p]:.2f}" for s in summaries])
    row("end to end, lenient (a fact in the sources counted)", [f"{s[LENIENT]:.2f}" if LENIENT in s else "-"
                                                                for s in summaries])
    row("tool selection by the plan alone (not by the question's words)",
        [f"{s[BY_PLAN]:.2f}" if BY_PLAN in s else "-" for s in summaries])
    row("exit kinds", [", ".join(f"{k} {v}" for k, v in s["exit_kinds"].items()) for s in summaries])
    row("latency p50 / p95 (s), measured here", [f"{s['latency_ms_p50'] / 1000:.2f} / {s['latency_ms_p95'] / 1000:.2f}"
                                                 for s in summaries])
    row("model calls a question (mean)", [s["model_calls_mean"] for s in summaries])
    row("prefilled tokens a question (mean)", [s["prefill_tokens_mean"] for s in summaries])
    row("decoded tokens a question (mean)", [s["decode_tokens_mean"] for s in summaries])
    row("token counts from", [s.get("token_source", "the model's tokenizer") for s in summaries])
    row("*Pi 5 projected p50 / p95 (s) — projection*",
        [f"{s['pi_projected_s_p50']:.1f} / {s['pi_projected_s_p95']:.1f}" if s.get("pi_projected_s_p50") is not None
         else "not projected (stand-in token counts)" for s in summaries])
    row("peak RSS (MB), measured here", [s["peak_rss_mb"] for s in summaries])
    row("notes added (must be 0)", [s.get("notebook_delta", 0) for s in summaries])
    row("wall time of the run (s)", [s.get("wall_s", 0) for s in summaries])
    lines += ["", f"The Pi 5 rows are a **projection**, not a measurement: each question's measured prefilled and "
                  f"decoded token counts priced at {PI5.prefill_tok_s} tok/s prompt processing and "
                  f"{PI5.decode_tok_s} tok/s generation ({PI5.label}; source: {PI5.source}). They leave out tool "
                  f"time and tokenizer differences. Latency and RSS are measured on this machine.", ""]
    if chart:
        lines += [f"![five failure points and latency by mode]({chart})", ""]
    lines += _category_table(summaries, labels)
    lines += _misses_table(results)
    return "\n".join(lines) + "\n"


def _answered(summary: dict[str, Any]) -> str:
    planned = summary.get("planned_questions") or summary["questions"]
    if planned > summary["questions"]:
        return f"{summary['questions']} of {planned} (time box)"
    return str(summary["questions"])


def _category_table(summaries: Sequence[dict[str, Any]], labels: list[str]) -> list[str]:
    cats = sorted({c for s in summaries for c in s.get("by_category", {})})
    if not cats:
        return []
    out = ["## End to end by category", "", "| category | " + " | ".join(labels) + " |",
           "|---|" + "---|" * len(labels)]
    for cat in cats:
        cells = []
        for s in summaries:
            c = s.get("by_category", {}).get(cat)
            cells.append(f"{c['end_to_end']:.2f} (n={c['questions']})" if c else "–")
        out.append(f"| {cat} | " + " | ".join(cells) + " |")
    return out + [""]


def _misses_table(results: Sequence[dict[str, Any]]) -> list[str]:
    misses = [r for r in results if not r["score"].get("end_to_end")]
    out = ["## Misses", ""]
    if not misses:
        return out + ["None: every question was right end to end.", ""]
    out += ["| mode | id | category | exit | failed points | why | answer |", "|---|---|---|---|---|---|---|"]
    for r in misses[:MAX_MISSES_LISTED]:
        failed = [POINT_LABELS[p] for p in POINTS[:-1] if not r["score"].get(p)]
        why = "; ".join(f"{k}: {v}" for k, v in r["score"].get("misses", {}).items())
        out.append(f"| {r['mode']} | {r['id']} | {r['category']} | {r['exit_kind']} | {', '.join(failed)} | "
                   f"{_cell(why)[:400]} | {_cell(r['answer'])[:ANSWER_CHARS]} |")
    if len(misses) > MAX_MISSES_LISTED:
        out.append(f"\n{len(misses) - MAX_MISSES_LISTED} more misses in {RESULTS_NAME}.")
    return out + [""]


def render_chart(summaries: Sequence[dict[str, Any]], path: Path) -> Path:
    """Two panels: the five rates by mode; measured latency beside the projected Pi seconds."""
    import matplotlib

    matplotlib.use("Agg")  # headless: no display on a Pi or in CI
    import matplotlib.pyplot as plt

    labels = [_label(s) for s in summaries]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    width = 0.8 / max(len(summaries), 1)
    for i, s in enumerate(summaries):
        xs = [j + i * width for j in range(len(POINTS))]
        left.bar(xs, [s[p] for p in POINTS], width, label=labels[i])
    left.set_xticks([j + width * (len(summaries) - 1) / 2 for j in range(len(POINTS))])
    left.set_xticklabels([POINT_LABELS[p] for p in POINTS], rotation=20)
    left.set_ylim(0, 1.05)
    left.set_ylabel("share of questions right")
    left.set_title("Five failure points")
    left.legend()

    groups = [("local p50", "latency_ms_p50", 1000.0), ("local p95", "latency_ms_p95", 1000.0),
              ("Pi 5 p50 (projected)", "pi_projected_s_p50", 1.0), ("Pi 5 p95 (projected)", "pi_projected_s_p95", 1.0)]
    for i, s in enumerate(summaries):
        xs = [j + i * width for j in range(len(groups))]
        bars = right.bar(xs, [(s[key] or 0.0) / div for _, key, div in groups], width, label=labels[i])
        for bar, (name, _, _) in zip(bars, groups):
            if "projected" in name:
                bar.set_hatch("//")
    right.set_xticks([j + width * (len(summaries) - 1) / 2 for j in range(len(groups))])
    right.set_xticklabels([g[0] for g in groups], rotation=20)
    right.set_ylabel("seconds a question")
    right.set_title("Latency: measured here vs Pi 5 projection (hatched)")
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=CHART_DPI)
    plt.close(fig)
    return path


def write_report(out_dir: Path, summaries: Sequence[dict[str, Any]], results: Sequence[dict[str, Any]], *,
                 questions_path: str = "", own: Sequence[dict[str, Any]] | None = None) -> dict[str, Path]:
    """Write summary.json (this run's modes, `own`), report.md and chart.png (all `summaries`)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"summary": out_dir / SUMMARY_NAME, "report": out_dir / REPORT_NAME, "chart": out_dir / CHART_NAME}
    mine = list(summaries if own is None else own)
    paths["summary"].write_text(json.dumps({"questions_path": questions_path, "modes": mine},
                                           indent=2, sort_keys=True) + "\n", encoding="utf-8")
    render_chart(summaries, paths["chart"])
    paths["report"].write_text(render_markdown(summaries, results, questions_path=questions_path),
                               encoding="utf-8")
    return paths


def load_run(run_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(summaries, results) of an earlier run's out dir, for --compare."""
    try:
        summary = json.loads((run_dir / SUMMARY_NAME).read_text(encoding="utf-8"))
    except FileNotFoundError as err:
        raise FileNotFoundError(f"{run_dir} has no {SUMMARY_NAME}: not an eval out dir") from err
    results = []
    results_path = run_dir / RESULTS_NAME
    if results_path.exists():
        for line in results_path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                results.append(json.loads(line))
    return list(summary.get("modes", [])), results

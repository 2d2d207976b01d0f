"""`edge-agent eval`: score tool use on a question set, per mode; with --json the last line is JSON."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from edge_agent.paths import WORLD_DIR

DEFAULT_QUESTIONS = WORLD_DIR / "questions.jsonl"
HEADLINE = ("tool_selection", "arguments", "interpretation", "termination", "end_to_end", "lenient_end_to_end",
            "model_calls_mean",
            "latency_ms_p50", "latency_ms_p95", "pi_projected_s_p50", "pi_projected_s_p95", "peak_rss_mb")


def register(sub, parents) -> None:
    p = sub.add_parser("eval", parents=parents, help="evaluate tool use on a question set (harness/direct/oracle)",
                       description="Runs each question through the assistant in-process over the sample world "
                                   "with the world's fixed clock, and scores the five failure points. "
                                   "--model (a global option) picks the GGUF for harness and direct.")
    p.add_argument("--mode", action="append", default=None, metavar="MODE",
                   help="harness | direct | oracle; repeat or comma-separate to compare (default harness)")
    p.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS, metavar="FILE",
                   help=f"question file, one JSON object a line (default {DEFAULT_QUESTIONS})")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N questions")
    p.add_argument("--ids", default="", metavar="ID,ID", help="only these question ids")
    p.add_argument("--per-category", type=int, default=None, metavar="K",
                   help="only the first K questions of each category (a spread sample; --limit applies after)")
    p.add_argument("--max-minutes", type=float, default=None, metavar="M",
                   help="per mode, start no new question after M minutes (the report covers those answered)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="where results.jsonl, summary.json, report.md and chart.png go "
                        "(default a new dir under <data dir>/eval)")
    p.add_argument("--world", type=Path, default=WORLD_DIR, metavar="DIR",
                   help=f"the world the questions are written against (default {WORLD_DIR})")
    p.add_argument("--compare", type=Path, action="append", default=[], metavar="DIR",
                   help="an earlier eval out dir whose modes join the report's table and chart")
    p.add_argument("--json", action="store_true", help="print the overall metrics as one JSON line last")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, settings) -> int:
    from edge_agent.eval.questions import QuestionFileError
    from edge_agent.eval.session import EvalOptions, parse_modes, run_eval
    from edge_agent.eval.world_setup import WorldSetupError
    from edge_agent.llm.base import ModelError

    try:
        modes = parse_modes(args.mode or ["harness"])
    except ValueError as err:
        print(f"edge-agent eval: {err}", file=sys.stderr)
        return 2
    for flag, value in (("--limit", args.limit), ("--per-category", args.per_category),
                        ("--max-minutes", args.max_minutes)):
        if value is not None and value < 1:
            print(f"edge-agent eval: {flag} must be at least 1", file=sys.stderr)
            return 2
    opts = EvalOptions(modes=modes, questions=args.questions, world=args.world, out=args.out, limit=args.limit,
                       ids=tuple(i.strip() for i in args.ids.split(",") if i.strip()), per_category=args.per_category,
                       compare=tuple(args.compare),
                       time_box_s=args.max_minutes * 60 if args.max_minutes is not None else None)
    try:
        result = run_eval(settings, opts)
    except (QuestionFileError, WorldSetupError, ModelError, ValueError, FileNotFoundError) as err:
        print(f"edge-agent eval: {err}", file=sys.stderr)
        return 2
    for mode, summary in result["modes"].items():
        print(f"{mode}: " + ", ".join(f"{k} {summary[k]}" for k in HEADLINE), file=sys.stderr)
    print(f"report: {result['report']}", file=sys.stderr)
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        print(Path(result["report"]).read_text(encoding="utf-8"))
    return 0

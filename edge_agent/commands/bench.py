"""`edge-agent bench TARGET --json`: benchmarks that print one JSON object on their last line.

Each module edge_agent/eval/bench_<target>.py provides `run(args, settings) -> dict` and may
provide `add_arguments(parser)`.
"""
from __future__ import annotations

import importlib
import json
import pkgutil
import sys

from edge_agent import eval as eval_pkg


def register(sub, parents) -> None:
    p = sub.add_parser("bench", parents=parents, help="measure speed/quality; last line is JSON")
    targets = p.add_subparsers(dest="bench_target", metavar="TARGET", required=True)
    for info in sorted(pkgutil.iter_modules(eval_pkg.__path__), key=lambda m: m.name):
        if not info.name.startswith("bench_"):
            continue
        module = importlib.import_module(f"edge_agent.eval.{info.name}")
        name = info.name[len("bench_"):]
        tp = targets.add_parser(name, parents=parents, help=(module.__doc__ or "").strip().splitlines()[0])
        tp.add_argument("--json", action="store_true", help="print only the JSON result line")
        if hasattr(module, "add_arguments"):
            module.add_arguments(tp)
        tp.set_defaults(func=_runner(module))


def _runner(module):
    def run(args, settings) -> int:
        result = module.run(args, settings)
        if not args.json:
            for key, value in result.items():
                print(f"{key:>28}: {value}", file=sys.stderr)
        print(json.dumps(result, sort_keys=True))
        return 0
    return run

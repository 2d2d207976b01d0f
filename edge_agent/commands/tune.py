"""`edge-agent tune data|install`: the adapter's training set, and installing a trained adapter.

Training itself runs in its own environment (torch, transformers, peft): deploy/train-adapter.sh
does every step, from a fresh machine to the installed adapter.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


def register(sub, parents) -> None:
    p = sub.add_parser("tune", parents=parents, help="the bundled model's task adapter: data and install")
    group = p.add_subparsers(dest="tune_command", metavar="ACTION", required=True)
    data = group.add_parser("data", parents=parents, help="generate the training set from synthetic households")
    data.add_argument("--examples", type=int, default=1500, help="examples to collect (default 1500)")
    data.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    data.add_argument("--out", type=Path, required=True, help="JSONL to write (a .summary.json goes beside it)")
    data.set_defaults(func=run_data)
    install = group.add_parser("install", parents=parents, help="ship a converted adapter GGUF with its model card")
    install.add_argument("adapter", type=Path, help="the adapter GGUF from llama.cpp's convert_lora_to_gguf.py")
    install.add_argument("--train-report", type=Path, required=True, help="the training run's final JSON line")
    install.add_argument("--data-summary", type=Path, required=True, help="the training set's .summary.json")
    install.set_defaults(func=run_install)


def run_data(args, settings) -> int:
    from edge_agent.llm import resolve_model_path
    from edge_agent.tune.build import build

    info = build(args.examples, args.seed, args.out, resolve_model_path(settings),
                 progress=lambda line: print(line, file=sys.stderr))
    print(json.dumps(info))
    return 0


def run_install(args, settings) -> int:
    from edge_agent.llm import resolve_model_path
    from edge_agent.llm.adapter import install_adapter

    card = install_adapter(args.adapter, resolve_model_path(settings),
                           json.loads(args.train_report.read_text(encoding="utf-8").strip().splitlines()[-1]),
                           json.loads(args.data_summary.read_text(encoding="utf-8")))
    print(json.dumps(card))
    return 0

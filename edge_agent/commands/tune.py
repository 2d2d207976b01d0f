"""`edge-agent tune data|probe|install`: the adapter's training set, held-out checks, and installing.

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
    probe = group.add_parser("probe", parents=parents,
                             help="the planner's first choice on held-out generated households (JSON)")
    probe.add_argument("--households", type=int, default=8, help="households to read (default 8, ~39 questions each)")
    how = probe.add_mutually_exclusive_group()
    how.add_argument("--whole", action="store_true",
                     help="run the questions through the whole harness and score them like eval (~2 s each)")
    how.add_argument("--choices", action="store_true",
                     help="the reply's choice of lines on the teacher's choice prompts, against the oracle's (~1 s each)")
    probe.add_argument("--adapter", type=Path, default=None,
                       help="an adapter GGUF to judge instead of the configured one (e.g. tune-work/adapter.gguf)")
    probe.set_defaults(func=run_probe)
    install = group.add_parser("install", parents=parents, help="ship a converted adapter GGUF with its model card")
    install.add_argument("adapter", type=Path, help="the adapter GGUF from llama.cpp's convert_lora_to_gguf.py")
    install.add_argument("--train-report", type=Path, required=True, help="the training run's final JSON line")
    install.add_argument("--data-summary", type=Path, required=True, help="the training set's .summary.json")
    install.add_argument("--probe", type=Path, default=None, help="`tune probe`'s JSON for this adapter")
    install.add_argument("--probe-base", type=Path, default=None, help="`tune probe`'s JSON without it")
    install.add_argument("--probe-choices", type=Path, default=None, help="`tune probe --choices`'s JSON for it")
    install.add_argument("--examples", type=Path, default=None,
                         help="the training set (tune data's JSONL): its text is shipped beside the adapter")
    install.set_defaults(func=run_install)
    merge = group.add_parser("merge", parents=parents,
                             help="merge the adapter into the weights, check it against base + runtime LoRA, record both")
    merge.add_argument("--recipe", default=None,
                       help="q8_0 | q8_0_emb_q5_1 | q8_0_out_q5_1 | q5_k_m | q4_0 | q4_k_m | f16 (default: model.adapter_merge)")
    merge.add_argument("--households", type=int, default=4,
                       help="held-out households the two are compared on, the whole harness (default 4)")
    merge.add_argument("--no-check", action="store_true",
                       help="merge only (as setup does): compare nothing, write nothing into the adapter's card")
    merge.set_defaults(func=run_merge)


def run_data(args, settings) -> int:
    from edge_agent.llm import resolve_model_path
    from edge_agent.tune.build import build

    info = build(args.examples, args.seed, args.out, resolve_model_path(settings),
                 progress=lambda line: print(line, file=sys.stderr))
    print(json.dumps(info))
    return 0


def run_probe(args, settings) -> int:
    import asyncio
    import time

    from edge_agent.llm import load_model
    from edge_agent.tune.probe import probe_chooser, probe_harness, probe_households, probe_planner

    try:
        probe_households(args.households)
    except ValueError as err:
        print(f"edge-agent tune probe: {err}", file=sys.stderr)
        return 2
    if args.adapter is not None:
        settings = settings.model_copy(deep=True)
        settings.model.adapter = str(args.adapter)
    t0 = time.perf_counter()
    model = load_model(settings)
    say = lambda line: print(line, file=sys.stderr)  # noqa: E731
    try:
        if args.whole:
            summary = asyncio.run(probe_harness(model, settings, args.households, progress=say))
        elif args.choices:
            summary = asyncio.run(probe_chooser(model, args.households, progress=say)).summary()
        else:
            summary = asyncio.run(probe_planner(model, args.households, progress=say)).summary()
    finally:
        model.close()
    print(json.dumps({"model": model.name, **summary, "seconds": round(time.perf_counter() - t0, 1)}))
    return 0


def run_install(args, settings) -> int:
    from edge_agent.llm import resolve_model_path
    from edge_agent.llm.adapter import install_adapter

    card = install_adapter(args.adapter, resolve_model_path(settings),
                           _last_json(args.train_report),
                           json.loads(args.data_summary.read_text(encoding="utf-8")),
                           probe={"adapter": _last_json(args.probe), "base": _last_json(args.probe_base),
                                  "choices": _last_json(args.probe_choices)} if args.probe else None,
                           examples=args.examples)
    print(json.dumps(card))
    return 0


def _last_json(path: Path | None) -> dict | None:
    """The last line of a command's JSON output, or None without a file."""
    if path is None:
        return None
    return json.loads(path.read_text(encoding="utf-8").strip().splitlines()[-1])


def measure_head(base, adapter, models_dir) -> dict | None:
    """The second moment of the head's input measured on HEAD_TEXTS of the adapter's training
    examples through the q8_0 merge (the base's own head), beside the adapter and named in its card;
    None when it has no training set."""
    from edge_agent.llm.adapter import record_head_input, training_texts
    from edge_agent.llm.head_quant import input_moment
    from edge_agent.llm.merge import ensure_merged

    texts = training_texts(adapter.path)
    if not texts:
        print(f"edge-agent tune merge: {adapter.path.name} names no training set: its Q5_1 head is not "
              "fitted to the head's input", file=sys.stderr)
        return None
    reference = ensure_merged(base, adapter, models_dir, "q8_0")
    print(f"measuring the output head's input on {len(texts)} training examples", file=sys.stderr)
    moment, tokens = input_moment(reference.path, texts,
                                  progress=lambda done, total: print(f"  {done}/{total}", file=sys.stderr))
    record_head_input(adapter.path, moment, len(texts), tokens, reference.path.name)
    return {"texts": len(texts), "tokens": tokens}


def _has_head_moment(adapter) -> bool:
    """Whether the adapter's card names a head moment that is there and intact (else it is measured)."""
    from edge_agent.llm.adapter import AdapterError, head_moment_of

    try:
        return head_moment_of(adapter) is not None
    except AdapterError as err:
        print(f"edge-agent tune merge: {err}; measuring it again", file=sys.stderr)
        return False


def run_merge(args, settings) -> int:
    """Merge, then the fixed probe through both (same skill, calls and answer), into the card."""
    import asyncio
    import dataclasses

    from edge_agent.llm import load_model, resolve_model_path
    from edge_agent.llm.adapter import choose_adapter, read_card, record_merge
    from edge_agent.llm.merge import DEFAULT_MERGE, MERGE_FTYPES, ensure_merged, fits_head
    from edge_agent.tune.probe import agreement

    recipe = args.recipe or (settings.model.adapter_merge if settings.model.adapter_merge != "none" else DEFAULT_MERGE)
    if recipe not in MERGE_FTYPES:
        print(f"edge-agent tune merge: unknown recipe {recipe!r}; use one of {', '.join(MERGE_FTYPES)}",
              file=sys.stderr)
        return 2
    base = resolve_model_path(settings)
    adapter = choose_adapter(settings.model.adapter, base, settings.models_dir)
    if adapter is None:
        print("edge-agent tune merge: no adapter applies to this model", file=sys.stderr)
        return 2
    if fits_head(recipe) and not _has_head_moment(adapter):
        measured = measure_head(base, adapter, settings.models_dir)
        if measured is not None:
            adapter = dataclasses.replace(adapter, card=read_card(adapter.path) or {})  # with what was measured
    merged = ensure_merged(base, adapter, settings.models_dir, recipe)
    out: dict = {"merged": merged.card}
    if not args.no_check:
        runtime, fused = (settings.model_copy(deep=True) for _ in range(2))
        runtime.model.adapter_merge, fused.model.adapter_merge = "none", recipe
        first, second = load_model(runtime), load_model(fused)
        say = lambda line: print(line, file=sys.stderr)  # noqa: E731
        try:
            out["agreement"] = asyncio.run(agreement(first, second, settings, args.households, progress=say))
        finally:
            first.close()
            second.close()
    if not args.no_check:  # the card records a merge with its agreement (setup merges without touching it)
        record_merge(adapter.path, recipe, merged.card, out["agreement"])
    print(json.dumps(out))
    return 0

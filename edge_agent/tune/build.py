"""The training set: synthetic households -> the teacher's examples -> a balanced, tokenized JSONL.

    edge-agent tune data --examples 1500 --seed 1 --out tune-work/examples.jsonl

Households are generated and replayed until every role has its share of examples, each share
spread over at least MIN_HOUSEHOLDS households; duplicates (the same prompt and target) are dropped
and over-long examples skipped. Each line carries the
token ids the runtime's tokenizer makes (BOS + prompt, target + EOS), so training sees exactly
what inference sees. A summary (counts per role, tokens) is written beside it.
"""
from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from edge_agent.tune.dataset import generate
from edge_agent.tune.teacher import Example, household_examples, shuffled_choice

# Shares of the training set by role kind. The plan and the reply's choice are the two decisions
# every answer turns on; the plan's examples are short and share their menu's head, the choice's
# carry six candidate lines (a two-part question makes one choice a part). L3 crafts the search
# words from the asker's question. remember writes the asker's own words (harness/toolagent.py:
# no generation) and L2 writes nothing under the shipped skills (its steps are determined:
# harness/follower.py), so neither has a share. The model's own reply is only for small talk
# (teacher.SMALL_TALK: eight questions, so eight examples).
ROLE_SHARES = {"planner": 0.35, "choose": 0.45, "l3": 0.2, "reply": 0.004}
SHUFFLED_CHOICES = 0.5  # of the choice examples, taught with their lines in another order (teacher.shuffled_choice)
# Measured on held-out choices (households 5000-5001): the shipped chooser,
# taught with half shuffled, scores 0.87 in the ranker's order and 0.37 shuffled (it leans on line
# 1); one taught with all of them shuffled (5 Dec, same recipe otherwise) scored 0.69 and 0.50, and
# held-out end to end fell from 0.83 to 0.66 (4 households): it reads a little, but the ranker's
# order is worth more than this model's reading. A quarter shuffled (6 Dec, same recipe and seed
# otherwise) chose worse on held-out choice prompts (`tune probe --choices`, 5000-5007): 205/249
# against 212 half shuffled ("none" where no line answers 32/49 against 40; line 1 where it answers
# 171/191 against 170), though the oracle's line is the ranker's first in 191 of them.
MAX_EXAMPLE_TOKENS = 1024  # longer examples cost a whole step of padding; they are skipped
MIN_HOUSEHOLDS = 120  # each share is spread over at least this many households (menus, names, data)
MAX_HOUSEHOLDS = 600  # a bound on the replay, in case a share can never be filled


def kind(e: Example) -> str:
    """The example's share: planner | choose | l3 | reply (l2 if ever recorded)."""
    return e.role.split(".", 1)[0]


def quotas(total: int) -> dict[str, int]:
    return {k: max(1, round(total * share)) for k, share in ROLE_SHARES.items()}


async def collect(total: int, seed: int, work: Path, tokenizer: Any, progress=print) -> list[dict]:
    """Tokenized examples, balanced by role, from as many households as it takes."""
    want = quotas(total)
    per_household = {k: max(1, -(-n // MIN_HOUSEHOLDS)) for k, n in want.items()}
    have: dict[str, list[dict]] = {k: [] for k in want}
    seen: set[tuple[str, str]] = set()
    eos = tokenizer.eos_id
    t0 = time.perf_counter()
    for i in range(MAX_HOUSEHOLDS):
        if all(len(have[k]) >= want[k] for k in want):
            break
        ((folder, questions),) = generate(1, seed * 1000 + i, work / f"seed-{seed * 1000 + i}")
        examples = await household_examples(folder, questions, tokenizer, seed * 1000 + i, f"h{seed * 1000 + i}")
        rng = random.Random(seed * 1000 + i)
        rng.shuffle(examples)
        taken: Counter = Counter()
        for e in examples:
            k = kind(e)
            if k == "choose" and rng.random() < SHUFFLED_CHOICES:
                e = shuffled_choice(e, rng)
            if k not in want or len(have[k]) >= want[k] or taken[k] >= per_household[k] or (e.prompt, e.target) in seen:
                continue
            taken[k] += 1
            prompt_ids = tokenizer.tokenize(e.prompt, add_bos=True)
            target_ids = tokenizer.tokenize(e.target) + [eos]
            if len(prompt_ids) + len(target_ids) > MAX_EXAMPLE_TOKENS:
                continue
            seen.add((e.prompt, e.target))
            have[k].append({**asdict(e), "kind": k, "prompt_ids": prompt_ids, "target_ids": target_ids})
        progress(f"household {i + 1}: " + ", ".join(f"{k} {len(have[k])}/{want[k]}" for k in want)
                 + f" ({time.perf_counter() - t0:.0f} s)")
    rows = [r for k in want for r in have[k]]
    random.Random(seed).shuffle(rows)
    return rows


def summary(rows: list[dict]) -> dict[str, Any]:
    tokens = [len(r["prompt_ids"]) + len(r["target_ids"]) for r in rows]
    return {"examples": len(rows), "by_kind": dict(Counter(r["kind"] for r in rows)),
            "by_role": dict(Counter(r["role"] for r in rows)), "tokens": sum(tokens),
            "target_tokens": sum(len(r["target_ids"]) for r in rows),
            "mean_tokens": round(sum(tokens) / max(1, len(tokens)), 1), "max_tokens": max(tokens, default=0),
            "households": len({r["source"].split("/")[0] for r in rows})}


def write(rows: list[dict], out: Path) -> dict[str, Any]:
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    info = summary(rows)
    out.with_suffix(".summary.json").write_text(json.dumps(info, indent=1), encoding="utf-8")
    return info


def build(total: int, seed: int, out: Path, model_path: Path, progress=print) -> dict[str, Any]:
    from edge_agent.llm.llamacpp import LlamaCppModel

    tokenizer = LlamaCppModel(model_path, vocab_only=True, head_cache_mb=0)
    try:
        rows = asyncio.run(collect(total, seed, out.parent / "generated", tokenizer, progress))
    finally:
        tokenizer.close()
    return write(rows, out)

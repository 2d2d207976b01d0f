"""One training report from the stages' final JSON lines, for the adapter's card.

    python -m edge_agent.tune.stages STAGE1.json STAGE2.json ... > ALL.json
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


def last_line(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8").strip().splitlines()[-1])


def merge(stages: list[dict]) -> dict:
    """Steps, time and tokens summed; epochs spelt per stage; each stage kept whole under "stages"."""
    first, last = stages[0], stages[-1]
    tokens = sum(s["tokens"] for s in stages)
    train_s = sum(s["train_s"] for s in stages)
    return {
        "examples": first["examples"],
        "steps": sum(s["steps"] for s in stages),
        "batch": first["batch"],
        "epochs": " + ".join(f"{s['epochs']} ({s.get('roles', 'all')})" for s in stages),
        "rank": first["rank"],
        "trainable_parameters": first["trainable_parameters"],
        "load_s": round(sum(s["load_s"] for s in stages), 1),
        "train_s": round(train_s, 1),
        "tokens": tokens,
        "target_tokens": sum(s["target_tokens"] for s in stages),
        "tokens_per_s": round(tokens / max(train_s, 1e-9), 1),
        "first_loss": first["first_loss"],
        "last_loss_mean10": last["last_loss_mean10"],
        "stages": stages,
    }


def main(argv: list[str] | None = None) -> int:
    paths = [Path(a) for a in (argv if argv is not None else sys.argv[1:])]
    if not paths:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    print(json.dumps(merge([last_line(p) for p in paths])))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Train the LoRA adapter on CPU (runs in the training environment: torch, transformers, peft).

    python -m edge_agent.tune.train --data examples.jsonl --gguf MODEL.gguf --out DIR [--resume]

The examples carry token ids made by the runtime's own tokenizer (llama.cpp), so training sees
exactly what inference sees. The bundled GGUF is dequantized by transformers; LoRA (r 16 on the
attention and MLP projections) is trained with the loss on the target tokens only, and the LM
head is applied only at those positions (Gemma's 262k-token vocabulary would otherwise dominate
every step). Examples sharing a prompt head are batched together and the head is run once for
the batch (its KV cache repeated for every row; gradients identical to running each row whole),
which halves the compute of the harness's head-heavy prompts. Checkpoints are written every --checkpoint-every steps; --resume continues from the
last one. The plan is five tokens a question, so one epoch over every role teaches it far less than
the long L2 and synthesis targets: --extra planner=2.5 mixes 2.5 more passes over the planner's
examples into the same run (a planner-only second stage eroded L2). --roles and --init-adapter
train some kinds only, from an earlier adapter, for experiments. The result: DIR/adapter (PEFT)
and DIR/base (the config llama.cpp's converter needs).
Prints one JSON line per checkpoint and a final one with the figures for the model card.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

from edge_agent.llm import heads

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
MIN_SHARED_PREFIX = 32  # a batch whose prompts share fewer tokens runs every row whole (a role's fixed
# head, the choice's instructions say, is shared by its rows: they batch by eight, not one at a time)
DEFAULTS = {"rank": 16, "alpha": 32, "dropout": 0.05, "lr": 2e-4, "epochs": 1.0, "batch": 8, "warmup": 20,
            "checkpoint_every": 25, "seed": 0}


def load_examples(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in rows:
        if not r.get("prompt_ids") or not r.get("target_ids"):
            raise ValueError(f"{path}: an example without token ids ({r.get('source')})")
    return rows


def _groups(rows: list[dict], indices: list[int], batch: int) -> list[list[int]]:
    """Rows sorted by prompt put those sharing a head side by side; they are cut into groups of at
    most `batch` that share MIN_SHARED_PREFIX tokens or more (a head computed once, see
    shared_step_loss)."""
    groups: list[list[int]] = []
    for i in sorted(indices, key=lambda i: rows[i]["prompt_ids"]):
        cur = groups[-1] if groups else None
        if cur is None or len(cur) >= batch or common_prefix([rows[cur[0]], rows[i]]) < MIN_SHARED_PREFIX:
            groups.append([i])
        else:
            cur.append(i)
    return groups


def _passes(groups: list[list[int]], passes: float, rng: random.Random) -> list[list[int]]:
    """The groups shuffled anew for every pass; a fractional last pass takes a random part of them."""
    steps: list[list[int]] = []
    for n in range(math.ceil(passes)):
        shuffled = groups[:]
        rng.shuffle(shuffled)
        if n + 1 > passes:
            shuffled = shuffled[: int(len(shuffled) * (passes - n))]
        steps += shuffled
    return steps


def batches(rows: list[dict], batch: int, epochs: float, seed: int,
            extra: dict[str, float] | None = None) -> list[list[int]]:
    """Example indices per step: `epochs` passes over every row, and `extra` more passes over the
    rows of some kinds ({"planner": 2.5}) spread at random through the same run, so a role with
    short targets gets more of the training without a later stage of its own eroding the others
    (seen: a planner-only second stage left L2 calling the wrong tool first 27 times in 121)."""
    rng = random.Random(seed)
    steps = _passes(_groups(rows, list(range(len(rows))), batch), epochs, rng)
    more: list[list[int]] = []
    for kind, passes in sorted((extra or {}).items()):
        chosen = [i for i, r in enumerate(rows) if r.get("kind") == kind]
        if chosen and passes > 0:
            more += _passes(_groups(rows, chosen, batch), passes, rng)
    if not more:
        return steps
    at = set(rng.sample(range(len(steps) + len(more)), len(more)))
    main, added = iter(steps), iter(more)
    return [next(added) if i in at else next(main) for i in range(len(steps) + len(more))]


def parse_extra(text: str) -> dict[str, float]:
    """"planner=2.5,l3=1" -> {"planner": 2.5, "l3": 1.0}."""
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        kind, _, passes = part.partition("=")
        try:
            out[kind.strip()] = float(passes)
        except ValueError as err:
            raise SystemExit(f"--extra: {part!r} is not KIND=PASSES") from err
    return out


def load_model(gguf: Path, args):
    import torch
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, torch_dtype=torch.float32)
    model.config.use_cache = False
    if args.init_adapter:  # a later stage: the earlier stage's LoRA weights, trained further
        return model, PeftModel.from_pretrained(model, str(args.init_adapter), is_trainable=True)
    config = LoraConfig(r=args.rank, lora_alpha=args.alpha, lora_dropout=args.dropout,
                        target_modules=list(LORA_TARGETS), task_type="CAUSAL_LM")
    return model, get_peft_model(model, config)


def step_loss(peft_model, rows: list[dict], pad_id: int):
    """Mean cross-entropy over the target tokens of a batch, the LM head only at those positions."""
    import torch

    seqs = [r["prompt_ids"] + r["target_ids"] for r in rows]
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s)
        mask[i, :len(s)] = 1
    base = peft_model.base_model.model  # Gemma3ForCausalLM with LoRA layers inside
    hidden = base.model(input_ids=ids, attention_mask=mask).last_hidden_state
    loss, n_target = target_loss(base, hidden, rows, offset=0)
    return loss, n_target, int(mask.sum())


def target_loss(base, hidden, rows: list[dict], offset: int):
    """Cross-entropy over the target tokens, the LM head only at their positions; `hidden` holds
    each row from prompt token `offset` on (0, or after a shared prefix)."""
    import torch

    pos_b, pos_t, labels = [], [], []
    for i, r in enumerate(rows):
        start = len(r["prompt_ids"]) - offset
        for j, tok in enumerate(r["target_ids"]):
            pos_b.append(i)
            pos_t.append(start + j - 1)  # the position whose next token is the target token
            labels.append(tok)
    logits = base.lm_head(hidden[torch.tensor(pos_b), torch.tensor(pos_t)])
    cap = getattr(base.config, "final_logit_softcapping", None)
    if cap:
        logits = torch.tanh(logits / cap) * cap
    return torch.nn.functional.cross_entropy(logits.float(), torch.tensor(labels)), len(labels)


def common_prefix(rows: list[dict]) -> int:
    """Prompt tokens every row starts with (heads.common_prefix, pairwise against the first row)."""
    first = rows[0]["prompt_ids"]
    return min(heads.common_prefix(first, r["prompt_ids"]) for r in rows)


def shared_step_loss(peft_model, rows: list[dict], pad_id: int, min_prefix: int = MIN_SHARED_PREFIX):
    """step_loss for rows whose prompts start alike: the common prefix (a prompt head) is run once
    and its KV cache repeated for every row, so the head costs one row's compute instead of B.
    Gradients flow through the shared prefix as they would through each copy."""
    import torch
    from transformers import DynamicCache

    shared = common_prefix(rows)
    if len(rows) < 2 or shared < min_prefix:
        return step_loss(peft_model, rows, pad_id)
    shared -= 1  # the prefix's last token is evaluated with the tails: its logits may be a target's
    base = peft_model.base_model.model
    cache = DynamicCache(config=base.config)
    prefix = torch.tensor([rows[0]["prompt_ids"][:shared]])
    base.model(input_ids=prefix, cache=cache, use_cache=True)
    cache.batch_repeat_interleave(len(rows))
    tails = [r["prompt_ids"][shared:] + r["target_ids"] for r in rows]
    width = max(len(t) for t in tails)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), shared + width), dtype=torch.long)
    mask[:, :shared] = 1
    for i, t in enumerate(tails):
        ids[i, :len(t)] = torch.tensor(t)
        mask[i, shared:shared + len(t)] = 1
    positions = torch.arange(shared, shared + width).unsqueeze(0).expand(len(rows), -1)
    hidden = base.model(input_ids=ids, attention_mask=mask, position_ids=positions, cache=cache,
                        use_cache=True).last_hidden_state
    loss, n_target = target_loss(base, hidden, rows, offset=shared)
    return loss, n_target, shared + sum(len(t) for t in tails)


def save_checkpoint(ckpt: Path, peft_model, optimizer, scheduler, step: int, figures: dict) -> None:
    import torch

    tmp = ckpt.with_name(ckpt.name + ".partial")
    tmp.mkdir(parents=True, exist_ok=True)
    peft_model.save_pretrained(str(tmp / "adapter"))
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "step": step,
                "figures": figures}, tmp / "state.pt")
    if ckpt.exists():
        import shutil
        shutil.rmtree(ckpt)
    tmp.rename(ckpt)


def save_base_config(model, out: Path) -> None:
    """The base model's config.json for llama.cpp's converter (a GGUF-loaded model will not save_pretrained)."""
    config = model.config.to_dict()
    config.pop("quantization_config", None)
    config["architectures"] = config.get("architectures") or [type(model).__name__]  # the converter keys on it
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--gguf", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--resume", action="store_true", help="continue from DIR/checkpoint")
    p.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (smoke runs)")
    p.add_argument("--roles", default="", help="only examples of these kinds, comma-separated (planner, l2.call, ...)")
    p.add_argument("--init-adapter", type=Path, default=None, help="start from this PEFT adapter dir (a later stage)")
    p.add_argument("--extra", default="", help="more passes over some kinds, mixed into the run: planner=2.5")
    for key, value in DEFAULTS.items():
        p.add_argument(f"--{key.replace('_', '-')}", type=type(value), default=value)
    args = p.parse_args(argv)

    import torch
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    torch.manual_seed(args.seed)
    rows = load_examples(args.data)
    if args.roles:
        kinds = set(args.roles.split(","))
        rows = [r for r in rows if r.get("kind") in kinds]
        if not rows:
            raise SystemExit(f"no examples of kind {args.roles} in {args.data}")
    extra = parse_extra(args.extra)
    plan = batches(rows, args.batch, args.epochs, args.seed, extra)
    if args.max_steps:
        plan = plan[: args.max_steps]
    t_load = time.perf_counter()
    model, peft_model = load_model(args.gguf, args)
    load_s = time.perf_counter() - t_load
    params = [p_ for p_ in peft_model.parameters() if p_.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)
    total = len(plan)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / args.warmup) * max(0.05, 1 - s / max(1, total)))
    ckpt = args.out / "checkpoint"
    start, figures = 0, {"tokens": 0, "target_tokens": 0, "train_s": 0.0, "losses": []}
    if args.resume and ckpt.exists():
        set_peft_model_state_dict(peft_model, load_file(str(ckpt / "adapter" / "adapter_model.safetensors")))
        state = torch.load(ckpt / "state.pt", weights_only=False)
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        start, figures = state["step"], state["figures"]
        figures.setdefault("resumed_at", []).append(start)  # the card says so (llm/adapter.py)
        print(f"resumed at step {start} of {total}", file=sys.stderr)
    pad_id = model.config.pad_token_id or 0
    peft_model.train()
    t0 = time.perf_counter() - figures["train_s"]
    for step in range(start, total):
        loss, n_target, n_tokens = shared_step_loss(peft_model, [rows[i] for i in plan[step]], pad_id)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        figures["tokens"] += n_tokens
        figures["target_tokens"] += n_target
        figures["losses"].append(round(loss.item(), 4))
        figures["train_s"] = time.perf_counter() - t0
        done = step + 1
        eta = figures["train_s"] / (done - start or 1) * (total - done) if done > start else 0.0
        recent = figures["losses"][-10:]
        bar = "#" * int(30 * done / total)
        print(f"\r[{bar:<30}] step {done}/{total} loss {sum(recent) / len(recent):.3f} "
              f"{figures['tokens'] / figures['train_s']:.0f} tok/s ETA {eta / 60:.1f} min", end="", file=sys.stderr)
        if done % args.checkpoint_every == 0 or done == total:
            save_checkpoint(ckpt, peft_model, optimizer, scheduler, done, figures)
            print(json.dumps({"checkpoint": done, "loss": round(sum(recent) / len(recent), 4)}), file=sys.stderr)
    print(file=sys.stderr)
    peft_model.save_pretrained(str(args.out / "adapter"))
    save_base_config(model, args.out / "base")
    trainable = sum(p_.numel() for p_ in params)
    print(json.dumps({"examples": len(rows), "roles": args.roles or "all", "steps": total, "batch": args.batch,
                      "epochs": args.epochs, "extra_passes": extra,
                      "rank": args.rank, "trainable_parameters": trainable, "load_s": round(load_s, 1),
                      "train_s": round(figures["train_s"], 1), "tokens": figures["tokens"],
                      "target_tokens": figures["target_tokens"],
                      "tokens_per_s": round(figures["tokens"] / max(figures["train_s"], 1e-9), 1),
                      "first_loss": figures["losses"][0] if figures["losses"] else None,
                      "last_loss_mean10": round(sum(figures["losses"][-10:]) / max(1, len(figures["losses"][-10:])), 4),
                      "resumed_at": figures.get("resumed_at", [])}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

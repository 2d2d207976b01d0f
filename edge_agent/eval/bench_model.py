"""Model runtime speed: raw llama-cpp-python vs the runtime (lock, worker thread, accounting), and its memory.

Memory: rss_over_model_kv_mb is the process's resident memory beyond the weights (the GGUF file,
mmapped and touched, less a token embedding that is only looked up: weights_read_mb) and the KV
cache at n_ctx; cached prompt heads are excluded and reported apart.

When the model has a task adapter, the same run also measures the three ways to run it side by
side (`variants`): without it, with it as a runtime LoRA, and merged into the weights (the
default, llm/merge.py). Their decode samples alternate round by round on one machine, so the
ratios hold on a busy one; each one's resident memory, and the part of it no file backs, is read
in a fresh process of its own.
"""
from __future__ import annotations

import asyncio
import statistics
import time

from pydantic import BaseModel, Field

from edge_agent.llm import load_model
from edge_agent.llm.base import StructuredOutputError

DECODE_TOKENS = 128  # tokens generated per decode sample
ROUNDS = 5  # raw and runtime samples alternate this many times; medians are reported
PREFILL_WORDS = 600  # about 700 tokens, the size of an L2 prompt
DECODE_PROMPT = "Here is a long numbered list of everyday household tasks:\n1."


class _Notes(BaseModel):
    items: list[str] = Field(min_length=8, max_length=12)


def add_arguments(parser) -> None:
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="alternating samples of each path")


def memory_mb() -> dict[str, float]:
    """This process's resident memory, and the part of it no file backs (anon_mb): weights read
    from an mmapped GGUF are file pages the kernel may drop and read again under pressure; weights
    copied into the process's own buffers (llama.cpp does so with a runtime LoRA) it can only swap."""
    import psutil

    info = psutil.Process().memory_info()
    return {"rss_mb": round(info.rss / 2**20, 1), "anon_mb": round((info.rss - info.shared) / 2**20, 1)}


def run(args, settings) -> dict:
    result = asyncio.run(_run(args, settings))
    variants = variant_settings(settings)
    if len(variants) > 1:
        result.update(compare_variants(variants, args.rounds))
    return result


def variant_settings(settings) -> dict:
    """{"no_adapter", "runtime_lora", "merged"}: settings for each way to run the configured model's
    adapter; just the configured one when no adapter applies to it."""
    from edge_agent.llm import resolve_model_path
    from edge_agent.llm.adapter import choose_adapter
    from edge_agent.llm.merge import DEFAULT_MERGE

    m = settings.model
    if m.adapter == "none" or choose_adapter(m.adapter, resolve_model_path(settings), settings.models_dir) is None:
        return {"configured": settings}

    def with_(adapter: str, merge: str):
        out = settings.model_copy(deep=True)
        out.model.adapter, out.model.adapter_merge = adapter, merge
        return out

    merge = m.adapter_merge if m.adapter_merge != "none" else DEFAULT_MERGE
    return {"no_adapter": with_("none", merge), "runtime_lora": with_(m.adapter, "none"),
            "merged": with_(m.adapter, merge)}


def _decode_tps(model, prompt_tokens) -> float:
    llm = model._llm
    llm.reset()
    start = time.perf_counter()
    out = llm.create_completion(prompt_tokens, max_tokens=DECODE_TOKENS, temperature=0.0, top_k=1,
                                repeat_penalty=1.1)
    return out["usage"]["completion_tokens"] / (time.perf_counter() - start)


def _memory_of(settings) -> dict[str, float]:
    """memory_mb of a fresh process that loaded this variant and generated once."""
    model = load_model(settings)
    try:
        asyncio.run(model.generate(DECODE_PROMPT, max_tokens=16, role="bench"))
        return memory_mb()
    finally:
        model.close()


def compare_variants(variants: dict, rounds: int) -> dict:
    """Decode speed of each variant, samples alternating round by round; RSS each in its own process."""
    import multiprocessing

    models = {name: load_model(s) for name, s in variants.items()}
    try:
        samples: dict[str, list[float]] = {name: [] for name in models}
        tokens = {name: m.tokenize(DECODE_PROMPT, add_bos=True) for name, m in models.items()}
        for _ in range(rounds):
            for name, m in models.items():
                samples[name].append(_decode_tps(m, tokens[name]))
        names = {name: m.name for name, m in models.items()}
    finally:
        for m in models.values():
            m.close()
    with multiprocessing.get_context("spawn").Pool(1, maxtasksperchild=1) as pool:
        memory = {name: pool.apply(_memory_of, (s,)) for name, s in variants.items()}
    tps = {name: round(statistics.median(v), 2) for name, v in samples.items()}
    return {"variants": {name: {"model": names[name], "decode_tps": tps[name], **memory[name]} for name in variants},
            "merged_over_no_adapter_decode": round(tps["merged"] / tps["no_adapter"], 3),
            "runtime_lora_over_no_adapter_decode": round(tps["runtime_lora"] / tps["no_adapter"], 3)}


async def _run(args, settings) -> dict:
    t0 = time.perf_counter()
    model = load_model(settings)
    load_s = time.perf_counter() - t0
    llm = model._llm  # the raw path calls llama-cpp-python directly on the same context
    prompt_tokens = model.tokenize(DECODE_PROMPT, add_bos=True)
    raw, runtime, structured, prefill = [], [], [], []

    for _ in range(args.rounds):
        llm.reset()  # both paths start from an empty cache and prefill the same short prompt
        start = time.perf_counter()
        out = llm.create_completion(prompt_tokens, max_tokens=DECODE_TOKENS, temperature=0.0, top_k=1,
                                    repeat_penalty=1.1)
        raw.append(out["usage"]["completion_tokens"] / (time.perf_counter() - start))

        llm.reset()
        start = time.perf_counter()
        comp = await model.generate(DECODE_PROMPT, max_tokens=DECODE_TOKENS, role="bench")
        runtime.append(comp.usage.generated_tokens / (time.perf_counter() - start))

        llm.reset()
        start = time.perf_counter()
        try:
            usage = (await model.generate_structured("List household tasks as JSON.", _Notes,
                                                     max_tokens=DECODE_TOKENS * 2, role="bench")).usage
        except StructuredOutputError as err:  # cut off at max_tokens: the tokens were decoded all the same
            if err.usage is None:
                raise
            usage = err.usage
        structured.append(usage.generated_tokens / (time.perf_counter() - start))

        llm.reset()
        long_prompt = " ".join(f"note{i} about the house" for i in range(PREFILL_WORDS // 4))
        comp = await model.generate(long_prompt, max_tokens=1, role="bench")
        prefill.append(comp.usage.prefilled_tokens / (comp.usage.prefill_ms / 1000))

    med = statistics.median
    from edge_agent.modelfile.gguf import lookup_only_span
    from edge_agent.modelfile.sizing import estimate

    need = estimate(model.path, n_ctx=model.n_ctx, n_batch=settings.model.n_batch, keep_sessions=False)
    looked_up = lookup_only_span(model.path)  # dropped after loading and after each call (llm/residency.py)
    weights_mb = need.model_mb - (looked_up[1] / 2**20 if looked_up else 0.0)
    memory = memory_mb()
    heads_mb = model.head_cache_stats()["ram_bytes"] / 2**20
    result = {
        "model": model.name,
        "adapter": model.adapter_sha256,
        "model_path": str(model.path),
        "n_ctx": model.n_ctx,
        "load_s": round(load_s, 2),
        "raw_decode_tps": round(med(raw), 2),
        "runtime_decode_tps": round(med(runtime), 2),
        "runtime_over_raw": round(med(runtime) / med(raw), 3),
        "structured_decode_tps": round(med(structured), 2),
        "prefill_tps": round(med(prefill), 1),
        **memory,
        "model_mb": round(need.model_mb, 1),
        "weights_read_mb": round(weights_mb, 1),
        "kv_mb": round(need.kv_mb, 1),
        "head_cache_mb": round(heads_mb, 1),
        "rss_over_model_kv_mb": round(memory["rss_mb"] - weights_mb - need.kv_mb - heads_mb, 1),
        "rounds": args.rounds,
        "decode_tokens": DECODE_TOKENS,
    }
    model.close()
    return result

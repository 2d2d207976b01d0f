"""Model runtime speed: raw llama-cpp-python vs the runtime (lock, worker thread, accounting), and its memory.

Memory: rss_over_model_kv_mb is the process's resident memory beyond the weights (the GGUF file,
mmapped and touched) and the KV cache at n_ctx; cached prompt heads are excluded and reported apart.
"""
from __future__ import annotations

import asyncio
import statistics
import time

from pydantic import BaseModel, Field

from edge_agent.llm import load_model

DECODE_TOKENS = 128  # tokens generated per decode sample
ROUNDS = 5  # raw and runtime samples alternate this many times; medians are reported
PREFILL_WORDS = 600  # about 700 tokens, the size of an L2 prompt
DECODE_PROMPT = "Here is a long numbered list of everyday household tasks:\n1."


class _Notes(BaseModel):
    items: list[str] = Field(min_length=8, max_length=12)


def add_arguments(parser) -> None:
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="alternating samples of each path")


def _rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def run(args, settings) -> dict:
    return asyncio.run(_run(args, settings))


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
        st = await model.generate_structured("List household tasks as JSON.", _Notes, max_tokens=DECODE_TOKENS * 2,
                                             role="bench")
        structured.append(st.usage.generated_tokens / (time.perf_counter() - start))

        llm.reset()
        long_prompt = " ".join(f"note{i} about the house" for i in range(PREFILL_WORDS // 4))
        comp = await model.generate(long_prompt, max_tokens=1, role="bench")
        prefill.append(comp.usage.prefilled_tokens / (comp.usage.prefill_ms / 1000))

    med = statistics.median
    from edge_agent.ops.sizing import estimate

    need = estimate(model.path, n_ctx=model.n_ctx, n_batch=settings.model.n_batch, keep_sessions=False)
    rss = _rss_mb()
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
        "rss_mb": round(rss, 1),
        "model_mb": round(need.model_mb, 1),
        "kv_mb": round(need.kv_mb, 1),
        "head_cache_mb": round(heads_mb, 1),
        "rss_over_model_kv_mb": round(rss - need.model_mb - need.kv_mb - heads_mb, 1),
        "rounds": args.rounds,
        "decode_tokens": DECODE_TOKENS,
    }
    model.close()
    return result

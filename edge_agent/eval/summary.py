"""Overall metrics of one mode: the five failure points, cost, latency and the Pi projection."""
from __future__ import annotations

import collections
import statistics
from typing import Any, Sequence

from edge_agent.eval.projection import PI5, p50_p95, project_seconds
from edge_agent.eval.scoring import BY_PLAN, LENIENT, POINTS

ROUND = 4  # decimals kept for rates
SUMMARY_VERSION = 2  # bumped when the summary.json shape changes (2: answer scored alone, lenient beside it)


def rate(hits: int, total: int) -> float | None:
    """hits / total, rounded to ROUND decimals; None when there is nothing to count."""
    return round(hits / total, ROUND) if total else None


def _rate(results: Sequence[Any], point: str) -> float:
    return rate(sum(bool(r.score.get(point)) for r in results), len(results)) or 0.0


def _mean(values: Sequence[float]) -> float:
    return round(statistics.fmean(values), 1) if values else 0.0


def summarize(mode: str, model: str, results: Sequence[Any], wall_s: float = 0.0,
              notebook_delta: int = 0, token_source: str = "the model's tokenizer") -> dict[str, Any]:
    """Overall metrics of one mode's results (objects with the QuestionResult fields)."""
    latency = [r.latency_ms for r in results]
    pi = [r.pi_projected_s for r in results if r.pi_projected_s is not None]
    lat50, lat95 = p50_p95(latency)
    pi50, pi95 = p50_p95(pi)
    by_cat: dict[str, list[Any]] = collections.defaultdict(list)
    for r in results:
        by_cat[r.category].append(r)
    out: dict[str, Any] = {
        "version": SUMMARY_VERSION,
        "mode": mode,
        "model": model,
        "questions": len(results),
        **{p: _rate(results, p) for p in POINTS},
        BY_PLAN: _rate(results, BY_PLAN),
        LENIENT: _rate(results, LENIENT),
        "exit_kinds": dict(sorted(collections.Counter(r.exit_kind for r in results).items())),
        "errors": sum(r.exit_kind == "error" for r in results),
        "grammar_failures": sum(getattr(r, "grammar_failures", 0) for r in results),
        "latency_ms_p50": round(lat50, 1),
        "latency_ms_p95": round(lat95, 1),
        "model_calls_mean": _mean([r.model_calls for r in results]),
        "prefill_tokens_mean": _mean([r.prefill_tokens for r in results]),
        "decode_tokens_mean": _mean([r.decode_tokens for r in results]),
        "prefill_tokens_total": sum(r.prefill_tokens for r in results),
        "decode_tokens_total": sum(r.decode_tokens for r in results),
        "token_source": token_source,
        "pi_projected_s_p50": round(pi50, 1) if pi else None,
        "pi_projected_s_p95": round(pi95, 1) if pi else None,
        "pi_projection": (f"PROJECTION, not measured: {PI5.label}; source {PI5.source}" if pi else
                          "not projected: these token counts are a stand-in (edge-agent bench harness projects "
                          "the same route from the real model's counts)"),
        "peak_rss_mb": round(max((r.peak_rss_mb for r in results), default=0.0), 1),
        "wall_s": round(wall_s, 1),
        "notebook_delta": notebook_delta,
        "by_category": {cat: {"questions": len(rs), "end_to_end": _rate(rs, "end_to_end")}
                        for cat, rs in sorted(by_cat.items())},
        "by_role": by_role(results),
    }
    return out


def by_role(results: Sequence[Any]) -> dict[str, dict[str, float]]:
    """Where the seconds go, per role kind and question (means over every question): model calls,
    prompt tokens, of them reused from the KV cache, generated tokens, of them forced (jump-forward),
    and the Pi 5 projection of what that role prefilled and decoded."""
    totals: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for r in results:
        for role, figures in (getattr(r, "roles", None) or {}).items():
            totals[role].update({k: float(v) for k, v in figures.items()})
    n = max(len(results), 1)
    out = {}
    for role, t in sorted(totals.items()):
        prefilled = t["prompt_tokens"] - t["cached_tokens"]
        pi = project_seconds(int(prefilled), int(t["generated_tokens"]), int(t["forced_tokens"]))
        out[role] = {"calls": round(t["calls"] / n, 2), "prompt_tokens": round(t["prompt_tokens"] / n, 1),
                     "cached_tokens": round(t["cached_tokens"] / n, 1),
                     "generated_tokens": round(t["generated_tokens"] / n, 1),
                     "forced_tokens": round(t["forced_tokens"] / n, 1), "pi_projected_s": round(pi / n, 2)}
    return out

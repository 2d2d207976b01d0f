"""Per-request and per-process figures for the retained status topic.

The service calls `record_request` after each answer and publishes `snapshot()`. Latency
percentiles cover a sliding window of the last N requests, so an old slow spell ages out.
"""
from __future__ import annotations

import collections
import logging
import math
import time
from typing import Any, Iterable

from edge_agent.ops import probes

log = logging.getLogger(__name__)

ROLES = ("planner", "l2", "l3", "choose", "reply")
"""The model roles whose time is reported separately."""
DEFAULT_WINDOW = 100  # requests in the latency window


def percentile(values: Iterable[float], pct: float) -> float | None:
    """Nearest-rank percentile (an observed value, never interpolated); None for no values."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[rank - 1]


def _num(value: Any) -> float:
    """A usage figure as a float; anything missing or malformed counts as zero."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        return 0.0
    return out if math.isfinite(out) else 0.0


def _role_figures(usage: dict[str, Any]) -> dict[str, dict[str, float]]:
    roles = usage.get("roles") if isinstance(usage, dict) else None
    roles = roles if isinstance(roles, dict) else {}
    out = {}
    for role in ROLES:
        raw = roles.get(role) if isinstance(roles.get(role), dict) else {}
        out[role] = {k: _num(raw.get(k)) for k in
                     ("calls", "prompt_tokens", "cached_tokens", "generated_tokens", "ms")}
    return out


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


class Metrics:
    """Collects request figures and reads process/board figures on demand."""

    def __init__(self, window: int = DEFAULT_WINDOW):
        if window < 1:
            raise ValueError(f"latency window must be >= 1 request, got {window}")
        self._latencies: collections.deque[float] = collections.deque(maxlen=window)
        self._started = time.monotonic()
        self._requests = 0
        self._exit_kinds: collections.Counter[str] = collections.Counter()
        self._rejected: collections.Counter[str] = collections.Counter()
        self._last: dict[str, Any] | None = None

    @property
    def requests(self) -> int:
        """Requests recorded since start."""
        return self._requests

    def record_request(self, outcome: Any, *, wall_ms: float, queue_wait_ms: float) -> None:
        """Account one answered request (harness Outcome); missing usage keys count as zero."""
        usage = getattr(outcome, "usage", None) or {}
        roles = _role_figures(usage)
        generated = sum(r["generated_tokens"] for r in roles.values())
        if not generated:
            generated = _num(usage.get("decode_tokens"))
        model_ms = sum(r["ms"] for r in roles.values())
        prompt = sum(r["prompt_tokens"] for r in roles.values())
        cached = sum(r["cached_tokens"] for r in roles.values())
        self._requests += 1
        self._latencies.append(_num(wall_ms))
        self._exit_kinds[str(getattr(outcome, "exit_kind", "unknown"))] += 1
        # Figures only: the status is retained and every paired device reads it, so it names no
        # request, asker or outcome of one request.
        self._last = {
            "wall_ms": _round(_num(wall_ms)),
            "queue_wait_ms": _round(_num(queue_wait_ms)),
            "role_ms": {role: _round(r["ms"]) for role, r in roles.items()},
            "model_calls": int(_num(usage.get("model_calls")) or sum(r["calls"] for r in roles.values())),
            "tool_ms": _round(_num(usage.get("tool_ms"))),
            "tokens": int(generated),
            "prompt_tokens": int(prompt),
            "cached_tokens": int(cached),
            "prefill_tokens": int(_num(usage.get("prefill_tokens")) or max(0.0, prompt - cached)),
            # Decode speed over model time; None when no model time was recorded.
            "tokens_per_s": _round(generated / (model_ms / 1000.0), 2) if model_ms > 0 else None,
        }

    def record_rejection(self, reason: str) -> None:
        """Count a request refused before it ran (e.g. "low_memory")."""
        self._rejected[reason] += 1

    def snapshot(self, *, queue_depth: int) -> dict[str, Any]:
        """A JSON-able status: process and board readings plus request figures."""
        return {
            "rss_mb": _round(probes.rss_mb()),
            "mem_available_mb": _round(probes.mem_available_mb()),
            "cpu_load_1m": _round(probes.cpu_load_1m(), 2),
            "soc_temp_c": probes.soc_temp_c(),
            "queue_depth": int(queue_depth),
            "requests": self._requests,
            "latency_window": len(self._latencies),
            "latency_p50_ms": _round(percentile(self._latencies, 50)),
            "latency_p95_ms": _round(percentile(self._latencies, 95)),
            "exit_kinds": dict(self._exit_kinds),
            "rejected": dict(self._rejected),
            "last_request": dict(self._last) if self._last else None,
            "uptime_s": round(time.monotonic() - self._started, 1),
            "ts": round(time.time(), 3),
        }

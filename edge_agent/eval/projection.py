"""The Raspberry Pi 5 projection: measured token counts priced at published Pi 5 llama.cpp speeds.

This is a projection, never a measurement: it assumes a question prefills and decodes the same
numbers of tokens on the Pi with a 3B model as it did here, and that the speeds are the published
steady-state rates. It ignores tool time, the lock wait and tokenizer differences (a 3B model's
tokenizer splits text differently from the model measured here).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from edge_agent.ops.metrics import percentile

# Llama-3.2-3B Q4_K_M on a Raspberry Pi 5 (4x Cortex-A76, LPDDR4X), llama.cpp, 4 threads.
# Source: github.com/davidscarth/edge-ai-study RASPI5.md (pp512 and tg128), as recorded in
# ../shared/ANCHORS.md.
PI5_PREFILL_TOK_S = 26.7  # tokens/s, prompt processing (pp512)
PI5_DECODE_TOK_S = 4.42  # tokens/s, generation (tg128)
PI5_MODEL_LABEL = "Raspberry Pi 5, Llama-3.2-3B Q4_K_M (pp512 26.7 tok/s, tg128 4.42 tok/s)"
PI5_SOURCE = "github.com/davidscarth/edge-ai-study RASPI5.md"


@dataclass(frozen=True)
class PiRates:
    """The speeds a projection prices tokens at."""

    prefill_tok_s: float = PI5_PREFILL_TOK_S
    """Prompt tokens evaluated per second."""
    decode_tok_s: float = PI5_DECODE_TOK_S
    """Tokens generated per second."""
    label: str = PI5_MODEL_LABEL
    """What device and model the rates describe."""
    source: str = PI5_SOURCE
    """Where the rates were published."""


PI5 = PiRates()


def project_seconds(prefill_tokens: int, decode_tokens: int, forced_tokens: int = 0, rates: PiRates = PI5) -> float:
    """Projected model seconds of one question on the Pi: prefill / pp rate + decode / tg rate, where
    the forced tokens among the decoded (appended by jump-forward in one batch) cost the pp rate."""
    if prefill_tokens < 0 or decode_tokens < 0 or not 0 <= forced_tokens <= decode_tokens:
        raise ValueError(f"bad token counts ({prefill_tokens}, {decode_tokens}, forced {forced_tokens})")
    return (prefill_tokens + forced_tokens) / rates.prefill_tok_s + (decode_tokens - forced_tokens) / rates.decode_tok_s


def p50_p95(values: Iterable[float]) -> tuple[float, float]:
    """p50 and p95 by the project's one percentile (nearest rank); 0.0 for no values."""
    values = list(values)
    return percentile(values, 50) or 0.0, percentile(values, 95) or 0.0

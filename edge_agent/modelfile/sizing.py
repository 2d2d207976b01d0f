"""How much memory the configured model needs, and the systemd limits that follow from it.

need = weights (the GGUF file, mmapped and fully touched by inference)
     + KV cache   2 (K and V) x layers x n_ctx x kv_heads x head_dim x 2 bytes (f16)
     + saved sessions  MAX_KEPT_SESSIONS more KV copies when keep_sessions is on
     + logits     OUTPUT_POSITIONS x n_vocab x 4 bytes: llama.cpp's outputs for the positions read
                  (the last one, or a jump-forward batch); the runtime drops llama-cpp-python's
                  n_batch x n_vocab scores buffer, which nothing reads
     + runtime    RUNTIME_BASE_MB for Python, the libraries, SQLite and MQTT
MemoryHigh = need x HIGH_FACTOR and MemoryMax = MemoryHigh x MAX_FACTOR, each rounded up to
LIMIT_STEP_MB. `python -m edge_agent.ops.sizing --config FILE` prints them for the configured model.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from edge_agent.modelfile.gguf import ArrayInfo, GGUFHeader, read_header

MIB = 1024 * 1024
F16_BYTES = 2  # llama.cpp's default KV cache type is f16
LOGIT_BYTES = 4  # float32 logits
OUTPUT_POSITIONS = 49  # logits rows llama.cpp keeps at most: a jump-forward batch (grammar_decode.MAX_JUMP_CHARS) + 1
RUNTIME_BASE_MB = 200  # Python + llama.cpp compute buffers + aiosqlite + paho; measured ~150 on x86_64
HIGH_FACTOR = 1.25  # MemoryHigh over the estimate: allocator slack and request peaks
MAX_FACTOR = 1.25  # MemoryMax over MemoryHigh: room to be throttled before being killed
LIMIT_STEP_MB = 64  # limits are rounded up to this
OS_RESERVE_MB = 256  # left to the OS when judging whether a model fits in physical RAM
MAX_KEPT_SESSIONS = 2  # paused sessions whose KV state is kept in RAM (L2 of the running turn; llm/sessions.py)


class SizingError(ValueError):
    """The model header lacks what the estimate needs."""


@dataclass(frozen=True)
class MemoryNeed:
    """An estimate of the service's memory for one model and window, MiB."""

    model_mb: float
    """Weights: the GGUF file size."""
    kv_mb: float
    """KV cache at the configured n_ctx."""
    sessions_mb: float
    """Saved KV states of paused sessions."""
    logits_mb: float
    """The logits buffer."""
    runtime_mb: float
    """Everything else in the process."""
    layers: int
    """Transformer blocks."""
    kv_heads: int
    """Key/value heads (grouped-query attention)."""
    head_dim: int
    """Width of one head (mean of key and value widths)."""
    n_vocab: int
    """Vocabulary size."""

    @property
    def total_mb(self) -> float:
        return self.model_mb + self.kv_mb + self.sessions_mb + self.logits_mb + self.runtime_mb


def kv_cache_bytes(header: GGUFHeader, n_ctx: int) -> tuple[int, int, int, int]:
    """(bytes, layers, kv_heads, head_dim) of an f16 KV cache for `n_ctx` tokens."""
    layers = header.arch_value("block_count")
    heads = header.arch_value("attention.head_count")
    kv_heads = header.arch_value("attention.head_count_kv") or heads
    if isinstance(kv_heads, list):  # per-layer counts in some architectures: size for the widest
        kv_heads = max(kv_heads)
    if isinstance(heads, list):
        heads = max(heads)
    key_len = header.arch_value("attention.key_length")
    value_len = header.arch_value("attention.value_length")
    if not key_len:
        embedding = header.arch_value("embedding_length")
        if not embedding or not heads:
            raise SizingError(f"GGUF for {header.architecture!r} lacks embedding_length/head_count")
        key_len = embedding // heads
    value_len = value_len or key_len
    if not layers or not kv_heads:
        raise SizingError(f"GGUF for {header.architecture!r} lacks block_count/attention.head_count_kv")
    per_token = layers * kv_heads * (key_len + value_len) * F16_BYTES
    return per_token * n_ctx, int(layers), int(kv_heads), int((key_len + value_len) // 2)


def vocab_size(header: GGUFHeader) -> int:
    tokens = header.metadata.get("tokenizer.ggml.tokens")
    if isinstance(tokens, ArrayInfo):
        return tokens.length
    if isinstance(tokens, list):
        return len(tokens)
    return int(header.arch_value("vocab_size") or 0)


def estimate(model_path: Path, *, n_ctx: int, n_batch: int, keep_sessions: bool,
             kept_sessions: int | None = None) -> MemoryNeed:
    """The memory estimate for running `model_path` with these settings."""
    if kept_sessions is None:
        kept_sessions = MAX_KEPT_SESSIONS
    header = read_header(model_path)
    kv, layers, kv_heads, head_dim = kv_cache_bytes(header, n_ctx)
    n_vocab = vocab_size(header)
    return MemoryNeed(
        model_mb=model_path.stat().st_size / MIB,
        kv_mb=kv / MIB,
        sessions_mb=(kv * kept_sessions / MIB) if keep_sessions else 0.0,
        logits_mb=logits_mb(n_vocab),
        runtime_mb=float(RUNTIME_BASE_MB),
        layers=layers, kv_heads=kv_heads, head_dim=head_dim, n_vocab=n_vocab,
    )


def logits_mb(n_vocab: int) -> float:
    """The logits the runtime keeps, MiB."""
    return OUTPUT_POSITIONS * n_vocab * LOGIT_BYTES / MIB


def _round_up(mb: float) -> int:
    return int(math.ceil(mb / LIMIT_STEP_MB) * LIMIT_STEP_MB)


def systemd_limits(need: MemoryNeed) -> dict[str, int]:
    """MemoryHigh and MemoryMax in MiB for a unit running this model."""
    high = _round_up(need.total_mb * HIGH_FACTOR)
    return {"MemoryHigh": high, "MemoryMax": _round_up(high * MAX_FACTOR)}


def short_context(native: int | None, n_ctx: int) -> str | None:
    """Why a model trained for `native` tokens cannot serve an `n_ctx` window (None: it can, or its
    GGUF does not say): the runtime refuses it, doctor fails it, in these words."""
    if native is None or native <= 0 or native >= n_ctx:
        return None
    return (f"trained for a {native}-token context, shorter than the {n_ctx}-token window: "
            f"set model.n_ctx = {native} (or less) in the config, or choose another model")

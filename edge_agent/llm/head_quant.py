"""The output head in five bits, fitted to the logits it makes rather than to its weights.

Gemma ties its output head to the token embedding: 170 of the bundled model's 241 MiB, read whole
for every generated token. In Q5_1 (32 weights share a step `d` and an offset `m`, each weight one
of 32 levels) it is 50 MB smaller, and llama.cpp's quantizer rounds each weight to the nearest level
of a grid set by its block's minimum and maximum. But a logit is the dot product of a head row with
the final hidden state x, and x is far from even: a few of its 640 dimensions are a hundred times
larger than the median, and many move together. So the head is quantized to keep `x @ head.T`
close, not each weight: GPTQ's column order (Frantar et al., 2022) under the second moment E[x xT]
(`input_moment`, measured once on the adapter's own training prompts), each block's d and m fitted
by weighted least squares under its columns' mean squares. Only numpy here; `input_moment` runs the
model through llama-cpp-python.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

BLOCK = 32
"""Weights per Q5_1 block (ggml's QK5_1)."""
LEVELS = 31
"""The largest of a Q5_1 weight's levels 0..31."""
STEPS = np.arange(-4, 9) * 0.5
"""Starting grids tried per block: the min-max range split into 31 + s steps (s < 0: a wider step,
centred). Each is refined by weighted least squares; the best by weighted error is kept."""
REFINE = 2
"""Least-squares refinements of each starting grid."""
CHUNK = 262_144
"""Blocks quantized at once (bounds the working memory to about 150 MB)."""
DAMP = 0.3
"""The fraction of the moment's mean diagonal added to it before it is inverted. The head is also
the input embedding, which wants each weight close: GPTQ's own 0.01 fits the logits best and moves
single weights most (relative weight error 0.050 against 0.040 per block), and on held-out training
examples (32, 10,597 tokens) the whole model's next token agreed with the q8_0 merge's on 0.923;
0.3 on 0.940 (weight error 0.041, KL 0.0130), 1.0 on 0.929, the per-block fit alone on 0.921."""
OUTPUT_DAMP = 0.01
"""The damping for an output head of its own (merge.OUTPUT_TYPES), which is never an embedding:
GPTQ's own, the lowest logit error measured (0.087 rms against 0.094 at 0.3, held-out states)."""


def fit_blocks(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(d, m, q) for blocks `x` (n, 32) minimising sum(w * (d*q + m - x)^2) per block, d and m as the
    float16 the file holds, q in 0..31; `w` (n, 32) the weight of each value."""
    x, w = x.astype(np.float32), w.astype(np.float32)
    hi, lo = x.max(1, keepdims=True), x.min(1, keepdims=True)
    best = np.full((len(x), 1), np.inf, np.float32)
    best_d, best_m = np.zeros_like(hi), np.zeros_like(lo)
    sw = w.sum(1, keepdims=True)
    for s in STEPS:
        d = (hi - lo) / (LEVELS + s)
        m = lo + (hi - lo - d * LEVELS) / 2 if s < 0 else lo.copy()
        for _ in range(REFINE + 1):
            d16, m16 = _half(d), _half(m)
            q = _levels(x, d16, m16)
            err = (w * (d16 * q + m16 - x) ** 2).sum(1, keepdims=True)
            better = err < best
            best = np.where(better, err, best)
            best_d, best_m = np.where(better, d16, best_d), np.where(better, m16, best_m)
            d, m = _least_squares(x, w, q, sw, d, m)
    return best_d, best_m, _levels(x, best_d, best_m)


def _half(v: np.ndarray) -> np.ndarray:
    """`v` rounded to float16, as float32 (what the file will hold)."""
    return v.astype(np.float16).astype(np.float32)


def _levels(x: np.ndarray, d: np.ndarray, m: np.ndarray) -> np.ndarray:
    safe = np.where(d == 0, 1, d)
    return np.clip(np.rint((x - m) / safe), 0, LEVELS)


def _least_squares(x, w, q, sw, d, m):
    """The d and m minimising the weighted error for these levels (unchanged where they are all one)."""
    sq, sqq = (w * q).sum(1, keepdims=True), (w * q * q).sum(1, keepdims=True)
    sx, sqx = (w * x).sum(1, keepdims=True), (w * q * x).sum(1, keepdims=True)
    det = sw * sqq - sq * sq
    ok = det > 1e-12 * sw * sqq + 1e-30
    d_new = np.where(ok, (sw * sqx - sq * sx) / np.where(ok, det, 1), d)
    m_new = np.where(ok, (sx - d_new * sq) / np.where(sw > 0, sw, 1), m)
    return d_new, m_new


def pack(d: np.ndarray, m: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Q5_1 blocks as ggml lays them out: d, m (float16), the 32 high bits, the 32 low nibbles."""
    n = len(q)
    q = q.astype(np.uint8)
    halves = q.reshape(n, 2, BLOCK // 2)
    low = (halves[:, 0, :] & np.uint8(0x0F)) | (halves[:, 1, :] << np.uint8(4))
    high = np.packbits((q >> np.uint8(4)).reshape(n, 1, BLOCK), axis=-1, bitorder="little").reshape(n, 4)
    return np.concatenate([d.astype(np.float16).view(np.uint8), m.astype(np.float16).view(np.uint8), high, low],
                          axis=-1)


def quantize_head(matrix: np.ndarray, moment: np.ndarray, damp: float = DAMP) -> np.ndarray:
    """`matrix` (rows, n_embd) as Q5_1 rows (uint8, rows x n_embd/32*24) that keep the logits
    `x @ matrix.T` close for inputs x of second moment `moment` (n_embd x n_embd, E[x xT]).

    GPTQ's column order (Frantar et al., 2022): the columns are rounded one after another, and each
    rounding error is carried into the columns not yet rounded, in the proportion the moment's
    inverse gives, so the next columns cancel what the inputs' correlation lets them cancel. A
    block's d and m are fitted (fit_blocks) when its first column is reached, on the columns as the
    errors before them have moved them, each column weighted by its input's (damped) mean square. With a
    diagonal moment nothing is carried and each block is its weighted fit. `damp` times the mean
    diagonal is added to the moment first, so its inverse exists and stays tame. Sums are float64,
    so other CPUs' rounding moves a level only where a weight sits on a boundary."""
    rows, width = matrix.shape
    moment = np.asarray(moment, np.float64)
    if width % BLOCK or moment.shape != (width, width):
        raise ValueError(f"a head {width} wide needs a multiple of {BLOCK} and a {width} x {width} moment")
    h = moment + np.eye(width) * damp * float(np.mean(np.diag(moment)))
    carry = np.linalg.cholesky(np.linalg.inv(h)).T  # upper: row i says where column i's error goes
    weights = np.diag(h).astype(np.float32)
    per_row = width // BLOCK
    step = max(1, CHUNK // per_row)  # rows quantized at once
    out = []
    for start in range(0, rows, step):
        a = np.array(matrix[start:start + step], np.float64)  # a copy: the carried errors are written into it
        n = len(a)
        d, m = np.zeros((n, per_row), np.float32), np.zeros((n, per_row), np.float32)
        q = np.zeros((n, width), np.float32)
        for b in range(per_row):
            lo, hi = b * BLOCK, (b + 1) * BLOCK
            bd, bm, _ = fit_blocks(a[:, lo:hi], np.broadcast_to(weights[lo:hi], (n, BLOCK)))
            d[:, b], m[:, b] = bd[:, 0], bm[:, 0]
            errors = np.zeros((n, BLOCK))
            for i in range(lo, hi):
                q[:, i] = _levels(a[:, i].astype(np.float32), bd[:, 0], bm[:, 0])
                errors[:, i - lo] = (a[:, i] - (bd[:, 0].astype(np.float64) * q[:, i] + bm[:, 0])) / carry[i, i]
                a[:, i + 1:hi] -= np.outer(errors[:, i - lo], carry[i, i + 1:hi])
            a[:, hi:] -= errors @ carry[lo:hi, hi:]
        out.append(pack(d.reshape(-1, 1), m.reshape(-1, 1), q.reshape(-1, BLOCK)))
    return np.concatenate(out).reshape(rows, -1)


def input_moment(model_path: Path, texts: Sequence[str], max_tokens: int = 1024,
                 progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, int]:
    """The second moment E[x xT] of the head's input x (the final normed hidden state) over every
    token of `texts` (n_embd x n_embd; its diagonal is each dimension's mean square), and how many
    tokens that was; `progress(done, total)` every 100 texts."""
    import llama_cpp

    from edge_agent.llm.loading import cpu_advertises_amx, model_params
    from edge_agent.llm.native_log import route_native_logs

    route_native_logs()
    with model_params(not cpu_advertises_amx()):
        llm: Any = llama_cpp.Llama(model_path=str(model_path), embedding=True, pooling_type=0, n_ctx=max_tokens,
                                   n_batch=max_tokens, n_ubatch=max_tokens, verbose=False)
    try:
        total, count = np.zeros((llm.n_embd(), llm.n_embd())), 0
        for done, text in enumerate(texts, 1):
            states = np.asarray(llm.embed(text, normalize=False, truncate=True), np.float64)  # its first max_tokens
            total += states.T @ states
            count += len(states)
            if progress is not None and (done % 100 == 0 or done == len(texts)):
                progress(done, len(texts))
    finally:
        llm.close()
    if not count:
        raise ValueError("no text to measure the head's input on")
    return total / count, count

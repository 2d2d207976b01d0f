"""The output head in Q5_1 fitted under its input's importance: ggml's layout byte for byte, never a
worse fit than the min-max grid llama.cpp's quantizer makes, and far better where a column dominates."""
from __future__ import annotations

import numpy as np
import pytest

from edge_agent.llm.head_quant import fit_blocks, pack, quantize_head


def _dequantize(blocks: np.ndarray) -> np.ndarray:
    import gguf

    return gguf.quants.dequantize(blocks, gguf.GGMLQuantizationType.Q5_1).reshape(len(blocks), -1)


def _minmax(x: np.ndarray) -> np.ndarray:
    """llama.cpp's (and gguf-py's) own Q5_1 of blocks `x`, dequantized."""
    import gguf

    return _dequantize(gguf.quants.quantize(x, gguf.GGMLQuantizationType.Q5_1).reshape(len(x), -1))


def test_packed_blocks_read_back_through_ggml_as_d_times_level_plus_m():
    rng = np.random.default_rng(0)
    n = 50
    d = rng.uniform(0.001, 0.1, (n, 1)).astype(np.float16).astype(np.float32)
    m = rng.uniform(-1, 1, (n, 1)).astype(np.float16).astype(np.float32)
    q = rng.integers(0, 32, (n, 32)).astype(np.float32)
    blocks = pack(d, m, q)
    assert blocks.shape == (n, 24) and blocks.dtype == np.uint8  # ggml's block_q5_1: 2 + 2 + 4 + 16 bytes
    np.testing.assert_array_equal(_dequantize(blocks), d * q + m)


def test_with_even_weights_the_fit_is_never_worse_than_the_min_max_grid():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((4000, 32)) * 0.04).astype(np.float32)
    w = np.ones_like(x)
    d, m, q = fit_blocks(x, w)
    ours = ((d * q + m - x) ** 2).sum(1)
    theirs = ((_minmax(x) - x) ** 2).sum(1)
    assert np.all(ours <= theirs * (1 + 1e-3) + 1e-12)
    assert ours.sum() < 0.95 * theirs.sum()


def test_a_dominant_column_is_fitted_closely_at_the_others_expense():
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((4000, 32)) * 0.04).astype(np.float32)
    w = np.ones_like(x)
    w[:, 5] = 300.0  # one dimension of the head's input a few hundred times the others, as in Gemma's
    d, m, q = fit_blocks(x, w)
    weighted = lambda approx: (w * (approx - x) ** 2).sum()  # noqa: E731
    assert weighted(d * q + m) < 0.5 * weighted(_minmax(x))
    assert np.abs(d * q + m - x)[:, 5].mean() < 0.5 * np.abs(_minmax(x) - x)[:, 5].mean()


def test_the_logits_of_a_fitted_head_move_less_than_a_min_max_heads():
    rng = np.random.default_rng(3)
    head = (rng.standard_normal((512, 64)) * 0.04).astype(np.float32)
    scale = np.ones(64, np.float32)
    scale[[3, 40]] = 20.0  # two outlier dimensions of the hidden state
    states = rng.standard_normal((200, 64)).astype(np.float32) * scale
    importance = (states ** 2).mean(0)
    fitted = _dequantize(quantize_head(head, importance).reshape(-1, 24)).reshape(head.shape)
    plain = _minmax(head.reshape(-1, 32)).reshape(head.shape)
    exact = states @ head.T
    err = lambda approx: np.sqrt(((states @ approx.T - exact) ** 2).mean())  # noqa: E731
    assert err(fitted) < 0.8 * err(plain)


def test_a_head_that_does_not_divide_into_blocks_or_lacks_importances_is_refused():
    with pytest.raises(ValueError):
        quantize_head(np.zeros((4, 40), np.float32), np.ones(40, np.float32))
    with pytest.raises(ValueError):
        quantize_head(np.zeros((4, 64), np.float32), np.ones(32, np.float32))


def test_a_head_fitted_in_many_small_chunks_is_the_same_bytes(monkeypatch):
    from edge_agent.llm import head_quant

    rng = np.random.default_rng(4)
    head = (rng.standard_normal((45, 96)) * 0.04).astype(np.float32)
    importance = rng.uniform(0.5, 50, 96).astype(np.float32)
    whole = quantize_head(head, importance)
    monkeypatch.setattr(head_quant, "CHUNK", 7)  # not a multiple of the 3 blocks a row holds
    np.testing.assert_array_equal(quantize_head(head, importance), whole)
    assert whole.shape == (45, 3 * 24)

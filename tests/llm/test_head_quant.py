"""The output head in Q5_1 fitted to its logits: ggml's layout byte for byte, a block never a worse
fit than the min-max grid llama.cpp's quantizer makes, far better where a column dominates, and the
rounding errors carried where the inputs' correlation cancels them."""
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


def _states(rng, n=400, width=64):
    """Hidden states with two outlier dimensions and correlated neighbours, as Gemma's head input."""
    scale = np.ones(width)
    scale[[3, 40]] = 20.0
    x = rng.standard_normal((n, width)) * scale
    x[:, 4] += 0.5 * x[:, 3]
    x[:, 10:20] += rng.standard_normal((n, 1)) * 3  # a shared direction
    return x.astype(np.float32)


def _logit_error(head, approx, states):
    return np.sqrt(((states @ approx.T - states @ head.T) ** 2).mean())


def test_the_logits_of_a_fitted_head_move_less_than_a_min_max_heads_and_the_carried_errors_less_still():
    rng = np.random.default_rng(3)
    head = (rng.standard_normal((512, 64)) * 0.04).astype(np.float32)
    states, unseen = _states(rng), _states(rng)  # fitted under the one, judged on the other
    moment = states.T.astype(np.float64) @ states / len(states)
    carried = _dequantize(quantize_head(head, moment).reshape(-1, 24)).reshape(head.shape)
    diagonal = _dequantize(quantize_head(head, np.diag(np.diag(moment))).reshape(-1, 24)).reshape(head.shape)
    plain = _minmax(head.reshape(-1, 32)).reshape(head.shape)
    err = lambda approx: _logit_error(head, approx, unseen)  # noqa: E731
    assert err(diagonal) < 0.8 * err(plain)
    assert err(carried) < 0.9 * err(diagonal)


def test_under_a_diagonal_moment_each_block_is_its_own_weighted_fit():
    from edge_agent.llm.head_quant import DAMP

    rng = np.random.default_rng(5)
    head = (rng.standard_normal((40, 64)) * 0.04).astype(np.float32)
    mean_square = rng.uniform(0.5, 50, 64)
    weights = (mean_square + DAMP * mean_square.mean()).astype(np.float32)
    d, m, q = fit_blocks(head.reshape(-1, 32), np.tile(weights.reshape(2, 32), (40, 1)))
    np.testing.assert_array_equal(quantize_head(head, np.diag(mean_square)), pack(d, m, q).reshape(40, -1))


def test_a_head_that_does_not_divide_into_blocks_or_lacks_a_square_moment_is_refused():
    with pytest.raises(ValueError):
        quantize_head(np.zeros((4, 40), np.float32), np.eye(40))
    with pytest.raises(ValueError):
        quantize_head(np.zeros((4, 64), np.float32), np.ones(64))
    with pytest.raises(ValueError):
        quantize_head(np.zeros((4, 64), np.float32), np.eye(32))


def test_a_head_quantized_in_many_small_chunks_is_the_same_bytes(monkeypatch):
    from edge_agent.llm import head_quant

    rng = np.random.default_rng(4)
    head = (rng.standard_normal((45, 96)) * 0.04).astype(np.float32)
    states = _states(rng, width=96)
    moment = states.T.astype(np.float64) @ states / len(states)
    whole = quantize_head(head, moment)
    monkeypatch.setattr(head_quant, "CHUNK", 7)  # not a multiple of the 3 blocks a row holds
    np.testing.assert_array_equal(quantize_head(head, moment), whole)
    assert whole.shape == (45, 3 * 24)


def test_the_head_given_is_left_as_it_was():
    rng = np.random.default_rng(6)
    head = rng.standard_normal((20, 64)) * 0.04  # float64: the very array the carried errors would be written into
    before = head.copy()
    states = _states(rng)
    quantize_head(head, states.T.astype(np.float64) @ states / len(states))
    np.testing.assert_array_equal(head, before)

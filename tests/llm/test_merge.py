"""The adapter merged into the weights: W + (alpha / r)·B·A for every adapted matrix, the rest as it was;
then, on the real bundled model, a merged file the runtime loads and names, made once and found again."""
from __future__ import annotations

import numpy as np
import pytest

from edge_agent.llm.merge import MergeError, lora_deltas, merged_name, write_merged_f32


def _write(path, arch, tensors: dict, fields: dict | None = None):
    import gguf

    w = gguf.GGUFWriter(path, arch=arch)
    for key, value in (fields or {}).items():
        w.add_float32(key, value)
    for name, array in tensors.items():
        w.add_tensor(name, array)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return gguf.GGUFReader(path, "r")


def test_the_merged_matrix_is_the_base_plus_the_scaled_low_rank_product(tmp_path):
    import gguf

    rng = np.random.default_rng(0)
    w = rng.standard_normal((6, 8)).astype(np.float32)  # numpy (out, in)
    norm = np.ones(8, dtype=np.float32)
    a = rng.standard_normal((2, 8)).astype(np.float32)  # (r, in)
    b = rng.standard_normal((6, 2)).astype(np.float32)  # (out, r)
    base = _write(tmp_path / "base.gguf", "gemma3", {"blk.0.attn_q.weight": w, "blk.0.attn_norm.weight": norm})
    lora = _write(tmp_path / "lora.gguf", "gemma3", {"blk.0.attn_q.weight.lora_a": a, "blk.0.attn_q.weight.lora_b": b},
                  {"adapter.lora.alpha": 4.0})
    deltas = lora_deltas(lora)
    assert set(deltas) == {"blk.0.attn_q.weight"}
    np.testing.assert_allclose(deltas["blk.0.attn_q.weight"], (4.0 / 2) * (b @ a), rtol=1e-6)
    write_merged_f32(base, deltas, tmp_path / "merged.gguf")
    merged = {t.name: t for t in gguf.GGUFReader(tmp_path / "merged.gguf", "r").tensors}
    np.testing.assert_allclose(np.asarray(merged["blk.0.attn_q.weight"].data), w + 2.0 * (b @ a), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(merged["blk.0.attn_norm.weight"].data), norm)  # untouched, as it was


def test_a_recipe_that_requantizes_the_embedding_hands_it_to_the_quantizer_as_floats(tmp_path):
    import gguf

    rng = np.random.default_rng(1)
    embd = rng.standard_normal((4, 32)).astype(np.float32)
    q8 = gguf.quants.quantize(embd, gguf.GGMLQuantizationType.Q8_0)
    w = rng.standard_normal((6, 32)).astype(np.float32)
    base_path = tmp_path / "base.gguf"
    writer = gguf.GGUFWriter(base_path, arch="gemma3")
    writer.add_tensor("token_embd.weight", q8, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    writer.add_tensor("blk.0.attn_q.weight", w)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    base = gguf.GGUFReader(base_path, "r")
    deltas = {"blk.0.attn_q.weight": np.ones((6, 32), np.float32)}
    kept, requantized = tmp_path / "kept.gguf", tmp_path / "requantized.gguf"
    assert write_merged_f32(base, deltas, kept) == gguf.GGMLQuantizationType.Q8_0
    assert write_merged_f32(base, deltas, requantized, requantized=True) == gguf.GGMLQuantizationType.Q8_0
    as_kept = {t.name: t for t in gguf.GGUFReader(kept, "r").tensors}["token_embd.weight"]
    as_floats = {t.name: t for t in gguf.GGUFReader(requantized, "r").tensors}["token_embd.weight"]
    assert as_kept.tensor_type == gguf.GGMLQuantizationType.Q8_0  # copied byte for byte
    assert as_floats.tensor_type == gguf.GGMLQuantizationType.F32
    np.testing.assert_allclose(np.asarray(as_floats.data),
                               gguf.quants.dequantize(q8, gguf.GGMLQuantizationType.Q8_0), rtol=1e-6)


def test_an_adapter_for_another_model_is_refused(tmp_path):
    base = _write(tmp_path / "base.gguf", "gemma3", {"blk.0.attn_q.weight": np.zeros((6, 8), np.float32)})
    lora = _write(tmp_path / "lora.gguf", "gemma3", {"blk.0.attn_k.weight.lora_a": np.zeros((2, 8), np.float32),
                                                     "blk.0.attn_k.weight.lora_b": np.zeros((6, 2), np.float32)},
                  {"adapter.lora.alpha": 4.0})
    with pytest.raises(MergeError, match="does not have"):
        write_merged_f32(base, lora_deltas(lora), tmp_path / "m.gguf")
    wrong = _write(tmp_path / "wrong.gguf", "gemma3", {"blk.0.attn_q.weight.lora_a": np.zeros((2, 9), np.float32),
                                                       "blk.0.attn_q.weight.lora_b": np.zeros((6, 2), np.float32)},
                   {"adapter.lora.alpha": 4.0})
    with pytest.raises(MergeError, match="base"):
        write_merged_f32(base, lora_deltas(wrong), tmp_path / "m2.gguf")
    none = _write(tmp_path / "none.gguf", "gemma3", {"x": np.zeros(2, np.float32)})
    with pytest.raises(MergeError):
        lora_deltas(none)


def test_a_merged_file_is_named_by_what_it_was_made_from():
    assert merged_name("a" * 64, "b" * 64, "q4_k_m") == "merged-aaaaaaaaaaaa-bbbbbbbbbbbb-q4_k_m.gguf"


@pytest.mark.real_model
def test_the_runtime_loads_the_merged_bundled_model_made_once(tiny_model_path, tmp_path):
    from edge_agent.config import load_settings
    from edge_agent.llm import load_model

    settings = load_settings(None, {"data_dir": str(tmp_path / "data"), "model.path": str(tiny_model_path)},
                             environ={})
    model = load_model(settings)
    try:
        assert "+merged:" in model.name and model.path.name.startswith("merged-")
        assert model.count_tokens("hello") > 0
    finally:
        model.close()
    made = model.path.stat().st_mtime_ns
    again = load_model(settings)  # found, not made again
    try:
        assert again.path == model.path and again.path.stat().st_mtime_ns == made
    finally:
        again.close()
    runtime = settings.model_copy(deep=True)
    runtime.model.adapter_merge = "none"
    lora = load_model(runtime)
    try:
        assert "+adapter:" in lora.name and lora.path == tiny_model_path
    finally:
        lora.close()


@pytest.mark.real_model
def test_the_small_head_recipe_gives_the_embedding_its_own_type_and_a_file_smaller_than_the_base(
        tiny_model_path, tmp_path):
    import gguf

    from edge_agent.llm.adapter import ADAPTERS_DIR, BUNDLED_ADAPTER
    from edge_agent.llm.merge import merge

    made = merge(tiny_model_path, ADAPTERS_DIR / BUNDLED_ADAPTER, tmp_path / "m.gguf", "q8_0_emb_q5_1")
    types = {t.name: t.tensor_type for t in gguf.GGUFReader(made.path, "r").tensors}
    assert types["token_embd.weight"] == gguf.GGMLQuantizationType.Q5_1
    assert types["blk.0.attn_q.weight"] == gguf.GGMLQuantizationType.Q8_0  # an adapted matrix, merged
    assert made.path.stat().st_size < tiny_model_path.stat().st_size
    assert made.card["recipe"] == "q8_0_emb_q5_1" and made.card["merged_tensors"] > 0


@pytest.mark.real_model
def test_the_five_bit_recipe_keeps_the_embedding_and_is_about_the_base_size(tiny_model_path, tmp_path):
    import gguf

    from edge_agent.llm.adapter import ADAPTERS_DIR, BUNDLED_ADAPTER
    from edge_agent.llm.merge import merge

    made = merge(tiny_model_path, ADAPTERS_DIR / BUNDLED_ADAPTER, tmp_path / "m.gguf", "q5_k_m")
    types = {t.name: t.tensor_type for t in gguf.GGUFReader(made.path, "r").tensors}
    q = gguf.GGMLQuantizationType
    assert types["token_embd.weight"] == q.Q8_0  # the base's, untouched
    assert types["blk.0.attn_q.weight"] == q.Q5_1  # 640-wide rows: no K type fits, and not the base's Q5_0 grid
    assert types["blk.0.ffn_down.weight"] in (q.Q5_K, q.Q6_K)  # 2048-wide rows take a K type
    assert abs(made.path.stat().st_size - tiny_model_path.stat().st_size) < 16 * 2**20
    assert made.card["recipe"] == "q5_k_m" and made.card["merged_tensors"] > 0

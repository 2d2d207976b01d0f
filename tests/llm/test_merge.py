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


def _embedding_base(tmp_path, seed: int, **more):
    """A base GGUF holding a 6 x 64 Q8_0 token embedding (and `more` F32 tensors); its reader, the
    embedding's Q8_0 bytes and a head-input moment with uneven dimensions."""
    import gguf

    rng = np.random.default_rng(seed)
    embd = (rng.standard_normal((6, 64)) * 0.04).astype(np.float32)
    q8 = gguf.quants.quantize(embd, gguf.GGMLQuantizationType.Q8_0)
    base_path = tmp_path / "base.gguf"
    writer = gguf.GGUFWriter(base_path, arch="gemma3")
    writer.add_tensor("token_embd.weight", q8, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    for name, array in more.items():
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    states = rng.standard_normal((100, 64)) * rng.uniform(1, 10, 64)
    return gguf.GGUFReader(base_path, "r"), q8, states.T @ states / len(states)


def test_with_a_head_moment_the_embedding_is_written_as_the_fitted_q5_1_the_quantizer_copies(tmp_path):
    import gguf

    from edge_agent.llm.head_quant import quantize_head

    base, q8, moment = _embedding_base(tmp_path, 2)
    write_merged_f32(base, {}, tmp_path / "m.gguf", requantized=True, head_moment=moment)
    head = {t.name: t for t in gguf.GGUFReader(tmp_path / "m.gguf", "r").tensors}["token_embd.weight"]
    assert head.tensor_type == gguf.GGMLQuantizationType.Q5_1
    expected = quantize_head(gguf.quants.dequantize(q8, gguf.GGMLQuantizationType.Q8_0), moment)
    np.testing.assert_array_equal(np.asarray(head.data), expected)


def test_an_output_head_of_its_own_is_the_fitted_q5_1_beside_the_embedding_kept_as_it_was(tmp_path):
    import gguf

    from edge_agent.llm.head_quant import OUTPUT_DAMP, quantize_head

    base, q8, moment = _embedding_base(tmp_path, 3, **{"blk.0.attn_norm.weight": np.ones(64, np.float32)})
    write_merged_f32(base, {}, tmp_path / "m.gguf", head_moment=moment, output_head=True)
    out = {t.name: t for t in gguf.GGUFReader(tmp_path / "m.gguf", "r").tensors}
    assert set(out) == {"token_embd.weight", "output.weight", "blk.0.attn_norm.weight"}
    assert out["token_embd.weight"].tensor_type == gguf.GGMLQuantizationType.Q8_0
    np.testing.assert_array_equal(np.asarray(out["token_embd.weight"].data), q8)  # the embedding as it was
    assert out["output.weight"].tensor_type == gguf.GGMLQuantizationType.Q5_1
    floats = gguf.quants.dequantize(q8, gguf.GGMLQuantizationType.Q8_0)
    np.testing.assert_array_equal(np.asarray(out["output.weight"].data), quantize_head(floats, moment, OUTPUT_DAMP))
    write_merged_f32(base, {}, tmp_path / "plain.gguf", output_head=True)  # no moment: floats for the quantizer
    plain = {t.name: t for t in gguf.GGUFReader(tmp_path / "plain.gguf", "r").tensors}["output.weight"]
    assert plain.tensor_type == gguf.GGMLQuantizationType.F32
    np.testing.assert_allclose(np.asarray(plain.data), floats, rtol=1e-6)
    with_head = tmp_path / "with_head.gguf"
    _write(with_head, "gemma3", {"token_embd.weight": floats, "output.weight": floats})
    with pytest.raises(MergeError, match="output.weight of its own"):
        write_merged_f32(gguf.GGUFReader(with_head, "r"), {}, tmp_path / "x.gguf", output_head=True)


def test_a_merge_fitted_under_another_head_moment_is_made_again(tmp_path, monkeypatch):
    import json

    from edge_agent.llm import adapter as adapter_module
    from edge_agent.llm import merge as merging
    from edge_agent.llm.adapter import Adapter
    from edge_agent.llm.bundled import sha256_file
    from edge_agent.llm.heads import model_sha256

    base = tmp_path / "base.gguf"
    base.write_bytes(b"base weights")
    models = tmp_path / "models"
    models.mkdir()
    base_sha = model_sha256(base, models)
    old, new = np.diag([1.0, 2.0]), np.diag([1.0, 3.0])
    monkeypatch.setattr(adapter_module, "head_moment_of", lambda a: new)
    adapter = Adapter(tmp_path / "a.gguf", "c" * 64, {"head_input": {"file": "a.head.npy"}})
    path = models / merged_name(base_sha, adapter.sha256, "q8_0_emb_q5_1")
    made = []

    def fake_merge(base_path, adapter_path, out, recipe, head_moment=None):
        made.append(head_moment)
        out.write_bytes(b"merged " + head_moment.tobytes())
        card = {"base_sha256": base_sha, "adapter_sha256": adapter.sha256, "sha256": sha256_file(out), "seconds": 0,
                "head_moment": merging.moment_digest(head_moment)}
        merging.card_for(out).write_text(json.dumps(card))
        return merging.Merged(out, card)

    monkeypatch.setattr(merging, "merge", fake_merge)
    fake_merge(base, adapter.path, path, "q8_0_emb_q5_1", old)  # an earlier fit, on disk
    made.clear()
    found = merging.ensure_merged(base, adapter, models, "q8_0_emb_q5_1")
    assert len(made) == 1 and made[0] is new and found.card["head_moment"] == merging.moment_digest(new)
    again = merging.ensure_merged(base, adapter, models, "q8_0_emb_q5_1")  # now it matches: kept
    assert len(made) == 1 and again.path == found.path


def test_a_recipe_that_keeps_the_head_never_reads_the_moment_file(tmp_path, monkeypatch):
    import json

    from edge_agent.llm import merge as merging
    from edge_agent.llm.adapter import Adapter, AdapterError

    base = tmp_path / "base.gguf"
    base.write_bytes(b"base weights")
    adapter = Adapter(tmp_path / "a.gguf", "c" * 64, {"head_input": {"file": "gone.head.npy", "sha256": "0" * 64}})
    made = []

    def fake_merge(base_path, adapter_path, out, recipe, head_moment=None):
        made.append((recipe, head_moment))
        out.write_bytes(b"merged")
        card = {"sha256": "1" * 64, "seconds": 0, "head_moment": merging.moment_digest(head_moment)}
        merging.card_for(out).write_text(json.dumps(card))
        return merging.Merged(out, card)

    monkeypatch.setattr(merging, "merge", fake_merge)
    merging.ensure_merged(base, adapter, tmp_path / "models", "q8_0")  # a recipe keeping the head loads, the file missing
    assert made == [("q8_0", None)]
    with pytest.raises(AdapterError, match="gone.head.npy"):  # the recipe that needs it says what is wrong
        merging.ensure_merged(base, adapter, tmp_path / "models", "q8_0_emb_q5_1")


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
def test_the_small_head_recipe_fits_the_embedding_under_the_cards_moment_and_is_smaller_than_the_base(
        tiny_model_path):
    import gguf

    from edge_agent.llm.adapter import choose_adapter
    from edge_agent.llm.head_quant import quantize_head
    from edge_agent.llm.adapter import head_moment_of
    from edge_agent.llm.merge import ensure_merged, moment_digest
    from tests.conftest import MODEL_CACHE_DIR

    adapter = choose_adapter("auto", tiny_model_path, MODEL_CACHE_DIR)
    moment = head_moment_of(adapter)
    assert moment is not None and moment.shape == (640, 640), "the bundled card names no head moment"
    made = ensure_merged(tiny_model_path, adapter, MODEL_CACHE_DIR, "q8_0_emb_q5_1")
    tensors = {t.name: t for t in gguf.GGUFReader(made.path, "r").tensors}
    assert tensors["token_embd.weight"].tensor_type == gguf.GGMLQuantizationType.Q5_1
    assert tensors["blk.0.attn_q.weight"].tensor_type == gguf.GGMLQuantizationType.Q8_0  # an adapted matrix
    assert made.path.stat().st_size < tiny_model_path.stat().st_size
    assert made.card["recipe"] == "q8_0_emb_q5_1" and made.card["merged_tensors"] > 0
    assert made.card["head_moment"] == moment_digest(moment)
    base = {t.name: t for t in gguf.GGUFReader(tiny_model_path, "r").tensors}["token_embd.weight"]
    rows = gguf.quants.dequantize(np.asarray(base.data)[:3000], base.tensor_type)
    np.testing.assert_array_equal(np.asarray(tensors["token_embd.weight"].data)[:3000],
                                  quantize_head(rows, moment))  # llama.cpp copied the fit


@pytest.mark.real_model
def test_the_own_head_recipe_loads_with_only_the_embedding_rows_it_reads_resident(tiny_model_path, tmp_path,
                                                                                   monkeypatch):
    import asyncio
    import gc

    import gguf

    from edge_agent.config import load_settings
    from edge_agent.llm import load_model
    from edge_agent.llm.adapter import choose_adapter, head_moment_of
    from edge_agent.llm.head_quant import OUTPUT_DAMP, quantize_head
    from edge_agent.llm import merge as merging
    from edge_agent.llm.merge import ensure_merged, moment_digest
    from edge_agent.llm.residency import resident
    from edge_agent.modelfile.gguf import lookup_only_span
    from tests.conftest import MODEL_CACHE_DIR

    adapter = choose_adapter("auto", tiny_model_path, MODEL_CACHE_DIR)
    moment = head_moment_of(adapter)
    made = ensure_merged(tiny_model_path, adapter, MODEL_CACHE_DIR, "q8_0_out_q5_1")
    tensors = {t.name: t for t in gguf.GGUFReader(made.path, "r").tensors}
    q = gguf.GGMLQuantizationType
    assert tensors["token_embd.weight"].tensor_type == q.Q8_0 and tensors["output.weight"].tensor_type == q.Q5_1
    embedding = tensors["token_embd.weight"]
    span = lookup_only_span(made.path)  # what the runtime drops after loading
    assert span[0] == embedding.data_offset and 0 <= span[1] - embedding.n_bytes < 32
    assert lookup_only_span(tiny_model_path) is None  # the base's embedding is its head too: read whole
    assert made.card["head_moment"] == moment_digest(moment)
    rows = gguf.quants.dequantize(np.asarray(embedding.data)[:2000], embedding.tensor_type)
    np.testing.assert_array_equal(np.asarray(tensors["output.weight"].data)[:2000],
                                  quantize_head(rows, moment, OUTPUT_DAMP))  # llama.cpp copied the fit
    size, looked_up = made.path.stat().st_size, embedding.n_bytes
    del tensors, embedding, rows  # the reader's own mapping of the file, gone before the model maps it
    gc.collect()
    assert resident(made.path) == 0
    settings = load_settings(None, {"data_dir": str(tmp_path / "data"), "model.path": str(tiny_model_path),
                                    "model.adapter_merge": "q8_0_out_q5_1", "model.head_cache_mb": 0}, environ={})
    monkeypatch.setattr(merging, "ensure_merged", lambda *args: made)  # the one made above, not again in tmp_path
    model = load_model(settings)
    try:
        assert model.path == made.path
        for prompt in ("When is the dentist?", "Quelle heure est-il à Kraków?", "Wi-Fi password 8936 gull"):
            reply = asyncio.run(model.generate(prompt, max_tokens=8, role="test"))
            assert reply.usage.generated_tokens > 0
            held = resident(made.path)
            # the head and every matrix are read for each token; of the embedding only the rows of the
            # call being made, dropped again after it
            assert 0.5 * (size - looked_up) < held < size - 0.9 * looked_up, (held, size, looked_up)
        other = load_model(settings)  # the same file mapped again: each model advises only its own mapping
        try:
            assert model._lookup_pages and other._lookup_pages
            assert not set(other._lookup_pages) & set(model._lookup_pages)
        finally:
            other.close()
        assert other._lookup_pages == []  # unmapped: never advised again
    finally:
        model.close()


@pytest.mark.real_model
def test_the_head_moment_is_the_second_moment_of_the_heads_input_over_every_token(tiny_model_path):
    from edge_agent.llm.head_quant import input_moment

    said = []
    moment, tokens = input_moment(tiny_model_path, ["when is the dentist", "Leo's girlfriend is called Mia."],
                                  progress=lambda done, total: said.append((done, total)))
    assert said == [(2, 2)]
    assert moment.shape == (640, 640) and np.allclose(moment, moment.T)
    assert 10 <= tokens <= 30  # every token of both texts, with their BOS
    assert np.linalg.eigvalsh(moment).min() > -1e-6 * np.abs(moment).max()  # a moment: no negative direction
    mean_square = np.diag(moment)
    assert np.all(mean_square > 0) and mean_square.max() > 20 * np.median(mean_square)  # Gemma's dominant dimensions
    correlation = moment / np.sqrt(np.outer(mean_square, mean_square))
    assert np.abs(correlation - np.eye(640)).max() > 0.3  # dimensions move together: what the carried errors use


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

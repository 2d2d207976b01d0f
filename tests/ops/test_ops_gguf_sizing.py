"""The GGUF header reader and the memory estimate, on synthetic headers and the real bundled model."""
from __future__ import annotations

import struct

import pytest

from edge_agent.modelfile.gguf import ArrayInfo, GGUFError, read_header
from edge_agent.modelfile.sizing import LIMIT_STEP_MB, estimate, kv_cache_bytes, systemd_limits, vocab_size

U32, I32, F32, BOOL, STR, ARR, U64 = 4, 5, 6, 7, 8, 9, 10


def gguf_string(s: str) -> bytes:
    data = s.encode()
    return struct.pack("<Q", len(data)) + data


def gguf_value(vtype: int, value) -> bytes:
    if vtype == STR:
        return gguf_string(value)
    if vtype == ARR:
        item_type, items = value
        return struct.pack("<IQ", item_type, len(items)) + b"".join(gguf_value(item_type, i) for i in items)
    return struct.pack({U32: "<I", I32: "<i", F32: "<f", BOOL: "<?", U64: "<Q"}[vtype], value)


def write_gguf(path, kvs: list[tuple[str, int, object]], version: int = 3, tensors: int = 7):
    body = b"".join(gguf_string(k) + struct.pack("<I", t) + gguf_value(t, v) for k, t, v in kvs)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", version, tensors, len(kvs)) + body + b"\0" * 64)
    return path


def tiny_llama(path, with_key_length=True):
    kvs = [("general.architecture", STR, "llama"), ("general.name", STR, "tiny"),
           ("llama.block_count", U32, 4), ("llama.embedding_length", U32, 512),
           ("llama.attention.head_count", U32, 8), ("llama.attention.head_count_kv", U32, 2),
           ("llama.rope.freq_base", F32, 10000.0), ("tokenizer.ggml.add_bos_token", BOOL, True),
           ("tokenizer.ggml.tokens", ARR, (STR, [f"tok{i}" for i in range(1000)])),
           ("tokenizer.ggml.scores", ARR, (F32, [0.5] * 1000)),
           ("general.tags", ARR, (STR, ["a", "b"])), ("general.size", U64, 123456789012)]
    if with_key_length:
        kvs += [("llama.attention.key_length", U32, 64), ("llama.attention.value_length", U32, 64)]
    return write_gguf(path, kvs)


def test_reads_scalars_strings_and_arrays(tmp_path):
    h = read_header(tiny_llama(tmp_path / "m.gguf"))
    assert h.version == 3 and h.tensor_count == 7 and h.architecture == "llama"
    assert h.arch_value("block_count") == 4 and h.metadata["general.name"] == "tiny"
    assert h.metadata["llama.rope.freq_base"] == 10000.0 and h.metadata["tokenizer.ggml.add_bos_token"] is True
    assert h.metadata["general.tags"] == ["a", "b"] and h.metadata["general.size"] == 123456789012
    assert h.metadata["tokenizer.ggml.tokens"] == ArrayInfo(STR, 1000)
    assert h.metadata["tokenizer.ggml.scores"] == ArrayInfo(F32, 1000)
    assert vocab_size(h) == 1000


def test_kv_cache_formula(tmp_path):
    h = read_header(tiny_llama(tmp_path / "m.gguf"))
    kv, layers, kv_heads, head_dim = kv_cache_bytes(h, 1024)
    assert (layers, kv_heads, head_dim) == (4, 2, 64)
    assert kv == 2 * 4 * 1024 * 2 * 64 * 2
    # Without key_length the head width is embedding_length / head_count (512 / 8 = 64): same size.
    h2 = read_header(tiny_llama(tmp_path / "m2.gguf", with_key_length=False))
    assert kv_cache_bytes(h2, 1024)[0] == kv


@pytest.mark.parametrize("data, message", [
    (b"", "truncated"),
    (b"GGML" + b"\0" * 40, "bad magic"),
    (b"GGUF" + struct.pack("<IQQ", 1, 0, 0), "version 1"),
    (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + gguf_string("k") + struct.pack("<I", 99), "unknown GGUF value type"),
    (b"GGUF" + struct.pack("<IQQ", 3, 0, 2) + gguf_string("k") + struct.pack("<I", U32), "truncated"),
    (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1 << 40), "header corrupt"),
])
def test_bad_files_name_the_path(tmp_path, data, message):
    path = tmp_path / "bad.gguf"
    path.write_bytes(data)
    with pytest.raises(GGUFError, match=message) as info:
        read_header(path)
    assert str(path) in str(info.value)


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(GGUFError, match="nope.gguf"):
        read_header(tmp_path / "nope.gguf")


def test_real_bundled_model_header_and_estimate(tiny_model_path):
    h = read_header(tiny_model_path)
    assert h.architecture == "gemma3" and h.version == 3
    kv, layers, kv_heads, head_dim = kv_cache_bytes(h, 4096)
    assert (layers, kv_heads, head_dim) == (18, 1, 256)
    assert kv == 2 * 18 * 4096 * 1 * 256 * 2  # 72 MiB
    need = estimate(tiny_model_path, n_ctx=4096, n_batch=256, keep_sessions=True, kept_sessions=2)
    assert need.n_vocab == 262144 and need.kv_mb == 72.0 and need.sessions_mb == 144.0
    assert need.logits_mb == 49.0 and need.model_mb == pytest.approx(tiny_model_path.stat().st_size / 2**20)
    off = estimate(tiny_model_path, n_ctx=2048, n_batch=256, keep_sessions=False, kept_sessions=2)
    assert off.sessions_mb == 0 and off.kv_mb == 36.0
    limits = systemd_limits(need)
    assert limits["MemoryHigh"] % LIMIT_STEP_MB == 0 and limits["MemoryMax"] % LIMIT_STEP_MB == 0
    assert need.total_mb * 1.25 <= limits["MemoryHigh"] < limits["MemoryMax"]


def _with_tensors(path, tensors: dict, alignment: int | None = None, read: bool = True):
    import gguf
    import numpy as np

    w = gguf.GGUFWriter(path, arch="gemma3")
    if alignment:
        w.data_alignment = alignment
        w.add_uint32("general.alignment", alignment)
    for name, shape in tensors.items():
        w.add_tensor(name, np.ones(shape, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return gguf.GGUFReader(path, "r") if read else None


@pytest.mark.parametrize("alignment", [None, 64])
def test_tensor_spans_are_where_gguf_py_finds_each_tensor(tmp_path, alignment):
    from edge_agent.modelfile.gguf import tensor_spans

    path = tmp_path / "m.gguf"
    reader = _with_tensors(path, {"token_embd.weight": (10, 8), "blk.0.attn_norm.weight": (3,),
                                  "output.weight": (10, 8)}, alignment)
    spans = tensor_spans(path)
    assert set(spans) == {t.name for t in reader.tensors}
    for t in reader.tensors:
        start, size = spans[t.name]
        assert start == t.data_offset
        assert t.n_bytes <= size < t.n_bytes + (alignment or 32)  # up to the next tensor: padding included
    assert max(start + size for start, size in spans.values()) == path.stat().st_size


def test_only_an_embedding_beside_an_output_head_of_its_own_is_lookup_only(tmp_path):
    from edge_agent.modelfile.gguf import lookup_only_span, tensor_spans

    untied, tied = tmp_path / "untied.gguf", tmp_path / "tied.gguf"
    _with_tensors(untied, {"token_embd.weight": (10, 8), "output.weight": (10, 8)})
    _with_tensors(tied, {"token_embd.weight": (10, 8), "blk.0.attn_norm.weight": (3,)})
    assert lookup_only_span(untied) == tensor_spans(untied)["token_embd.weight"]
    assert lookup_only_span(tied) is None  # the embedding is the head too: read whole for every token
    (tmp_path / "cut.gguf").write_bytes(untied.read_bytes()[:40])
    with pytest.raises(GGUFError, match="cut.gguf"):
        lookup_only_span(tmp_path / "cut.gguf")


def test_a_corrupt_tensor_table_is_a_gguf_error_naming_the_file(tmp_path):
    from edge_agent.modelfile.gguf import tensor_spans

    odd = tmp_path / "odd.gguf"
    _with_tensors(odd, {"token_embd.weight": (10, 8)}, alignment=48, read=False)  # not a power of two
    with pytest.raises(GGUFError, match="odd.gguf.*alignment"):
        tensor_spans(odd)
    short = tmp_path / "short.gguf"
    _with_tensors(short, {"token_embd.weight": (10, 8), "output.weight": (100, 80)})
    whole = short.read_bytes()
    short.write_bytes(whole[:len(whole) - 100 * 80 * 4 - 8])  # cut inside the first tensor's data
    with pytest.raises(GGUFError, match="short.gguf.*past the end"):
        tensor_spans(short)

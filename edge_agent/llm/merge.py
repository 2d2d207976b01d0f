"""The adapter merged into the weights: one GGUF, base plus LoRA, quantized as llama.cpp reads it fastest.

A runtime LoRA costs about 40 % of decode on this model: llama.cpp applies it as two extra matmuls
in every adapted layer, and the adapted tensors lose their repacked CPU layout. So the shipped
adapter is merged once — W' = W + (alpha / r) · B · A for every matrix it adapts — and the
result quantized by llama.cpp itself (llama_model_quantize) in one of MERGE_FTYPES, the token
embedding (most of this model's bytes, and its output head) copied as it is unless the recipe
gives it a type of its own (EMBEDDING_TYPES). Not in the base's own
4-bit recipe: the adapter's changes to a weight (|ΔW| about 0.0004) are smaller than a 4-bit step,
and a Q4_K_M merge decided as the base model does (the planner's held-out accuracy 0.26, base
0.24, base + runtime LoRA 0.78); Q8_0 keeps them. The merged file lives in the models dir,
named by the base's and the adapter's sha256, beside a card (`.json`) with both digests and its
own; the runtime loads it instead of base + LoRA (llm/__init__.py). Only numpy, gguf-py and
llama-cpp-python: no torch on the device.
"""
from __future__ import annotations

import json
import logging
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

MERGE_FTYPES = {"q4_k_m": 15, "q4_0": 2, "q8_0": 7, "q8_0_emb_q5_1": 7, "q5_k_m": 17, "f16": 1}
"""llama_ftype of each merge recipe (LLAMA_FTYPE_MOSTLY_*). q4_k_m is the bundled base's own recipe
(on its 640-wide matrices it falls back to Q5_0, as the base does); q4_0 and q8_0 are the types
llama.cpp repacks for ARM; f16 is no quantization of the merged matrices at all. q5_k_m gives every
adapted matrix five or six bits (Q5_K / Q6_K where rows are a multiple of 256 wide, Q5_1 on this
model's 640-wide ones: another grid than the base's Q5_0, so the change is not rounded away), the
base's size within 7 MB: measured on 06d2416 (`bench model`) RSS 427.7 MB against 430.6 with the
runtime LoRA, decode 0.966 of the base's; but it decides as the runtime LoRA on 0.70 of `tune merge`'s
probe and loses answers where the adapter's signal is thinnest, the planner's skill ("cars on level 5
in bay B28, save that" planned as a file search): held-out 303 of 328 as q8_0 (5000-5007), 296 against
299 (5100-5107), 278 against 283 (5200-5207), world/ 85 against 87. It is for a model whose matrices
are most of its bytes (a 3B), where q8_0 would double them; on this one q8_0 stays the default."""
EMBEDDING_TYPES = {"q8_0_emb_q5_1": 7}
"""The ggml type a recipe gives the token embedding (GGML_TYPE_Q5_1 = 7); the others keep the
base's (Q8_0 in the bundled one). q8_0_emb_q5_1 is for a household short of memory: with the
merged matrices in Q8_0 the file is 38 MB larger than the base, while the embedding (also Gemma's
output head, 170 MB) in Q5_1 makes it 14 MB smaller (Q6_K and the other K types need rows a
multiple of 256 wide; this model's are 640). Measured on 1bf43d4 (`bench model`): RSS 405 MB
against 429 with the runtime LoRA (458 with q8_0 on ca88240), decode 0.995 of the base's; but 279
of 320 held-out answers against 283 (`tune probe --whole`), and the Q5_0 embedding lost 4 of
world/'s 102. Measured again on db6bfe8 (answers chosen, not written): world/ 88 of 102 against
q8_0's 87, held-out 294 of 328 against 293 (5100-5107) and 298 against 302 (5000-5007), three of
those four losses questions planned as notes to save ("hey remind me of rustams book tip please")
where q8_0 planned none. Its smaller output head moves near ties, so q8_0 stays the default."""
DEFAULT_MERGE = "q8_0"  # measured: docs/eval (decode speed and agreement with base + runtime LoRA)
LORA_A, LORA_B = ".lora_a", ".lora_b"
ALPHA_KEY = "adapter.lora.alpha"
TOKEN_EMBEDDING = "token_embd.weight"


class MergeError(RuntimeError):
    """The adapter does not fit the base (a tensor it adapts is missing or of another shape)."""


@dataclass(frozen=True)
class Merged:
    """A merged model on disk and what it was made from."""

    path: Path
    """The merged GGUF."""
    card: dict[str, Any]
    """base_sha256, adapter_sha256, recipe, sha256 (of the merged file), seconds."""


def merged_name(base_sha: str, adapter_sha: str, recipe: str) -> str:
    """The merged file's name: the same base, adapter and recipe always make the same file."""
    return f"merged-{base_sha[:12]}-{adapter_sha[:12]}-{recipe}.gguf"


def card_for(path: Path) -> Path:
    return path.with_suffix(".json")


def made_merge(models_dir: Path, base_sha: str, adapter_sha: str, recipe: str = DEFAULT_MERGE) -> Merged | None:
    """The merged file for this base, adapter and recipe with its card, if a merge finished (its
    bytes not checked: find_merged and doctor's start check do that)."""
    path = Path(models_dir) / merged_name(base_sha, adapter_sha, recipe)
    try:
        card = json.loads(card_for(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not path.is_file() or card.get("base_sha256") != base_sha or card.get("adapter_sha256") != adapter_sha:
        return None
    return Merged(path, card)


def find_merged(models_dir: Path, base_sha: str, adapter_sha: str, recipe: str = DEFAULT_MERGE) -> Merged | None:
    """The merged model for this base and adapter, if it was made and is whole (its sha256 checked
    against its card once, then trusted by size and mtime like the base: heads.model_sha256)."""
    from edge_agent.llm.heads import model_sha256

    made = made_merge(models_dir, base_sha, adapter_sha, recipe)
    if made is not None and model_sha256(made.path, Path(models_dir)) != made.card.get("sha256"):
        log.warning("%s does not match its card; it will be made again", made.path)
        return None
    return made


def merge(base: Path, adapter: Path, out: Path, recipe: str = DEFAULT_MERGE) -> Merged:
    """Write base ⊕ adapter to `out` in `recipe` (MERGE_FTYPES), with its card; atomically."""
    import gguf

    from edge_agent.llm.bundled import sha256_file

    if recipe not in MERGE_FTYPES:
        raise ValueError(f"unknown merge recipe {recipe!r}; use one of {', '.join(MERGE_FTYPES)}")
    t0 = time.perf_counter()
    base_reader, lora_reader = gguf.GGUFReader(base, "r"), gguf.GGUFReader(adapter, "r")
    deltas = lora_deltas(lora_reader)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="merge-", dir=out.parent) as tmp:
        plain = Path(tmp) / "merged-f32.gguf"
        embedding = write_merged_f32(base_reader, deltas, plain, requantized=recipe in EMBEDDING_TYPES)
        partial = out.with_name(out.name + ".partial")
        quantize(plain, partial, MERGE_FTYPES[recipe], EMBEDDING_TYPES.get(recipe, embedding))
        partial.replace(out)
    card = {"file": out.name, "recipe": recipe, "base_file": Path(base).name, "base_sha256": sha256_file(base),
            "adapter_file": Path(adapter).name, "adapter_sha256": sha256_file(adapter), "sha256": sha256_file(out),
            "bytes": out.stat().st_size, "merged_tensors": len(deltas),
            "seconds": round(time.perf_counter() - t0, 1)}
    card_for(out).write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    return Merged(out, card)


def lora_deltas(reader: Any) -> dict[str, np.ndarray]:
    """{base tensor name: (alpha / r) · B · A} for every pair of LoRA tensors in the adapter."""
    field = reader.get_field(ALPHA_KEY)
    if field is None:
        raise MergeError(f"the adapter has no {ALPHA_KEY}")
    alpha = float(field.contents())
    tensors = {t.name: t for t in reader.tensors}
    out: dict[str, np.ndarray] = {}
    for name, a in tensors.items():
        if not name.endswith(LORA_A):
            continue
        target = name[: -len(LORA_A)]
        b = tensors.get(target + LORA_B)
        if b is None:
            raise MergeError(f"{name} has no {LORA_B} beside it")
        a_mat, b_mat = _floats(a), _floats(b)  # numpy (r, in) and (out, r)
        rank = a_mat.shape[0]
        out[target] = (alpha / rank) * (b_mat @ a_mat)
    if not out:
        raise MergeError("the adapter holds no LoRA tensors")
    return out


def _floats(tensor: Any) -> np.ndarray:
    """A tensor's values as float32, in numpy's (rows, columns) order, dequantized if need be."""
    import gguf

    data = np.asarray(tensor.data)
    if tensor.tensor_type in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16):
        return data.astype(np.float32)
    return gguf.quants.dequantize(data, tensor.tensor_type).astype(np.float32)


def write_merged_f32(reader: Any, deltas: dict[str, np.ndarray], path: Path, requantized: bool = False) -> int:
    """The base with every adapted matrix merged and written as F32, every other tensor copied as it
    is (the token embedding too, unless it is to be `requantized`: then as F32); returns the token
    embedding's ggml type in the base."""
    import gguf

    arch = reader.get_field(gguf.Keys.General.ARCHITECTURE).contents()
    writer = gguf.GGUFWriter(path, arch=arch, endianess=reader.endianess)
    alignment = reader.get_field(gguf.Keys.General.ALIGNMENT)
    if alignment is not None:
        writer.data_alignment = alignment.contents()
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        vtype = field.types[0]
        sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), vtype, sub_type=sub)
    missing = set(deltas) - {t.name for t in reader.tensors}
    if missing:
        raise MergeError(f"the adapter changes tensors the base does not have: {sorted(missing)[:3]}")
    embedding = 0
    arrays: list[tuple[Any, np.ndarray | None]] = []
    for t in reader.tensors:
        if t.name == TOKEN_EMBEDDING:
            embedding = int(t.tensor_type)
        delta = deltas.get(t.name)
        if delta is not None or (requantized and t.name == TOKEN_EMBEDDING):
            merged = _floats(t)
            if delta is not None and merged.shape != delta.shape:
                raise MergeError(f"{t.name}: base {merged.shape}, adapter {delta.shape}")
            if delta is not None:
                merged += delta
            writer.add_tensor_info(t.name, merged.shape, merged.dtype, merged.nbytes, gguf.GGMLQuantizationType.F32)
            arrays.append((t, merged))
        else:
            writer.add_tensor_info(t.name, t.data.shape, t.data.dtype, t.data.nbytes, t.tensor_type)
            arrays.append((t, None))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for t, merged in arrays:
        writer.write_tensor_data(merged if merged is not None else t.data, tensor_endianess=reader.endianess)
    writer.close()
    return embedding


def quantize(src: Path, dst: Path, ftype: int, embedding_type: int) -> None:
    """llama.cpp's own quantizer: `src` (merged matrices in F32) to `dst` in `ftype`, the token
    embedding in `embedding_type` and nothing quantized twice."""
    import llama_cpp

    from edge_agent.llm.native_log import route_native_logs

    route_native_logs()
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.allow_requantize = False
    params.token_embedding_type = embedding_type
    params.nthread = 0  # every core
    from llama_cpp._utils import suppress_stdout_stderr

    with suppress_stdout_stderr(disable=False):  # the quantizer prints its progress itself, not through the log
        rc = llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), params)
    if rc != 0:
        raise MergeError(f"llama_model_quantize returned {rc} for {src.name}")


def ensure_merged(base: Path, adapter: Any, models_dir: Path, recipe: str = DEFAULT_MERGE) -> Merged:
    """The merged model for `base` and `adapter` (an llm.adapter.Adapter), made now if it is not in
    `models_dir` yet (once; another process making it meanwhile is waited for). Its sha256 is
    checked against the one the adapter's card records for the recipe, when the card has one."""
    import fcntl

    from edge_agent.llm.heads import model_sha256

    models_dir = Path(models_dir)
    models_dir.mkdir(parents=True, exist_ok=True)
    base_sha = model_sha256(Path(base), models_dir)
    with open(models_dir / ".merge.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = find_merged(models_dir, base_sha, adapter.sha256, recipe)
        if found is None:
            log.info("merging the task adapter into %s (%s), once: it is kept in %s", Path(base).name, recipe,
                     models_dir)
            found = merge(base, adapter.path, models_dir / merged_name(base_sha, adapter.sha256, recipe), recipe)
            log.info("merged in %.0f s: %s", found.card["seconds"], found.path.name)
    expected = ((adapter.card or {}).get("merged") or {}).get(recipe, {}).get("sha256")
    if expected and expected != found.card.get("sha256"):
        log.warning("the merged model %s differs from the one the adapter's card records (%s…); another "
                    "llama.cpp build quantizes differently", found.path.name, expected[:12])
    return found

"""The adapter merged into the weights: one GGUF, base plus LoRA, quantized as llama.cpp reads it fastest.

A runtime LoRA costs about 40 % of decode on this model: llama.cpp applies it as two extra matmuls
in every adapted layer, and the adapted tensors lose their repacked CPU layout. So the shipped
adapter is merged once — W' = W + (alpha / r) · B · A for every matrix it adapts — and the
result quantized by llama.cpp itself (llama_model_quantize) in one of MERGE_FTYPES, the token
embedding (most of this model's bytes, and its output head) copied as it is unless the recipe
gives it a type of its own (EMBEDDING_TYPES) or writes the model an output head of its own beside it
(OUTPUT_TYPES). Not in the base's own
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

from edge_agent.modelfile.gguf import OUTPUT_HEAD, TOKEN_EMBEDDING

log = logging.getLogger(__name__)

MERGE_FTYPES = {"q4_k_m": 15, "q4_0": 2, "q8_0": 7, "q8_0_emb_q5_1": 7, "q8_0_out_q5_1": 7, "q5_k_m": 17, "f16": 1}
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
are most of its bytes (a 3B), where q8_0 would double them; not on this one."""
Q5_1 = 7  # GGML_TYPE_Q5_1
EMBEDDING_TYPES = {"q8_0_emb_q5_1": Q5_1}
"""The ggml type a recipe gives the token embedding (GGML_TYPE_Q5_1 = 7); the others keep the
base's (Q8_0 in the bundled one). The embedding is also Gemma's output head (170 MB in Q8_0, read
whole for every token), so in Q5_1 the merged file is 14 MB smaller than the base, where the q8_0
recipe's is 38 MB larger (Q6_K and the other K types need rows a multiple of 256 wide; this model's
are 640). When the adapter's card names the head input's second moment (`tune merge` measures it:
head_quant.py) the Q5_1 head is fitted to the logits under it; without it llama.cpp's quantizer
makes the Q5_1 from each block's minimum and maximum, which moved near ties: measured on db6bfe8 and
06d2416, world/ 88 of 102 against q8_0's 87 but held-out 4 to 6 answers fewer of 984. Fitted to
the logits (measured on 41062c9's code + head_quant's GPTQ): held-out 885 of 984 against q8_0's 886,
world/ 86 against 87 (q025: the flights' booking reference asked of the right skill, the hotel's
line chosen), the whole model's next token as q8_0's on 0.940 of held-out training text (docs/eval)."""
OUTPUT_TYPES = {"q8_0_out_q5_1": Q5_1}
"""Recipes that give the model an output head of its own (`output.weight`) in this ggml type, fitted
to the logits under the head input's moment (head_quant.OUTPUT_DAMP), and keep the token embedding
as the base has it (Q8_0). The head is read whole for every token; the embedding a row per prompt
token, so the runtime drops its pages after loading (llm/residency.py) and only the rows ever
read come back. Unlike q8_0_emb_q5_1 the embedding keeps q8_0's precision, and the head's fit need
not also serve as an embedding. Measured on the bundled model (docs/eval): `bench model` RSS 405.5
MB against the runtime LoRA's 429.1 (q8_0: 455.3; 567 for a second while loading), decode 0.974 of
the base's; world/ 87 of 102, one answer of 102 other than q8_0's; held out 885 of 984 against
q8_0's 886 (+2 -3); the default."""
DEFAULT_MERGE = "q8_0_out_q5_1"  # measured: docs/eval (memory, decode speed, answers against q8_0)
LORA_A, LORA_B = ".lora_a", ".lora_b"
ALPHA_KEY = "adapter.lora.alpha"


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


def merge(base: Path, adapter: Path, out: Path, recipe: str = DEFAULT_MERGE,
          head_moment: np.ndarray | None = None) -> Merged:
    """Write base ⊕ adapter to `out` in `recipe` (MERGE_FTYPES), with its card; atomically. A recipe
    that re-quantizes the embedding to Q5_1, or writes an output head of its own, fits that head to
    the logits under the head input's second moment `head_moment` when given (head_quant.py)."""
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
        fitted = head_moment if fits_head(recipe) else None
        embedding = write_merged_f32(base_reader, deltas, plain, requantized=recipe in EMBEDDING_TYPES,
                                     head_moment=fitted, output_head=recipe in OUTPUT_TYPES)
        partial = out.with_name(out.name + ".partial")
        quantize(plain, partial, MERGE_FTYPES[recipe], EMBEDDING_TYPES.get(recipe, embedding),
                 OUTPUT_TYPES.get(recipe))
        partial.replace(out)
    card = {"file": out.name, "recipe": recipe, "base_file": Path(base).name, "base_sha256": sha256_file(base),
            "adapter_file": Path(adapter).name, "adapter_sha256": sha256_file(adapter), "sha256": sha256_file(out),
            "bytes": out.stat().st_size, "merged_tensors": len(deltas),
            "head_moment": moment_digest(fitted), "seconds": round(time.perf_counter() - t0, 1)}
    card_for(out).write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    return Merged(out, card)


def fits_head(recipe: str) -> bool:
    """Whether `recipe` fits its head under the head input's moment: it re-quantizes the embedding
    to Q5_1 or writes an output head of its own (the others keep the base's, or take llama.cpp's own type)."""
    return EMBEDDING_TYPES.get(recipe) == Q5_1 or recipe in OUTPUT_TYPES


def moment_digest(moment: np.ndarray | None) -> str | None:
    """What a merged card records of the moment its head was fitted under (None: not fitted)."""
    if moment is None:
        return None
    import hashlib

    return hashlib.sha256(np.asarray(moment, np.float32).tobytes()).hexdigest()


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


def write_merged_f32(reader: Any, deltas: dict[str, np.ndarray], path: Path, requantized: bool = False,
                     head_moment: np.ndarray | None = None, output_head: bool = False) -> int:
    """The base with every adapted matrix merged and written as F32, every other tensor copied as it
    is (the token embedding too, unless it is to be `requantized`: then as F32, or with
    `head_moment` as Q5_1 fitted to the logits under it, which the quantizer then copies); with
    `output_head`, an output head of its own beside the embedding (Q5_1 fitted under `head_moment`,
    or F32 for the quantizer without one); returns the token embedding's ggml type in the base."""
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
    if output_head and any(t.name == OUTPUT_HEAD for t in reader.tensors):
        raise MergeError(f"the base has an {OUTPUT_HEAD} of its own already")
    embedding = 0
    arrays: list[tuple[Any, np.ndarray | None]] = []
    for t in reader.tensors:
        delta = deltas.get(t.name)
        if t.name == TOKEN_EMBEDDING:
            embedding = int(t.tensor_type)
            if output_head:
                arrays.append(_output_head(writer, t, delta, head_moment))
        if requantized and t.name == TOKEN_EMBEDDING and head_moment is not None:
            from edge_agent.llm.head_quant import quantize_head

            fitted = quantize_head(_floats(t), head_moment)
            writer.add_tensor_info(t.name, fitted.shape, fitted.dtype, fitted.nbytes, gguf.GGMLQuantizationType.Q5_1)
            arrays.append((t, fitted))
        elif delta is not None or (requantized and t.name == TOKEN_EMBEDDING):
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
    if output_head and not embedding:
        raise MergeError(f"the base has no {TOKEN_EMBEDDING} to make an output head of")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for t, merged in arrays:
        writer.write_tensor_data(merged if merged is not None else t.data, tensor_endianess=reader.endianess)
    writer.close()
    return embedding


def _output_head(writer: Any, embedding: Any, delta: np.ndarray | None,
                 moment: np.ndarray | None) -> tuple[Any, np.ndarray]:
    """The output head made from the (merged) token embedding, its tensor info added to `writer`:
    Q5_1 fitted to the logits under `moment`, or F32 for the quantizer without one."""
    import gguf

    from edge_agent.llm.head_quant import OUTPUT_DAMP, quantize_head

    floats = _floats(embedding)
    if delta is not None and floats.shape != delta.shape:
        raise MergeError(f"{embedding.name}: base {floats.shape}, adapter {delta.shape}")
    if delta is not None:
        floats += delta
    head = floats if moment is None else quantize_head(floats, moment, OUTPUT_DAMP)
    kind = gguf.GGMLQuantizationType.F32 if moment is None else gguf.GGMLQuantizationType.Q5_1
    writer.add_tensor_info(OUTPUT_HEAD, head.shape, head.dtype, head.nbytes, kind)
    return embedding, head


def quantize(src: Path, dst: Path, ftype: int, embedding_type: int, output_type: int | None = None) -> None:
    """llama.cpp's own quantizer: `src` (merged matrices in F32) to `dst` in `ftype`, the token
    embedding in `embedding_type`, an output head of its own in `output_type`, nothing quantized twice."""
    import llama_cpp

    from edge_agent.llm.native_log import route_native_logs

    route_native_logs()
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.allow_requantize = False
    params.token_embedding_type = embedding_type
    if output_type is not None:
        params.output_tensor_type = output_type
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

    from edge_agent.llm.adapter import head_moment_of
    from edge_agent.llm.heads import model_sha256

    models_dir = Path(models_dir)
    models_dir.mkdir(parents=True, exist_ok=True)
    base_sha = model_sha256(Path(base), models_dir)
    with open(models_dir / ".merge.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        moment = head_moment_of(adapter) if fits_head(recipe) else None  # no other recipe reads the file
        found = find_merged(models_dir, base_sha, adapter.sha256, recipe)
        if found is not None and found.card.get("head_moment") != moment_digest(moment):
            log.info("%s was fitted under another head moment than the adapter's card names; "
                     "it is made again", found.path.name)
            found = None
        if found is None:
            log.info("merging the task adapter into %s (%s), once: it is kept in %s", Path(base).name, recipe,
                     models_dir)
            found = merge(base, adapter.path, models_dir / merged_name(base_sha, adapter.sha256, recipe), recipe,
                          moment)
            log.info("merged in %.0f s: %s", found.card["seconds"], found.path.name)
    expected = ((adapter.card or {}).get("merged") or {}).get(recipe, {}).get("sha256")
    if expected and expected != found.card.get("sha256"):
        log.warning("the merged model %s differs from the one the adapter's card records (%s…); another "
                    "llama.cpp build quantizes differently", found.path.name, expected[:12])
    return found

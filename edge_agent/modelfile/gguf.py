"""A tiny GGUF header reader: the metadata key/value pairs and where each tensor lies, without loading any.

GGUF v2/v3 layout (little-endian): magic "GGUF", uint32 version, uint64 tensor_count,
uint64 kv_count, then kv_count pairs of (string key, uint32 type, value). A string is a uint64
length and UTF-8 bytes; an array is a uint32 item type, a uint64 count and the items. Large
arrays (the tokenizer's 100k+ tokens) are skipped by seeking and kept only as their length.
Then tensor_count tensor infos (string name, uint32 n_dims, n_dims uint64 dimensions, uint32 ggml
type, uint64 offset into the data), and the data from the next multiple of `general.alignment`
(32 unless set).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
MAX_KV_COUNT = 1 << 20  # more pairs than this means a corrupt header, not a model
MAX_STRING_BYTES = 1 << 26  # 64 MiB: chat templates are KBs; larger is corruption
KEEP_ARRAY_ITEMS = 64  # arrays longer than this are summarised as ArrayInfo
MAX_DIMS = 4  # ggml's GGML_MAX_DIMS: more means a corrupt header
DEFAULT_ALIGNMENT = 32  # where the tensor data starts, unless general.alignment says otherwise
TOKEN_EMBEDDING = "token_embd.weight"
OUTPUT_HEAD = "output.weight"  # absent when the model's head is its token embedding (tied)

_SCALARS: dict[int, str] = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f",
                            7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


class GGUFError(ValueError):
    """The file is not a readable GGUF header; the message names the file."""


@dataclass(frozen=True)
class ArrayInfo:
    """A long metadata array, kept as its item type and length only."""

    item_type: int
    """GGUF type code of the items."""
    length: int
    """Number of items."""


@dataclass(frozen=True)
class GGUFHeader:
    """What the header of one GGUF file says."""

    version: int
    """GGUF format version."""
    tensor_count: int
    """Tensors in the file."""
    metadata: dict[str, Any]
    """Every metadata key; long arrays as ArrayInfo."""

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", ""))

    def arch_value(self, key: str) -> Any:
        """`<architecture>.<key>`, e.g. arch_value("block_count")."""
        return self.metadata.get(f"{self.architecture}.{key}")


class _Reader:
    def __init__(self, fh: BinaryIO, path: Path):
        self.fh = fh
        self.path = path

    def take(self, n: int) -> bytes:
        data = self.fh.read(n)
        if len(data) != n:
            raise GGUFError(f"{self.path}: GGUF header truncated")
        return data

    def scalar(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        n = self.scalar("<Q")
        if n > MAX_STRING_BYTES:
            raise GGUFError(f"{self.path}: GGUF string of {n} bytes; header corrupt")
        return self.take(n).decode("utf-8", errors="replace")

    def skip_string(self) -> None:
        n = self.scalar("<Q")
        if n > MAX_STRING_BYTES:
            raise GGUFError(f"{self.path}: GGUF string of {n} bytes; header corrupt")
        self.fh.seek(n, 1)

    def value(self, vtype: int) -> Any:
        if vtype in _SCALARS:
            return self.scalar(_SCALARS[vtype])
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            item_type = self.scalar("<I")
            count = self.scalar("<Q")
            if count <= KEEP_ARRAY_ITEMS:
                return [self.value(item_type) for _ in range(count)]
            if item_type in _SCALARS:
                self.fh.seek(struct.calcsize(_SCALARS[item_type]) * count, 1)
            elif item_type == _STRING:
                for _ in range(count):
                    self.skip_string()
            else:
                for _ in range(count):
                    self.value(item_type)
            return ArrayInfo(item_type, count)
        raise GGUFError(f"{self.path}: unknown GGUF value type {vtype}; header corrupt")


def read_header(path: Path) -> GGUFHeader:
    """Parse the header of the GGUF file at `path`; GGUFError if it is not one."""
    return _read(Path(path))[0]


def tensor_spans(path: Path) -> dict[str, tuple[int, int]]:
    """{tensor name: (file offset, bytes)} of every tensor in the GGUF at `path` (a tensor's bytes
    run to the next one's start, alignment padding included; the last one's to the end of the file)."""
    path = Path(path)
    _, starts = _read(path, tensors=True)
    try:
        size = path.stat().st_size
    except OSError as err:
        raise GGUFError(f"{path}: cannot read: {err.strerror or err}") from err
    if any(start > size for start in starts.values()):
        raise GGUFError(f"{path}: a tensor starts past the end of the file; truncated or corrupt")
    ends = sorted(starts.values()) + [size]
    after = {start: ends[i + 1] for i, start in enumerate(ends[:-1])}
    return {name: (start, after[start] - start) for name, start in starts.items()}


def lookup_only_span(path: Path) -> tuple[int, int] | None:
    """The token embedding's (file offset, bytes) when the GGUF has an output head of its own: then
    the embedding is only looked up, a row per prompt token (llm/residency.py drops the rest)."""
    spans = tensor_spans(path)
    if OUTPUT_HEAD in spans and TOKEN_EMBEDDING in spans:
        return spans[TOKEN_EMBEDDING]
    return None


def _read(path: Path, tensors: bool = False) -> tuple[GGUFHeader, dict[str, int]]:
    """The header, and with `tensors` each tensor's absolute file offset."""
    starts: dict[str, int] = {}
    try:
        with path.open("rb") as fh:
            r = _Reader(fh, path)
            if r.take(4) != MAGIC:
                raise GGUFError(f"{path}: not a GGUF file (bad magic)")
            version = r.scalar("<I")
            if version not in SUPPORTED_VERSIONS:
                raise GGUFError(f"{path}: GGUF version {version} not supported (want 2 or 3)")
            tensor_count = r.scalar("<Q")
            kv_count = r.scalar("<Q")
            if kv_count > MAX_KV_COUNT:
                raise GGUFError(f"{path}: {kv_count} metadata entries; header corrupt")
            metadata: dict[str, Any] = {}
            for _ in range(kv_count):
                key = r.string()
                metadata[key] = r.value(r.scalar("<I"))
            if tensors:
                relative = {}
                for _ in range(tensor_count):
                    name = r.string()
                    n_dims = r.scalar("<I")
                    if n_dims > MAX_DIMS:
                        raise GGUFError(f"{path}: a tensor of {n_dims} dimensions; header corrupt")
                    fh.seek(8 * n_dims + 4, 1)  # the dimensions and the type
                    relative[name] = r.scalar("<Q")
                align = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
                if not isinstance(align, int) or align <= 0 or align & (align - 1):
                    raise GGUFError(f"{path}: general.alignment {align!r} is not a power of two; header corrupt")
                data = -(-fh.tell() // align) * align
                starts = {name: data + offset for name, offset in relative.items()}
    except OSError as err:
        raise GGUFError(f"{path}: cannot read: {err.strerror or err}") from err
    return GGUFHeader(version, tensor_count, metadata), starts

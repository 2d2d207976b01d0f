"""Cached prompt heads: the KV state of each static prompt head, kept across requests.

Every planner, L2, L3 and reply prompt starts with a head that is the same for every
question. Its KV state is evaluated once (warm_heads), kept in RAM within a budget (LRU) and on
disk, so a new session restores the head and prefills only its variable tail. A disk entry is
keyed by the model file's hash, the head's token ids and the runtime settings that shape the KV
cells, so a restarted service is warm at once and a changed model or setting never reuses a stale
state. Only llama.cpp's sequence state is stored (never Llama.save_state, which drags the logits
buffer along).
"""
from __future__ import annotations

import collections
import ctypes
import hashlib
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

log = logging.getLogger(__name__)

DEFAULT_HEAD_CACHE_MB = 256  # RAM for cached heads; 0 disables the cache
DISK_BUDGET_FACTOR = 4  # the disk keeps up to this many times the RAM budget, least recently used first out
# (a new day's L3 heads replace the old day's there, which nothing asks for again)
MIN_HEAD_TOKENS = 16  # a shorter shared prefix is not worth a restore
HEAD_SUFFIX = ".kvhead"
MODEL_HASH_MARKER = "model-sha256.json"
SEQ = 0  # the one llama.cpp sequence this runtime uses


def seq_state(llm: Any) -> bytes:
    """llama.cpp's state of sequence 0 (its KV cells), nothing of llama-cpp-python's buffers."""
    import llama_cpp

    ctx = llm._ctx.ctx
    size = llama_cpp.llama_state_seq_get_size(ctx, SEQ)
    buf = (ctypes.c_uint8 * size)()
    n = llama_cpp.llama_state_seq_get_data(ctx, buf, size, SEQ)
    return bytes(memoryview(buf)[:n])


def set_seq_state(llm: Any, data: bytes, tokens: Sequence[int]) -> None:
    """Replace sequence 0 with a stored state whose cells hold `tokens`."""
    import llama_cpp

    buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
    if llama_cpp.llama_state_seq_set_data(llm._ctx.ctx, buf, len(data), SEQ) != len(data):
        llm.n_tokens = 0
        raise RuntimeError("llama.cpp refused the cached head state")
    llm.input_ids[: len(tokens)] = tokens
    llm.n_tokens = len(tokens)


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


@dataclass
class HeadStats:
    """Counters for benchmarks and status."""

    hits: int = 0
    """Generations whose prompt started with a cached head (restored or already in the KV cache)."""
    misses: int = 0
    """Generations whose prompt matched no cached head."""
    restores: int = 0
    """Head states loaded into the context."""
    restore_ms: float = 0.0
    """Total time restoring (disk reads included)."""
    warmed: int = 0
    """Heads evaluated and kept: by warm_heads, or the first time a prompt brought a new one."""
    warm_ms: float = 0.0
    """Total time evaluating heads."""
    disk_loads: int = 0
    """Head states read from disk."""


@dataclass
class HeadCache:
    """Head states by key; RAM LRU within budget_bytes, every entry also on disk when a dir is set."""

    budget_bytes: int
    """RAM budget; 0 disables the cache."""
    directory: Path | None = None
    """Where entries persist across restarts; None = RAM only."""
    settings: dict = field(default_factory=dict)
    """Runtime settings that shape the KV cells (n_ctx, n_batch, swa_full, adapter)."""
    model_path: Path | None = None
    """The GGUF whose hash keys the disk entries."""
    stats: HeadStats = field(default_factory=HeadStats)
    """Counters."""
    _index: dict[str, tuple[int, ...]] = field(default_factory=dict)
    _ram: collections.OrderedDict = field(default_factory=collections.OrderedDict)
    _model_hash: str | None = None

    @property
    def enabled(self) -> bool:
        return self.budget_bytes > 0

    # -- keys and disk -----------------------------------------------------------------------------
    def _model_sha(self) -> str:
        if self._model_hash is None:
            self._model_hash = model_sha256(self.model_path, self.directory) if self.model_path else "none"
        return self._model_hash

    def key_for(self, tokens: Sequence[int]) -> str:
        ident = json.dumps({"model": self._model_sha(), "settings": self.settings, "tokens": list(tokens)},
                           sort_keys=True)
        return hashlib.sha256(ident.encode()).hexdigest()[:32]

    def _path(self, key: str) -> Path | None:
        return self.directory / f"{key}{HEAD_SUFFIX}" if self.directory else None

    def _write(self, key: str, tokens: Sequence[int], data: bytes) -> None:
        path = self._path(key)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".partial")
            with tmp.open("wb") as fh:
                fh.write(json.dumps({"tokens": list(tokens)}).encode() + b"\n")
                fh.write(data)
            tmp.replace(path)
            self._prune()
        except OSError as err:  # a full or read-only disk costs the persistence, not the answer
            log.warning("could not store a cached head in %s: %s", path, err)

    def _prune(self) -> None:
        """Drop the least recently used files while the disk holds more than its budget."""
        entries = sorted(((p.stat().st_mtime, p.stat().st_size, p) for p in self.directory.glob(f"*{HEAD_SUFFIX}")),
                         key=lambda e: e[0])
        total = sum(size for _, size, _ in entries)
        for _, size, path in entries:
            if total <= self.budget_bytes * DISK_BUDGET_FACTOR:
                break
            path.unlink(missing_ok=True)
            total -= size

    def _read(self, key: str, tokens: Sequence[int]) -> bytes | None:
        path = self._path(key)
        if path is None or not path.exists():
            return None
        try:
            with path.open("rb") as fh:
                header = json.loads(fh.readline())
                data = fh.read()
        except (OSError, ValueError) as err:
            log.warning("unreadable cached head %s (%s); it will be rebuilt", path, err)
            return None
        if header.get("tokens") != list(tokens) or not data:
            return None
        self.stats.disk_loads += 1
        try:
            os.utime(path)  # recently used: the last to be pruned
        except OSError:
            pass
        return data

    def disk_bytes(self) -> int:
        if self.directory is None or not self.directory.is_dir():
            return 0
        return sum(p.stat().st_size for p in self.directory.glob(f"*{HEAD_SUFFIX}"))

    # -- RAM -------------------------------------------------------------------------------------
    def ram_bytes(self) -> int:
        return sum(len(d) for d in self._ram.values())

    def _keep(self, key: str, data: bytes) -> None:
        if len(data) > self.budget_bytes:
            return  # bigger than the whole budget: disk only
        self._ram[key] = data
        self._ram.move_to_end(key)
        while self.ram_bytes() > self.budget_bytes:
            self._ram.popitem(last=False)

    def has(self, tokens: Sequence[int]) -> str | None:
        """The key if the head is known (RAM, or disk: loaded into RAM now)."""
        key = self.key_for(tokens)
        if key in self._ram:
            self._index[key] = tuple(tokens)
            return key
        data = self._read(key, tokens)
        if data is None:
            return None
        self._index[key] = tuple(tokens)
        self._keep(key, data)
        return key

    def add(self, tokens: Sequence[int], data: bytes) -> None:
        key = self.key_for(tokens)
        self._index[key] = tuple(tokens)
        self._keep(key, data)
        self._write(key, tokens, data)

    def data(self, key: str) -> bytes | None:
        """A head's state from RAM or disk (refreshing its LRU place)."""
        data = self._ram.get(key)
        if data is not None:
            self._ram.move_to_end(key)
            return data
        data = self._read(key, self._index[key])
        if data is not None:
            self._keep(key, data)
        return data

    def best(self, tokens: Sequence[int]) -> tuple[str, int] | None:
        """The known head sharing the longest prefix with `tokens` (at least MIN_HEAD_TOKENS, and
        at most all but the last prompt token, which must be evaluated for its logits)."""
        best: tuple[str, int] | None = None
        limit = len(tokens) - 1
        for key, head in self._index.items():
            n = min(common_prefix(head, tokens), limit)
            if n >= MIN_HEAD_TOKENS and (best is None or n > best[1]):
                best = (key, n)
        return best

    def clear_ram(self) -> None:
        self._ram.clear()

    def report(self) -> dict:
        return {"enabled": self.enabled, "entries": len(self._index), "hits": self.stats.hits,
                "misses": self.stats.misses, "ram_bytes": self.ram_bytes(), "ram_budget_bytes": self.budget_bytes,
                "disk_bytes": self.disk_bytes(), "restores": self.stats.restores,
                "restore_ms": round(self.stats.restore_ms, 1), "warmed": self.stats.warmed,
                "warm_ms": round(self.stats.warm_ms, 1), "disk_loads": self.stats.disk_loads}


def model_sha256(path: Path, marker_dir: Path | None) -> str:
    """The model file's sha256, remembered by size+mtime in a marker so it is hashed once."""
    from edge_agent.llm.bundled import sha256_file

    st = path.stat()
    seen = {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    marker = marker_dir / MODEL_HASH_MARKER if marker_dir else None
    if marker is not None and marker.exists():
        try:
            known = json.loads(marker.read_text())
            if {k: known.get(k) for k in seen} == seen and known.get("sha256"):
                return known["sha256"]
        except (OSError, ValueError):
            pass
    digest = sha256_file(path)
    if marker is not None:
        try:
            marker.parent.mkdir(parents=True, exist_ok=True)
            tmp = marker.with_suffix(f".{os.getpid()}.partial")
            tmp.write_text(json.dumps({**seen, "sha256": digest}))
            tmp.replace(marker)
        except OSError as err:
            log.warning("could not write %s: %s", marker, err)
    return digest

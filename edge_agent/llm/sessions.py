"""Named sessions over one llama.cpp context: keep a paused session resumable cheaply.

L2's transcript is paused while L3 sessions use the context. Resuming it means either
re-prefilling its whole prompt or restoring a snapshot of its KV state taken when it paused.
On a Pi with a 3B model re-prefilling 700 tokens costs ~26 s and a snapshot well under one, so
an enabled keeper always snapshots a paused session. It never decides by measured times: a
choice that follows the clock would make two runs of the same questions compute their KV cells
in different batches, and greedy answers differ with them. It also remembers each session's
exact token trail (prompt + generated ids), so a resumed prompt that extends the trail's text
reuses those ids instead of a fresh tokenization that may split the generated text differently.
It keeps running estimates of prefill and decode seconds a token: the deadline checks read them.
"""
from __future__ import annotations

import collections
import ctypes
import time
from dataclasses import dataclass, field
from typing import Any

from edge_agent.modelfile.sizing import MAX_KEPT_SESSIONS  # the sizing counts them: one figure for both

EWMA_ALPHA = 0.3  # weight of the newest measurement in the running cost estimates


@dataclass(frozen=True)
class Snapshot:
    """A paused session's llama.cpp state (its KV cells) and the token ids it holds."""

    data: bytes
    """llama_state_get_data's bytes."""
    input_ids: list[int]
    """The evaluated token ids."""

    @property
    def n_tokens(self) -> int:
        return len(self.input_ids)


def take_snapshot(llm: Any) -> Snapshot:
    """llama.cpp's own state only. Llama.save_state() also copies llama-cpp-python's logits buffer
    (n_batch x n_vocab floats: 256 MiB for Gemma 3 at n_batch 256) which nothing here reads."""
    import llama_cpp

    ctx = llm._ctx.ctx
    size = llama_cpp.llama_state_get_size(ctx)
    buf = (ctypes.c_uint8 * size)()
    n = llama_cpp.llama_state_get_data(ctx, buf, size)
    return Snapshot(bytes(memoryview(buf)[:n]), list(llm._input_ids[: llm.n_tokens]))


def restore_snapshot(llm: Any, snap: Snapshot) -> None:
    import llama_cpp

    buf = (ctypes.c_uint8 * len(snap.data)).from_buffer_copy(snap.data)
    if llama_cpp.llama_state_set_data(llm._ctx.ctx, buf, len(snap.data)) != len(snap.data):
        raise RuntimeError("llama.cpp refused the saved session state")
    llm.input_ids[: snap.n_tokens] = snap.input_ids
    llm.n_tokens = snap.n_tokens


@dataclass
class Trail:
    """What one session's context holds: its text and the exact token ids for it."""

    text: str
    """Prompt plus generated text so far."""
    tokens: list[int]
    """Token ids of `text` as evaluated (with BOS)."""


@dataclass
class SessionStats:
    """Counters for benchmarks and status."""

    saves: int = 0
    """Snapshots taken."""
    loads: int = 0
    """Snapshots restored."""
    save_ms: float = 0.0
    """Total time taking snapshots."""
    load_ms: float = 0.0
    """Total time restoring snapshots."""


@dataclass
class SessionKeeper:
    """Snapshots paused sessions and restores them, holds their trails, and measures prefill and
    decode rates for the deadline checks. Read and changed only with the GenerationLock held
    (LlamaCppModel sees to it)."""

    enabled: bool = True
    """False: never snapshot (resumes always re-prefill, still reusing any common prefix)."""
    active: str | None = None
    """The session whose tokens are in the KV cache now (None = an anonymous one)."""
    stats: SessionStats = field(default_factory=SessionStats)
    """Counters."""
    _snapshots: collections.OrderedDict = field(default_factory=collections.OrderedDict)
    _trails: dict[str, Trail] = field(default_factory=dict)
    _prefill_ms_per_token: float | None = None
    _decode_ms_per_token: float | None = None

    # -- rates (for the deadline checks) -------------------------------------------------------
    def observe_prefill(self, tokens: int, ms: float) -> None:
        if tokens >= 16 and ms > 0:
            self._prefill_ms_per_token = _ewma(self._prefill_ms_per_token, ms / tokens)

    def observe_decode(self, tokens: int, ms: float) -> None:
        if tokens >= 4 and ms > 0:
            self._decode_ms_per_token = _ewma(self._decode_ms_per_token, ms / tokens)

    def rates_s(self) -> tuple[float, float]:
        """Measured (prefill, decode) seconds a token; 0 where nothing was measured yet."""
        return (self._prefill_ms_per_token or 0.0) / 1000, (self._decode_ms_per_token or 0.0) / 1000

    # -- trails --------------------------------------------------------------------------------
    def trail(self, session: str | None) -> Trail | None:
        """The session's trail, if it has one."""
        return self._trails.get(session) if session else None

    def record(self, session: str | None, text: str, tokens: list[int]) -> None:
        if session:
            self._trails[session] = Trail(text, list(tokens))

    # -- switching -----------------------------------------------------------------------------
    def switch(self, llm: Any, session: str | None) -> None:
        """Make `session` the active one, snapshotting the one it displaces (when enabled)."""
        if session == self.active:
            return
        leaving = self.active
        if self.enabled and leaving is not None:
            t0 = time.perf_counter()
            self._snapshots[leaving] = take_snapshot(llm)
            self._snapshots.move_to_end(leaving)
            while len(self._snapshots) > MAX_KEPT_SESSIONS:
                self._snapshots.popitem(last=False)
            self.stats.saves += 1
            self.stats.save_ms += (time.perf_counter() - t0) * 1000
        if self.enabled and session is not None and session in self._snapshots:
            snap = self._snapshots.pop(session)
            t0 = time.perf_counter()
            restore_snapshot(llm, snap)
            self.stats.loads += 1
            self.stats.load_ms += (time.perf_counter() - t0) * 1000
        self.active = session

    def forget(self, session: str) -> None:
        self._snapshots.pop(session, None)
        self._trails.pop(session, None)
        if self.active == session:
            self.active = None

    def clear(self) -> None:
        self._snapshots.clear()
        self._trails.clear()
        self.active = None


def _ewma(old: float | None, new: float) -> float:
    return new if old is None else (1 - EWMA_ALPHA) * old + EWMA_ALPHA * new

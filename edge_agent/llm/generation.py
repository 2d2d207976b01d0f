"""One generation inside the worker thread: when to stop, batch-wise evaluation, free-text decoding.

A generation stops early for two reasons: its awaiting task was cancelled (or the model is
closing), or its deadline comes. Both are checked before every decoded token and before every
prefill batch, and llama.cpp's abort callback stops a prefill batch in the middle, so the worker
thread returns within about one token's time and the GenerationLock is never released while
llama.cpp still runs.
"""
from __future__ import annotations

import ctypes
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

FREE_TEXT_PENALTY_LAST_N = 64  # tokens the repeat penalty looks back over (llama-cpp-python's default)
NEAR_DEADLINE_TOKENS = 3  # decode steps before the deadline from which each step is interruptible


class Stopped(Exception):
    """Raised in the worker thread when a generation must end now; reason: aborted | deadline."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


@dataclass
class Control:
    """What the worker thread checks between tokens and batches."""

    abort: threading.Event = field(default_factory=threading.Event)
    """Set by the awaiting task when it is cancelled, or by close()."""
    deadline: float | None = None
    """time.monotonic() instant the generation must end by; None = no limit."""
    prefill_s_per_token: float = 0.0
    """Measured prefill cost; 0 until measured (nothing is refused on a guess)."""
    decode_s_per_token: float = 0.0
    """Measured decode cost of one token."""

    def _late(self, seconds: float) -> bool:
        return self.deadline is not None and time.monotonic() + seconds > self.deadline

    def before_token(self) -> None:
        """Refuse a decode step that would end past the deadline."""
        if self.abort.is_set():
            raise Stopped("aborted")
        if self._late(self.decode_s_per_token):
            raise Stopped("deadline")

    def before_batch(self, n_tokens: int) -> None:
        """Refuse to start a prefill the measured rate says cannot finish in time."""
        if self.abort.is_set():
            raise Stopped("aborted")
        # a short batch (forced tokens) costs about a decode step, a long one n prefill steps
        if self._late(max(n_tokens * self.prefill_s_per_token, self.decode_s_per_token)):
            raise Stopped("deadline")

    def near_deadline(self) -> bool:
        """Within a few tokens of the deadline: llama.cpp should then poll must_abort() even for a
        single-token step, so the generation ends at the deadline rather than a token after it."""
        return self._late(NEAR_DEADLINE_TOKENS * self.decode_s_per_token)

    def must_abort(self) -> bool:
        """Polled by llama.cpp between graph nodes while a batch is evaluated."""
        return self.abort.is_set() or self._late(0.0)


class Evaluator:
    """Evaluates tokens on one llama.cpp context in n_batch batches, interruptible, keeping
    llama-cpp-python's input_ids / n_tokens in step with the KV cache. Used with the lock held."""

    def __init__(self, llm: Any):
        import llama_cpp

        self._lc = llama_cpp
        self.llm = llm
        self.control = Control()
        """The running generation's control (replaced for each one)."""
        # Kept referenced: llama.cpp holds only the raw pointer.
        self._abort_cb = llama_cpp.ggml_abort_callback(lambda _data: self.control.must_abort())
        self._no_cb = ctypes.cast(None, llama_cpp.ggml_abort_callback)

    def truncate(self, n: int) -> None:
        """Forget every position from n on (KV cells and ids)."""
        llm = self.llm
        llm._ctx.kv_cache_seq_rm(-1, n, -1)
        llm.n_tokens = min(llm.n_tokens, n)

    def eval(self, tokens: Sequence[int], *, all_logits: bool = False) -> None:
        """Evaluate `tokens` after what the context holds. all_logits: keep every position's logits
        (to verify forced tokens); otherwise only the last one's."""
        llm, lc = self.llm, self._lc
        self.truncate(llm.n_tokens)
        ctx = llm._ctx.ctx
        for i in range(0, len(tokens), llm.n_batch):
            batch = list(tokens[i: i + llm.n_batch])
            if len(batch) > 1:
                self.control.before_batch(len(batch))
            # The per-node callback costs a GIL round trip; single-token steps are checked between
            # tokens instead, and pay it only in the last few steps before a deadline.
            interruptible = len(batch) > 1 or self.control.near_deadline()
            if interruptible:
                lc.llama_set_abort_callback(ctx, self._abort_cb, None)
            n_past = llm.n_tokens
            llm._batch.set_batch(batch=batch, n_past=n_past, logits_all=all_logits)
            try:
                rc = lc.llama_decode(ctx, llm._batch.batch)
            finally:
                if interruptible:
                    lc.llama_set_abort_callback(ctx, self._no_cb, None)
            if rc != 0:
                self.truncate(n_past)  # an aborted batch may leave some of its cells behind
                if rc == 2:
                    raise Stopped("aborted" if self.control.abort.is_set() else "deadline")
                raise RuntimeError(f"llama_decode returned {rc}")
            llm.input_ids[n_past: n_past + len(batch)] = batch
            llm.n_tokens = n_past + len(batch)
            llm._requires_eval = False

    def logits(self, i: int = -1) -> Any:
        """The logits of batch position i of the last evaluation (a view valid until the next one)."""
        import numpy as np

        ptr = self._lc.llama_get_logits_ith(self.llm._ctx.ctx, i)
        return np.ctypeslib.as_array(ptr, shape=(self.llm.n_vocab(),))


@dataclass
class Progress:
    """What a generation has done so far (read when it stops early)."""

    cached: int = 0
    """Prompt tokens reused from the KV cache."""
    prefill_s: float = 0.0
    """Time spent evaluating the prompt."""
    decode_s: float = 0.0
    """Time spent decoding."""
    out: list[int] = field(default_factory=list)
    """Tokens generated."""
    forced: int = 0
    """Of `out`, tokens appended by jump-forward (evaluated in a batch, no decode step of their own)."""
    prefilled: int = 0
    """Prompt tokens evaluated (not cached)."""
    reference_count: int | None = None
    """Tokens generated by llama-cpp-python's own loop, which does not fill `out`."""

    @property
    def generated(self) -> int:
        return len(self.out) if self.reference_count is None else self.reference_count


def prefill(ev: Evaluator, tokens: Sequence[int], cached: int, progress: Progress, *,
            checkpoint: int = 0, on_checkpoint: Callable[[], None] | None = None) -> None:
    """Evaluate `tokens`, reusing the first `cached` positions already in the KV cache.

    With a checkpoint inside the evaluated part, the tokens before it and those after it are
    evaluated apart (a prompt's head is always computed on its own, so its cells are the same
    whether it was kept or not), and `on_checkpoint()`, if given, runs when the context holds
    exactly tokens[:checkpoint] (a new prompt head is kept there, on the way)."""
    t0 = time.perf_counter()
    if cached > 0:
        ev.truncate(cached)
    else:
        ev.llm.reset()
        ev.truncate(0)
    progress.cached = cached
    progress.prefilled = len(tokens) - cached
    try:
        ev.control.before_batch(len(tokens) - cached)  # the whole prefill must fit, not just a batch
        if cached < checkpoint < len(tokens):
            ev.eval(tokens[cached:checkpoint])
            if on_checkpoint is not None:
                on_checkpoint()
            ev.eval(tokens[checkpoint:])
        else:
            ev.eval(tokens[cached:])
    finally:
        progress.prefill_s += time.perf_counter() - t0


def decode_free_text(ev: Evaluator, max_tokens: int, stop: Sequence[str], repeat_penalty: float,
                     progress: Progress, steer: str | None = None) -> tuple[str, str]:
    """Greedy free text after the evaluated prompt: (text, finish reason). Same sampler chain as
    llama-cpp-python's create_completion at temperature 0 (penalties, then greedy).
    `steer`: decode this target text instead, a decode step a token (benchmarks)."""
    lc, llm = ev._lc, ev.llm
    vocab = llm._model.vocab
    chain = lc.llama_sampler_chain_init(lc.llama_sampler_chain_default_params())
    lc.llama_sampler_chain_add(chain, lc.llama_sampler_init_penalties(
        llm.n_vocab(), FREE_TEXT_PENALTY_LAST_N, repeat_penalty, 0.0, 0.0))
    lc.llama_sampler_chain_add(chain, lc.llama_sampler_init_greedy())
    pieces = b""
    finish = "length"
    t0 = time.perf_counter()
    try:
        while len(progress.out) < max_tokens:
            ev.control.before_token()
            if steer is not None:
                rest = steer.encode("utf-8")[len(pieces):]
                ids = llm.tokenize(rest, add_bos=False, special=False) if rest else []
                if not ids:
                    finish = "stop"
                    break
                token = ids[0]
            else:
                token = lc.llama_sampler_sample(chain, llm._ctx.ctx, -1)  # also accepts it into the chain
            if lc.llama_vocab_is_eog(vocab, token):
                finish = "stop"
                break
            progress.out.append(token)
            pieces += llm.detokenize([token])
            text = pieces.decode("utf-8", "ignore")
            cut = min((text.find(s) for s in stop if s and s in text), default=-1)
            if cut >= 0:
                return text[:cut], "stop"
            ev.eval([token])
    finally:
        lc.llama_sampler_free(chain)
        progress.decode_s += time.perf_counter() - t0
    return pieces.decode("utf-8", "replace"), finish

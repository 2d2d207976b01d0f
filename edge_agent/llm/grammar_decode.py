"""Greedy decoding under a grammar: argmax first, forced text in one batch.

llama-cpp-python's sampler chain runs the grammar over the whole vocabulary at every step
(262,144 tokens for Gemma 3), which is slow and leaves ~160 MB of allocator debris behind. For
greedy decoding the answer is the highest-logit token the grammar accepts, so we test the argmax
first and, only when it is rejected, the candidates in falling logit order, a chunk at a time.

Jump-forward (after SGLang's compressed FSM): where the grammar admits exactly one continuation
text (`"name":` after `{` in compact JSON), that text is tokenized and evaluated in one batch with
the logits of every position kept, and each drafted token is accepted only if it is what the
greedy step would have chosen there. The verified tokens cost a batch evaluation instead of a
decode step each. The choices are step-by-step greedy's, but llama.cpp's batched matmuls round
differently from single-token ones, so a near-tie between two tokens can go the other way
(seen on this project's x86 machines; tests compare the paths with jump-forward off).

Each grammar is parsed by llama.cpp once: the parsed sampler is kept and every generation
starts from a clone of it (cloning copies the parsed rules; it does not parse the text again).

Steering (benchmarks only): with a target text, each step takes the grammar-admitted token that
continues the target instead of the argmax, so a planned output is decoded through the real
grammar and its forced tokens are counted as the real grammar forces them.
"""
from __future__ import annotations

import ctypes
import math
import string
import time
from typing import Any

import numpy as np

from edge_agent.llm.generation import Evaluator, Progress

_TOKEN_DTYPE = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)], align=True)
FALLBACK_CHUNKS = (64, 4096)  # candidates tried in falling logit order before the whole vocabulary
MAX_JUMP_CHARS = 48  # forced text probed ahead at most (one key name and its punctuation)
# Characters probed to find a forced continuation: printable ASCII plus a few non-ASCII ones, so a
# grammar that also admits non-ASCII text there is not taken for forced.
_PROBE_CHARS = [c for c in string.printable if c not in "\x0b\x0c"] + ["é", "ü", "日", "🎉"]


class GrammarDecoder:
    """Reusable buffers for one llama.cpp context; decode() is called with the lock held."""

    def __init__(self, ev: Evaluator, jump_forward: bool = True):
        import llama_cpp

        self._lc = llama_cpp
        self._ev = ev
        llm = ev.llm
        self._vocab = llm._model.vocab
        self.n_vocab = llm.n_vocab()
        assert ctypes.sizeof(llama_cpp.llama_token_data) == _TOKEN_DTYPE.itemsize
        self.jump_forward = jump_forward
        """Append forced text in one verified batch (False: one decode step a token)."""
        self._cand = (llama_cpp.llama_token_data * max(FALLBACK_CHUNKS))()
        self._cand_np = np.frombuffer(self._cand, dtype=_TOKEN_DTYPE)
        self._cand_arr = llama_cpp.llama_token_data_array(
            data=ctypes.cast(self._cand, llama_cpp.llama_token_data_p), size=0, selected=-1, sorted=False)
        probe: dict[int, str] = {}
        for ch in _PROBE_CHARS:
            ids = llm.tokenize(ch.encode("utf-8"), add_bos=False, special=False)
            if len(ids) == 1:
                probe[ids[0]] = ch
        eogs = {t for t in (llama_cpp.llama_vocab_eos(self._vocab), llama_cpp.llama_vocab_eot(self._vocab)) if t >= 0}
        self._probe_ids = np.array(sorted(set(probe) | eogs), dtype=np.int32)
        self._probe_char = probe
        self.fallbacks = 0
        """Steps where the argmax was rejected and more candidates were filtered."""
        self._parsed: dict[tuple[str, str], Any] = {}
        self.parses = 0
        """Grammars parsed by llama.cpp (once each; generations start from clones)."""
        self._steer: _Steer | None = None

    def close(self) -> None:
        """Free the parsed grammars (the model is closing)."""
        for smpl in self._parsed.values():
            self._lc.llama_sampler_free(smpl)
        self._parsed.clear()

    def _fresh_sampler(self, gbnf: str, root: str) -> Any:
        """A grammar sampler in its start state, cloned from the one parse of `gbnf`."""
        key = (gbnf, root)
        base = self._parsed.get(key)
        if base is None:
            base = self._lc.llama_sampler_init_grammar(self._vocab, gbnf.encode("utf-8"), root.encode("utf-8"))
            if not base:
                raise ValueError("llama.cpp rejected the grammar")
            self.parses += 1
            self._parsed[key] = base
        return self._lc.llama_sampler_clone(base)

    # -- choosing one token ------------------------------------------------------------------------
    def _filter(self, smpl: Any, ids: np.ndarray, logits: np.ndarray) -> np.ndarray:
        """The grammar's verdict on candidates `ids`: their logits, -inf where rejected."""
        n = len(ids)
        view = self._cand_np[:n]
        view["id"], view["logit"], view["p"] = ids, logits, 0.0
        self._cand_arr.size, self._cand_arr.selected, self._cand_arr.sorted = n, -1, False
        self._lc.llama_sampler_apply(smpl, ctypes.byref(self._cand_arr))
        return self._cand_np["logit"][:n]

    def _accepts(self, smpl: Any, token: int, logits: np.ndarray) -> bool:
        return not math.isinf(self._filter(smpl, np.array([token], np.int32), logits[token:token + 1])[0])

    def _choose(self, smpl: Any, logits: np.ndarray) -> int | None:
        """The highest-logit token the grammar accepts (lowest id among equals), or None; when
        steering, the admitted token that continues the target."""
        if self._steer is not None:
            wanted = self._steer.next_token()
            if wanted is not None and self._accepts(smpl, wanted, logits):
                return wanted
        token = int(np.argmax(logits))
        if not math.isinf(self._filter(smpl, np.array([token], np.int32), logits[token:token + 1])[0]):
            return token
        self.fallbacks += 1
        done = 0
        order = None
        for size in (*FALLBACK_CHUNKS, self.n_vocab):
            if order is None or size > len(order):
                k = min(size, self.n_vocab)
                # every token whose logit ties the k-th one is included, so the order is exact
                kth = np.partition(logits, self.n_vocab - k)[self.n_vocab - k] if k < self.n_vocab else -np.inf
                top = np.flatnonzero(logits >= kth)
                order = top[np.lexsort((top, -logits[top]))].astype(np.int32)
            for start in range(done, len(order), max(FALLBACK_CHUNKS)):
                ids = order[start: start + max(FALLBACK_CHUNKS)]
                verdict = self._filter(smpl, ids, logits[ids])
                ok = np.flatnonzero(~np.isneginf(verdict))
                if len(ok):
                    return int(ids[ok[0]])
            done = len(order)
            if done >= self.n_vocab:
                break
        return None

    # -- jump-forward ------------------------------------------------------------------------------
    def _forced_text(self, smpl: Any) -> str:
        """The text the grammar admits as the only continuation from its current state."""
        clone = self._lc.llama_sampler_clone(smpl)
        text = ""
        try:
            while len(text) < MAX_JUMP_CHARS:
                ids = self._probe_ids
                verdict = self._filter(clone, ids, np.zeros(len(ids), np.float32))
                ok = ids[~np.isneginf(verdict)]
                if len(ok) != 1 or int(ok[0]) not in self._probe_char:
                    break
                text += self._probe_char[int(ok[0])]
                self._lc.llama_sampler_accept(clone, int(ok[0]))
        finally:
            self._lc.llama_sampler_free(clone)
        return text

    # -- the loop ----------------------------------------------------------------------------------
    def decode(self, gbnf: str, root: str, max_tokens: int, progress: Progress, steer: str | None = None) -> str:
        """Generate after the already-evaluated prompt into progress.out; returns the finish reason.
        `steer`: a target text to decode instead of the greedy choice (benchmarks)."""
        lc, ev = self._lc, self._ev
        smpl = self._fresh_sampler(gbnf, root)
        out = progress.out
        self._steer = _Steer(ev.llm, steer, out) if steer is not None else None
        t0 = time.perf_counter()
        logits = ev.logits(-1)
        try:
            while len(out) < max_tokens:
                ev.control.before_token()
                token = self._choose(smpl, logits)
                if token is None or lc.llama_vocab_is_eog(self._vocab, token):
                    return "stop"
                lc.llama_sampler_accept(smpl, token)
                out.append(token)
                draft = self._draft(smpl, max_tokens - len(out))
                ev.eval([token, *draft], all_logits=bool(draft))
                if not draft:
                    logits = ev.logits(-1)
                    continue
                logits = self._verify(smpl, draft, progress)
            return "length"
        finally:
            self._steer = None
            lc.llama_sampler_free(smpl)
            progress.decode_s += time.perf_counter() - t0

    def _draft(self, smpl: Any, room: int) -> list[int]:
        if not self.jump_forward or room <= 0:
            return []
        text = self._forced_text(smpl)
        if not text:
            return []
        return self._ev.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)[:room]

    def _verify(self, smpl: Any, draft: list[int], progress: Progress) -> np.ndarray:
        """Accept the drafted tokens the greedy step agrees with; drop the rest from the context.
        Returns the logits the next step chooses from."""
        lc, ev = self._lc, self._ev
        for j, tok in enumerate(draft):
            logits = ev.logits(j)  # after the batch's token j (the chosen token is position 0)
            agrees = self._steer.continues(tok) if self._steer is not None else self._choose(smpl, logits) == tok
            if not agrees:
                ev.truncate(ev.llm.n_tokens - (len(draft) - j))
                return np.array(logits)  # a copy: the next evaluation overwrites the buffer
            lc.llama_sampler_accept(smpl, tok)
            progress.out.append(tok)
            progress.forced += 1
        return ev.logits(len(draft))


class _Steer:
    """A target text being decoded: which token continues it after what was generated so far."""

    def __init__(self, llm: Any, target: str, out: list[int]):
        self._llm = llm
        self._target = target.encode("utf-8")
        self._out = out

    def _rest(self) -> bytes:
        done = self._llm.detokenize(self._out)
        return self._target[len(done):] if self._target.startswith(done) else b""

    def next_token(self) -> int | None:
        rest = self._rest()
        if not rest:
            return None
        ids = self._llm.tokenize(rest, add_bos=False, special=False)
        return ids[0] if ids else None

    def continues(self, token: int) -> bool:
        piece = self._llm.detokenize([token])
        return bool(piece) and self._rest().startswith(piece)

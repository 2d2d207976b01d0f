"""LlamaCppModel: the real runtime on llama-cpp-python — one context a process, FIFO-locked.

Blocking llama.cpp calls run on a worker thread so the event loop stays live (MQTT keepalives,
pills, watchdog pings). Every prompt is tokenized and counted before generation.
"""
from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import logging
import threading
import time
from pathlib import Path
from typing import Any, Sequence, TypeVar

import numpy as np
from pydantic import BaseModel, ValidationError

from edge_agent.llm.generation import Control, Evaluator, Progress, Stopped, decode_free_text, prefill
from edge_agent.llm.grammars import gbnf_for
from edge_agent.llm.loading import check_model_file, cpu_advertises_amx, model_params, usable_cores
from edge_agent.llm.grammar_decode import GrammarDecoder
from edge_agent.llm.heads import DEFAULT_HEAD_CACHE_MB, MIN_HEAD_TOKENS, HeadCache, common_prefix, seq_state, set_seq_state
from edge_agent.llm.base import (ChatMessage, Completion, GenerationTimeout, ModelError, ModelLoadError,  # noqa: F401
                                 Structured, StructuredOutputError, Usage)
from edge_agent.llm.lock import GenerationLock, finish_thread
from edge_agent.llm.sessions import SessionKeeper
from edge_agent.llm.templates import PLAIN_STOPS, render_plain, template_for_llama
from edge_agent.llm.window import check_window, fit_tokens
from edge_agent.modelfile.sizing import short_context

log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)

FREE_TEXT_REPEAT_PENALTY = 1.1  # small base models loop without it
N_UBATCH = 64  # tokens llama.cpp evaluates in one physical batch (measured: 376 vs 350 tok/s prefill at 256)


def native_context(metadata: dict[str, Any]) -> int | None:
    """`<architecture>.context_length` from GGUF metadata (llama-cpp-python gives strings)."""
    value = metadata.get(f"{metadata.get('general.architecture', '')}.context_length")
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _lookup_only_span(path: Path) -> tuple[int, int] | None:
    """The token embedding's span when the file has an output head of its own (then the embedding is
    only looked up, a row per prompt token). Any failure only costs the memory: logged, never raised."""
    from edge_agent.modelfile.gguf import lookup_only_span

    try:
        return lookup_only_span(path)
    except Exception as err:  # noqa: BLE001 - an optimisation: the model runs the same without it
        log.debug("the token embedding of %s stays resident: %s", path.name, err)
        return None


class LlamaCppModel:
    """A GGUF model in one llama.cpp context. Satisfies edge_agent.llm.base.Model."""

    def __init__(self, path: Path, *, n_ctx: int = 4096, n_threads: int | None = None,
                 n_batch: int = 256, keep_sessions: bool = True, window: int = 4096,
                 lock: GenerationLock | None = None, seed: int = 0, fast_grammar: bool = True,
                 extra_buffers: bool | None = None, head_cache_mb: float = DEFAULT_HEAD_CACHE_MB,
                 head_cache_dir: Path | str | None = None, lora_path: Path | str | None = None,
                 lora_sha256: str | None = None, vocab_only: bool = False, merged_adapter: str | None = None):
        from llama_cpp import Llama  # imported here so tests of other parts never load it

        from edge_agent.llm import native_log

        native_log.route_native_logs()  # llama.cpp's lines to Python logging (debug), before it says anything
        logged = native_log.mark()
        path = Path(path)
        check_model_file(path)
        self.path = path
        self.n_ctx = min(n_ctx, window)  # never above the configured window
        self.lock = lock or GenerationLock()
        # Unset, llama-cpp-python decodes on half the CPUs (it assumes two hardware threads a core):
        # one of this machine's two cores, two of a Pi 5's four. Every usable core, for both.
        threads = n_threads or usable_cores()
        # llama.cpp reserves its compute buffer for n_ubatch tokens all producing logits (64 x 262k
        # floats for Gemma); a smaller physical batch touches less of it and prefills as fast on CPU.
        kwargs: dict[str, Any] = dict(model_path=str(path), n_ctx=self.n_ctx, n_batch=min(n_batch, self.n_ctx),
                                      n_ubatch=min(n_batch, self.n_ctx, N_UBATCH), n_threads=threads,
                                      n_threads_batch=threads, seed=seed,
                                      verbose=False, logits_all=False)
        if lora_path:
            kwargs["lora_path"] = str(lora_path)
        self.vocab_only = vocab_only
        """Tokenizer and chat template only, no weights (sizing prompts in milliseconds); cannot generate."""
        if vocab_only:
            kwargs["vocab_only"] = True
        # Sliding-window models (Gemma 3) keep only the window's KV cells by default, which makes
        # reusing an earlier prefix silently wrong; a full-size SWA cache keeps reuse exact.
        # Extra (repacking) buffer types stay on except where they include the AMX path (see above).
        use_extra = (not cpu_advertises_amx()) if extra_buffers is None else extra_buffers
        from edge_agent.llm.residency import lookup_pages, mappings

        looked_up = None if vocab_only else _lookup_only_span(path)
        # another model's mapping of the same file, never advised by this one
        mapped_before = frozenset(m.start for m in mappings(path)) if looked_up else frozenset()
        try:
            with model_params(use_extra):
                try:
                    self._llm = Llama(**kwargs, swa_full=True)
                except TypeError:
                    self._llm = Llama(**kwargs)
        except Exception as err:  # llama-cpp-python says only "Failed to load model": llama.cpp's log says why
            reason = native_log.failure_reason(logged)
            raise ModelLoadError(f"llama.cpp could not load {path}: {err}" + (f" ({reason})" if reason else "")) from err
        self._lookup_pages = lookup_pages(path, *looked_up, before=mapped_before) if looked_up else []
        """The token embedding's pages when only its rows are read: dropped now and after every call
        (llm/residency.py), so only the rows being read stay resident; valid while the model is open."""
        self._drop_lookup_rows()
        meta = self._llm.metadata or {}
        self.architecture = meta.get("general.architecture", "?")
        """The GGUF's architecture as llama.cpp loaded it (gemma3, llama, qwen3 …)."""
        self.native_ctx = native_context(meta)
        """The context the model was trained for (GGUF `<arch>.context_length`; None if unstated)."""
        too_short = short_context(self.native_ctx, self.n_ctx)
        if too_short is not None:
            self._llm.close()
            raise ModelLoadError(f"{path.name} was {too_short}")
        self.adapter_sha256 = (lora_sha256 or "unknown") if lora_path else merged_adapter
        """The task adapter's sha256, run as a LoRA or merged into this file (None without one);
        part of the name traces record."""
        self.name = meta.get("general.name") or path.stem
        if self.adapter_sha256:
            self.name += f"+{'merged' if merged_adapter else 'adapter'}:{self.adapter_sha256[:12]}"
        self._template = None
        source = meta.get("tokenizer.chat_template")
        if source:
            try:
                self._template = template_for_llama(self._llm, source)
            except Exception as err:  # a broken template must not stop the model: fall back
                log.warning("chat template of %s unusable (%s); using the plain template", path.name, err)
        self.fast_grammar = fast_grammar
        """Check the grammar against the argmax first (grammar_decode.py); False = llama-cpp-python's chain."""
        self._ev: Evaluator | None = None
        self._decoder: GrammarDecoder | None = None
        self._grammars: dict[str, Any] = {}
        self._grammar_lock = threading.Lock()
        self._busy = threading.Lock()
        """Held by the worker thread for a whole generation: close() takes it to wait for one."""
        self._forgets: collections.deque[str] = collections.deque()
        self._kv_head = 0
        """How many leading tokens of the context are a head computed from position 0 on its own."""
        self.sessions = SessionKeeper(enabled=keep_sessions)
        """Snapshots and token trails of paused sessions (L2 while L3 runs)."""
        settings = {"n_ctx": self.n_ctx, "n_batch": kwargs["n_batch"], "swa_full": True,
                    "adapter": self.adapter_sha256}
        self.heads = HeadCache(max(0, int(head_cache_mb * 2**20)), Path(head_cache_dir) if head_cache_dir else None,
                               settings, path)
        """KV states of static prompt heads (warm_heads), restored where cheaper than prefill."""
        # llama-cpp-python sizes a logits array of n_batch x n_vocab floats (268 MB for Gemma 3)
        # that only logits_all or Llama.save_state fill; nothing here reads it, so it is dropped.
        self._llm.scores = np.empty((0, self._llm.n_vocab()), dtype=np.single)

    # -- tokens --------------------------------------------------------------------------------
    def tokenize(self, text: str, add_bos: bool = False) -> list[int]:
        return self._llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenize(text))

    @property
    def eos_id(self) -> int:
        """The end-of-sequence token (a training target's last token)."""
        return int(self._llm.token_eos())

    def fit_to_tokens(self, text: str, n: int) -> str:
        tokens = self.tokenize(text)
        if len(tokens) <= n:
            return text
        return fit_tokens(tokens, n, lambda t: self._llm.detokenize(list(t)).decode("utf-8", "ignore"),
                          self.count_tokens)

    @property
    def has_chat_template(self) -> bool:
        return self._template is not None

    @property
    def n_vocab(self) -> int:
        """Tokens in the model's vocabulary."""
        return int(self._llm.n_vocab())

    @property
    def template_family(self) -> str:
        """ChatML, Llama 3, Gemma … of the GGUF's own template (templates.TEMPLATE_FAMILIES); "plain" without."""
        return self._template.traits.family if self._template is not None else "plain"

    def render_chat(self, messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
        if self._template is not None:
            return self._template.render(messages, add_generation_prompt)
        return render_plain(messages, add_generation_prompt)

    def stop_sequences(self) -> tuple[str, ...]:
        return self._template.stops if self._template is not None else PLAIN_STOPS

    # -- grammars ------------------------------------------------------------------------------
    def grammar_for(self, schema: type[BaseModel]) -> Any:
        """The compiled grammar for a pydantic model, built once and cached."""
        from llama_cpp import LlamaGrammar

        json_schema = schema.model_json_schema()
        key = json.dumps(json_schema, sort_keys=True)  # the cache key only: field order matters below
        with self._grammar_lock:
            grammar = self._grammars.get(key)
            if grammar is None:
                grammar = LlamaGrammar.from_string(gbnf_for(json_schema), verbose=False)
                self._grammars[key] = grammar
        return grammar

    # -- generation ----------------------------------------------------------------------------
    def forget_session(self, session: str) -> None:
        """Drop a finished session's snapshot and trail: now if no generation runs, else queued and
        applied by the next one (the keeper is only touched with the lock held)."""
        self._forgets.append(session)
        if not self.lock.held:  # the loop thread may touch the keeper: no worker thread can run
            self._apply_forgets()

    def _apply_forgets(self) -> None:
        while self._forgets:
            self.sessions.forget(self._forgets.popleft())

    def _evaluator(self) -> Evaluator:
        if self._ev is None:
            self._ev = Evaluator(self._llm)
        return self._ev

    def _head_length(self, head: str | None, tokens: list[int]) -> int:
        """Where the prompt's static head ends in `tokens` (0: no head worth keeping). Read
        under the lock."""
        if not head:
            return 0
        n = common_prefix(self.tokenize(head, add_bos=True), tokens)
        return n if MIN_HEAD_TOKENS <= n < len(tokens) else 0

    def _reuse(self, tokens: list[int], session: str | None, head_len: int) -> int:
        """How many leading prompt tokens the context may keep: canonical KV, whatever ran before.

        A token's KV cells depend (in the last bits) on the batch it was evaluated in, and a greedy
        answer can turn on those bits. So a prompt reuses only what was computed the same way it
        would compute it itself: its session's own trail (L2 resuming after L3), or its static head,
        evaluated from position 0 on its own (in the context already, or restored from the head
        cache). Never an arbitrary common prefix with the last prompt: cold and warm, the same
        prompt then gets the same cells, and the same answer."""
        llm = self._llm
        in_kv = common_prefix(llm._input_ids[: llm.n_tokens], tokens[:-1])
        trail = self.sessions.trail(session)
        if trail is not None and in_kv > head_len and tokens[: len(trail.tokens)] == trail.tokens:
            return min(in_kv, len(trail.tokens))
        if head_len == 0:
            return 0
        if self._kv_head == head_len and in_kv >= head_len:
            return head_len
        key = self.heads.has(tokens[:head_len]) if self.heads.enabled else None
        data = self.heads.data(key) if key is not None else None
        if data is None:
            if self.heads.enabled:
                self.heads.stats.misses += 1
            return 0
        t0 = time.perf_counter()
        set_seq_state(llm, data, tokens[:head_len])
        self._evaluator().truncate(head_len)
        self.heads.stats.hits += 1
        self.heads.stats.restores += 1
        self.heads.stats.restore_ms += (time.perf_counter() - t0) * 1000
        return head_len

    def _complete_blocking(self, tokens: list[int], max_tokens: int, stop: Sequence[str], grammar: Any,
                           session: str | None, prompt: str, ctl: Control, head_len: int = 0,
                           steer: str | None = None) -> tuple[str, str, Usage]:
        with self._busy:  # close() waits for this
            if self._llm is None:
                raise ModelError("the model is closed")
            ev = self._evaluator()
            ev.control = ctl
            progress = Progress()
            try:
                return self._generate_in_thread(ev, tokens, max_tokens, stop, grammar, session, prompt, progress,
                                                head_len, steer)
            except Stopped as stopped:
                partial = self._llm.detokenize(progress.out).decode("utf-8", "replace")
                usage = _usage(tokens, progress)
                if stopped.reason == "deadline":
                    raise GenerationTimeout(partial, usage) from None
                raise ModelError("generation aborted") from None
            finally:
                ev.control = Control()
                self._observe(progress)
                self._drop_lookup_rows()

    def _generate_in_thread(self, ev: Evaluator, tokens: list[int], max_tokens: int, stop: Sequence[str],
                            grammar: Any, session: str | None, prompt: str, progress: Progress,
                            head_len: int = 0, steer: str | None = None) -> tuple[str, str, Usage]:
        llm = self._llm
        self.sessions.switch(llm, session)
        cached = self._reuse(tokens, session, head_len)
        ev.control.prefill_s_per_token, ev.control.decode_s_per_token = self.sessions.rates_s()
        keep = (lambda: self._keep_head(tokens[:head_len])) if self.heads.enabled and head_len > cached else None
        self._kv_head = 0  # set again once the head is in the context, exactly as computed here
        prefill(ev, tokens, cached, progress, checkpoint=head_len, on_checkpoint=keep)
        self._kv_head = head_len
        if grammar is not None and self.fast_grammar:
            if self._decoder is None:
                self._decoder = GrammarDecoder(ev)
            finish = self._decoder.decode(grammar._grammar, grammar._root, max_tokens, progress, steer)
            out_tokens = progress.out
            # Callers strip JSON's trailing whitespace when they put the output back into a
            # transcript, so the trail must end without it to stay a prefix.
            while out_tokens and not llm.detokenize(out_tokens[-1:]).strip():
                out_tokens.pop()
            text = llm.detokenize(out_tokens).decode("utf-8", "replace")
            self.sessions.record(session, prompt + text, tokens + out_tokens)
        elif grammar is not None:  # llama-cpp-python's own sampler chain: the reference path in tests
            t0 = time.perf_counter()
            out = llm.create_completion(tokens, max_tokens=max_tokens, temperature=0.0, top_k=1,
                                        repeat_penalty=1.0, grammar=grammar)
            progress.decode_s += time.perf_counter() - t0
            text, finish = out["choices"][0]["text"], out["choices"][0].get("finish_reason") or "stop"
            progress.reference_count = out["usage"]["completion_tokens"]
            self.sessions.record(session, prompt, tokens)
        else:
            text, finish = decode_free_text(ev, max_tokens, stop, FREE_TEXT_REPEAT_PENALTY, progress, steer)
            self.sessions.record(session, prompt, tokens)
        return text, finish, _usage(tokens, progress)

    def _drop_lookup_rows(self) -> None:
        """Drop the embedding rows this call faulted in (only while the model's mapping lives)."""
        if self._lookup_pages and self._llm is not None:
            from edge_agent.llm.residency import drop

            dropped = drop(self._lookup_pages)
            log.debug("dropped %.1f MB of %s's token embedding pages", dropped / 1e6, self.path.name)

    def _keep_head(self, head_tokens: list[int]) -> None:
        """A head met for the first time (a new day's date context, a skill added): keep its state."""
        if self.heads.has(head_tokens):
            return
        t0 = time.perf_counter()
        self.heads.add(head_tokens, seq_state(self._llm))
        self.heads.stats.warmed += 1
        self.heads.stats.warm_ms += (time.perf_counter() - t0) * 1000

    def _observe(self, progress: Progress) -> None:
        self.sessions.observe_prefill(progress.prefilled, progress.prefill_s * 1000)
        self.sessions.observe_decode(progress.generated - progress.forced, progress.decode_s * 1000)

    def _prompt_tokens(self, prompt: str, session: str | None) -> list[int]:
        trail = self.sessions.trail(session)
        if trail is not None and prompt.startswith(trail.text):
            # Reuse the exact ids the session evaluated (its generated tokens included): a fresh
            # tokenization of generated text can split it differently and defeat the KV prefix.
            return trail.tokens + self.tokenize(prompt[len(trail.text):])
        return self.tokenize(prompt, add_bos=True)

    async def _complete(self, prompt: str, max_tokens: int, stop: Sequence[str], grammar: Any,
                        role: str, session: str | None, deadline: float | None, head: str | None = None,
                        steer: str | None = None) -> tuple[str, str, Usage]:
        async with self.lock.hold() as wait_ms:
            if self._llm is None or self.vocab_only:
                raise ModelError("the model is closed" if self._llm is None else "a vocab-only model cannot generate")
            self._apply_forgets()
            tokens = self._prompt_tokens(prompt, session)  # reads the keeper: under the lock
            check_window(len(tokens), max_tokens, self.n_ctx, role)
            head_len = self._head_length(head, tokens)
            ctl = Control(deadline=deadline)
            fut = asyncio.get_running_loop().run_in_executor(
                None, self._complete_blocking, tokens, max_tokens, stop, grammar, session, prompt, ctl, head_len,
                steer)
            try:
                text, finish, usage = await finish_thread(fut, ctl.abort.set)
            except GenerationTimeout as err:
                err.usage = dataclasses.replace(err.usage, wait_ms=wait_ms)
                raise
            except ModelError:
                raise
            except Exception as err:
                raise ModelError(f"generation failed ({role or 'unnamed'}): {err}") from err
            finally:
                self._apply_forgets()  # those queued while the thread ran; the lock is still ours
        return text, finish, dataclasses.replace(usage, wait_ms=wait_ms)

    async def generate(self, prompt: str, *, max_tokens: int, stop: Sequence[str] = (), role: str = "",
                       session: str | None = None, deadline: float | None = None, head: str | None = None,
                       steer: str | None = None) -> Completion:
        """See Model.generate. `steer` (benchmarks only, not part of the Model protocol): decode this
        target text instead of the greedy choice, so a planned route costs what it really costs."""
        stops = tuple(stop) + self.stop_sequences()
        text, finish, usage = await self._complete(prompt, max_tokens, stops, None, role, session, deadline, head, steer)
        return Completion(text.strip(), usage, finish)

    async def generate_structured(self, prompt: str, schema: type[T], *, max_tokens: int, role: str = "",
                                  session: str | None = None, deadline: float | None = None, head: str | None = None,
                                  steer: str | None = None) -> Structured[T]:
        """See Model.generate_structured; `steer` as for generate, decoded through the real grammar."""
        grammar = self.grammar_for(schema)
        raw, finish, usage = await self._complete(prompt, max_tokens, (), grammar, role, session, deadline, head,
                                                  steer)
        try:
            value = schema.model_validate_json(raw)
        except ValidationError as err:
            # The grammar admits only schema-shaped JSON; what can still fail is a cut-off output
            # (max_tokens reached) or a constraint the grammar cannot express.
            raise StructuredOutputError(raw, finish, str(err), usage) from err
        return Structured(value, raw, usage)

    # -- cached heads ------------------------------------------------------------------------------
    async def warm_heads(self, heads: Sequence[str]) -> None:
        if not self.heads.enabled:
            return
        for text in heads:
            async with self.lock.hold():
                if self._llm is None:
                    raise ModelError("the model is closed")
                self._apply_forgets()
                ctl = Control()
                fut = asyncio.get_running_loop().run_in_executor(None, self._warm_blocking, text, ctl)
                await finish_thread(fut, ctl.abort.set)

    def _warm_blocking(self, text: str, ctl: Control) -> None:
        with self._busy:
            if self._llm is None:
                raise ModelError("the model is closed")
            tokens = self.tokenize(text, add_bos=True)
            if len(tokens) < MIN_HEAD_TOKENS or self.heads.has(tokens):
                return
            check_window(len(tokens), 1, self.n_ctx, "head")
            ev = self._evaluator()
            ev.control = ctl
            t0 = time.perf_counter()
            try:
                self.sessions.switch(self._llm, None)  # a paused session is saved as on any switch
                prefill(ev, tokens, 0, Progress())  # from position 0, as a prompt computes its head (_reuse)
                self._kv_head = len(tokens)
                self.heads.add(tokens, seq_state(self._llm))
            finally:
                ev.control = Control()
            self.heads.stats.warmed += 1
            self.heads.stats.warm_ms += (time.perf_counter() - t0) * 1000

    def head_cache_stats(self) -> dict:
        return self.heads.report()

    def close(self) -> None:
        """Stop a running generation, wait until its thread returned, then free the model."""
        ev = self._ev
        if ev is not None:
            ev.control.abort.set()
        with self._busy:
            self.sessions.clear()
            self.heads.clear_ram()
            self._lookup_pages = []  # unmapped with the model: never advised again
            llm, self._llm = self._llm, None
            if self._decoder is not None:
                self._decoder.close()
            self._ev, self._decoder = None, None
            if llm is not None:
                llm.close()


def _usage(tokens: list[int], progress: Progress) -> Usage:
    return Usage(prompt_tokens=len(tokens), cached_tokens=progress.cached, generated_tokens=progress.generated,
                 prefill_ms=progress.prefill_s * 1000, decode_ms=progress.decode_s * 1000,
                 forced_tokens=progress.forced)

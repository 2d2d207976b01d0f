"""Test doubles that satisfy the Model protocol: ScriptedModel and FunctionModel.

They go through the same GenerationLock and window accounting as the real runtime, so harness
tests exercise the real bookkeeping; only the text comes from a script or a function.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, TypeVar

from pydantic import BaseModel

from edge_agent.llm.base import (ChatMessage, Completion, ContextOverflow, GenerationTimeout, ModelError, Structured,
                                 Usage)
from edge_agent.llm.lock import GenerationLock
from edge_agent.llm.templates import render_plain

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class CallInfo:
    """What a double is told about one generation request."""

    prompt: str
    """The exact prompt string."""
    role: str
    """The role tag the caller gave (planner, l2, l3.<tool>.<n>, choose, reply)."""
    schema: type[BaseModel] | None
    """The pydantic model for structured calls, else None."""
    max_tokens: int
    """Reserved output tokens."""
    session: str | None = None
    """The session key the caller gave."""
    deadline: float | None = None
    """The time.monotonic() instant the caller gave as the generation's deadline."""
    head: str | None = None
    """The static start of the prompt the caller named (see Model.generate)."""


@dataclass
class _Base:
    name: str = "double"
    n_ctx: int = 4096
    delay_s: float = 0.0
    lock: GenerationLock = field(default_factory=GenerationLock)
    calls: list[CallInfo] = field(default_factory=list)
    heads: list[str] = field(default_factory=list)
    """Head texts given to warm_heads, in order (a double keeps no KV state)."""

    async def warm_heads(self, heads: Sequence[str]) -> None:
        async with self.lock.hold():
            self.heads.extend(h for h in heads if h not in self.heads)

    def head_cache_stats(self) -> dict:
        hits = sum(1 for c in self.calls if any(c.prompt.startswith(h) for h in self.heads))
        return {"enabled": bool(self.heads), "entries": len(self.heads), "hits": hits,
                "misses": len(self.calls) - hits, "ram_bytes": 0, "ram_budget_bytes": 0, "disk_bytes": 0}

    def count_tokens(self, text: str) -> int:
        # A stable stand-in for a tokenizer: about one token per 4 bytes, at least one per word.
        return max(len(text.split()), (len(text.encode()) + 3) // 4)

    def fit_to_tokens(self, text: str, n: int) -> str:
        if self.count_tokens(text) <= n:
            return text
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.count_tokens(text[:mid]) <= n:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]

    def render_chat(self, messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
        return render_plain(messages, add_generation_prompt)

    def _respond(self, info: CallInfo) -> Any:  # overridden
        raise ModelError("no response configured")

    async def _run(self, info: CallInfo) -> tuple[Any, Usage]:
        n_prompt = self.count_tokens(info.prompt)
        if n_prompt + info.max_tokens > self.n_ctx:
            raise ContextOverflow(n_prompt, info.max_tokens, self.n_ctx, info.role)
        async with self.lock.hold() as wait_ms:
            self.calls.append(info)
            delay = self.delay_s
            if info.deadline is not None:
                delay = min(delay, max(0.0, info.deadline - time.monotonic()))
            if delay:
                await asyncio.sleep(delay)
            if info.deadline is not None and time.monotonic() >= info.deadline:
                # as the real runtime does: stop at the deadline, report what was spent
                raise GenerationTimeout("", Usage(prompt_tokens=n_prompt, wait_ms=wait_ms), info.role)
            out = self._respond(info)
        return out, Usage(prompt_tokens=n_prompt, wait_ms=wait_ms)

    async def generate(self, prompt: str, *, max_tokens: int, stop: Sequence[str] = (), role: str = "",
                       session: str | None = None, deadline: float | None = None,
                       head: str | None = None) -> Completion:
        out, usage = await self._run(CallInfo(prompt, role, None, max_tokens, session, deadline, head))
        text = out if isinstance(out, str) else json.dumps(out)
        text = self.fit_to_tokens(text, max_tokens)
        return Completion(text, _with_gen(usage, self.count_tokens(text)))

    async def generate_structured(self, prompt: str, schema: type[T], *, max_tokens: int, role: str = "",
                                  session: str | None = None, deadline: float | None = None,
                                  head: str | None = None) -> Structured[T]:
        out, usage = await self._run(CallInfo(prompt, role, schema, max_tokens, session, deadline, head))
        if isinstance(out, BaseModel):
            raw = out.model_dump_json()
        elif isinstance(out, str):
            raw = out
        else:
            raw = json.dumps(out)
        # A real grammar makes malformed output impossible; a bad script is a test bug: raise.
        value = schema.model_validate_json(raw)
        return Structured(value, raw, _with_gen(usage, self.count_tokens(raw)))


def _with_gen(usage: Usage, n: int) -> Usage:
    return dataclasses.replace(usage, generated_tokens=n)


@dataclass
class ScriptedModel(_Base):
    """Returns the scripted responses in order: str, dict/list (JSON) or a pydantic value."""

    script: list[Any] = field(default_factory=list)
    name: str = "scripted"

    def _respond(self, info: CallInfo) -> Any:
        if not self.script:
            raise ModelError(f"ScriptedModel: script exhausted at call {len(self.calls)} (role {info.role!r})")
        return self.script.pop(0)


@dataclass
class FunctionModel(_Base):
    """Calls fn(info) -> str | dict | BaseModel for every generation (after pydantic-ai)."""

    fn: Callable[[CallInfo], Any] | None = None
    name: str = "function"

    def _respond(self, info: CallInfo) -> Any:
        if self.fn is None:
            raise ModelError("FunctionModel without fn")
        return self.fn(info)

"""Test doubles that satisfy the Model protocol: ScriptedModel and FunctionModel.

They go through the same GenerationLock and window accounting as the real runtime, so harness
tests exercise the real bookkeeping; only the text comes from a script or a function.
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, TypeVar

from pydantic import BaseModel

from edge_agent.llm.base import ChatMessage, Completion, ContextOverflow, ModelError, Structured, Usage
from edge_agent.llm.lock import GenerationLock
from edge_agent.llm.templates import render_plain

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class CallInfo:
    """What a double is told about one generation request."""

    prompt: str
    """The exact prompt string."""
    role: str
    """The role tag the caller gave (planner, l2, l3.<tool>.<n>, synth)."""
    schema: type[BaseModel] | None
    """The pydantic model for structured calls, else None."""
    max_tokens: int
    """Reserved output tokens."""
    session: str | None = None
    """The session key the caller gave."""


@dataclass
class _Base:
    name: str = "double"
    n_ctx: int = 4096
    delay_s: float = 0.0
    lock: GenerationLock = field(default_factory=GenerationLock)
    calls: list[CallInfo] = field(default_factory=list)

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
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            out = self._respond(info)
        return out, Usage(prompt_tokens=n_prompt, wait_ms=wait_ms)

    async def generate(self, prompt: str, *, max_tokens: int, stop: Sequence[str] = (), role: str = "",
                       session: str | None = None) -> Completion:
        out, usage = await self._run(CallInfo(prompt, role, None, max_tokens, session))
        text = out if isinstance(out, str) else json.dumps(out)
        text = self.fit_to_tokens(text, max_tokens)
        return Completion(text, _with_gen(usage, self.count_tokens(text)))

    async def generate_structured(self, prompt: str, schema: type[T], *, max_tokens: int, role: str = "",
                                  session: str | None = None) -> Structured[T]:
        out, usage = await self._run(CallInfo(prompt, role, schema, max_tokens, session))
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
    return Usage(usage.prompt_tokens, usage.cached_tokens, n, usage.prefill_ms, usage.decode_ms, usage.wait_ms)


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

"""The Model protocol the harness talks to, and the small value types it returns."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Protocol, Sequence, TypeVar, runtime_checkable

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)


class ModelError(RuntimeError):
    """Infrastructure failure of the model runtime (not the model misbehaving)."""


class ModelLoadError(ModelError):
    """The model file is missing, unreadable or not a usable GGUF."""


class ContextOverflow(ModelError):
    """A prompt plus its reserved output would not fit in the context window."""

    def __init__(self, prompt_tokens: int, max_new_tokens: int, n_ctx: int, role: str = ""):
        self.prompt_tokens = prompt_tokens
        self.max_new_tokens = max_new_tokens
        self.n_ctx = n_ctx
        self.role = role
        where = f" ({role})" if role else ""
        super().__init__(
            f"context overflow{where}: prompt {prompt_tokens} tokens + {max_new_tokens} reserved "
            f"for output = {prompt_tokens + max_new_tokens} > window {n_ctx}"
        )


class StructuredOutputError(ModelError):
    """The constrained output did not validate (usually cut off at max_tokens)."""

    def __init__(self, raw: str, finish_reason: str, detail: str, usage: "Usage | None" = None):
        self.raw = raw
        self.finish_reason = finish_reason
        self.usage = usage
        """What the failed generation cost (it ran; its output did not validate)."""
        super().__init__(f"structured output invalid (finish={finish_reason}): {detail[:200]}; raw={raw[:200]!r}")


class GenerationTimeout(ModelError):
    """The caller's deadline came before the generation finished; it was stopped within a token."""

    def __init__(self, raw: str, usage: "Usage", detail: str = ""):
        self.raw = raw
        """The text produced before the deadline (possibly empty)."""
        self.usage = usage
        """What the stopped generation cost so far."""
        super().__init__(f"generation stopped at its deadline{': ' + detail if detail else ''} "
                         f"({usage.prefilled_tokens} tokens prefilled, {usage.generated_tokens} decoded)")


@dataclass(frozen=True)
class ChatMessage:
    """One turn of a conversation, before the chat template renders it."""

    role: str
    """system | user | assistant | tool"""
    content: str
    """The text of the turn."""
    name: str | None = None
    """For role=tool: the tool that produced this result."""


@dataclass(frozen=True)
class Usage:
    """What one generation cost."""

    prompt_tokens: int = 0
    """Tokens in the prompt."""
    cached_tokens: int = 0
    """Prompt tokens reused from the KV cache (not prefilled again)."""
    generated_tokens: int = 0
    """Tokens decoded."""
    prefill_ms: float = 0.0
    """Time to evaluate the prompt tokens that were not cached."""
    decode_ms: float = 0.0
    """Time to decode the generated tokens."""
    wait_ms: float = 0.0
    """Time spent waiting for the GenerationLock."""
    forced_tokens: int = 0
    """Of generated_tokens, those the grammar forced: appended in one batch with no decode step
    of their own (jump-forward decoding); they cost prefill time, not decode time."""

    @property
    def prefilled_tokens(self) -> int:
        """Prompt tokens that had to be evaluated."""
        return self.prompt_tokens - self.cached_tokens

    @property
    def ms(self) -> float:
        """Model time, excluding the lock wait."""
        return self.prefill_ms + self.decode_ms

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(*(getattr(self, f) + getattr(other, f) for f in _USAGE_FIELDS))


_USAGE_FIELDS = ("prompt_tokens", "cached_tokens", "generated_tokens", "prefill_ms", "decode_ms", "wait_ms",
                 "forced_tokens")


@dataclass(frozen=True)
class Completion:
    """Free text generated for a prompt."""

    text: str
    """The generated text (stop sequence removed)."""
    usage: Usage = field(default_factory=Usage)
    """What it cost."""
    finish_reason: str = "stop"
    """stop | length"""


@dataclass(frozen=True)
class Structured(Generic[T]):
    """A value generated under a grammar and validated by its pydantic model."""

    value: T
    """The validated value."""
    raw: str
    """The exact text the model produced."""
    usage: Usage = field(default_factory=Usage)
    """What it cost."""


@runtime_checkable
class Model(Protocol):
    """What the harness needs from a language model. Every generation passes the FIFO lock."""

    name: str
    n_ctx: int

    def count_tokens(self, text: str) -> int:
        """Tokens `text` takes with this model's tokenizer (no BOS)."""

    def fit_to_tokens(self, text: str, n: int) -> str:
        """`text` trimmed to at most `n` tokens."""

    def render_chat(self, messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
        """The prompt string for `messages` under this model's chat template."""

    async def generate(
        self, prompt: str, *, max_tokens: int, stop: Sequence[str] = (), role: str = "",
        session: str | None = None, deadline: float | None = None, head: str | None = None,
    ) -> Completion:
        """Free text for `prompt`; raises ContextOverflow if it cannot fit.

        `deadline` is a time.monotonic() instant: checked before each prefill batch and each decoded
        token; past it the generation stops and GenerationTimeout carries the partial usage.
        `head` is the static start of `prompt` (the same for every question): a runtime with a head
        cache keeps its KV state the first time it meets it, so later prompts prefill only the rest."""

    async def generate_structured(
        self, prompt: str, schema: type[T], *, max_tokens: int, role: str = "",
        session: str | None = None, deadline: float | None = None, head: str | None = None,
    ) -> Structured[T]:
        """A value of `schema`, decoded greedily under its JSON-schema grammar (same `deadline`, `head`)."""

    async def warm_heads(self, heads: Sequence[str]) -> None:
        """Evaluate each static prompt head (tokenized with BOS, as a prompt is) under the lock and
        keep its KV state, so a later prompt that starts with it prefills only its tail."""

    def head_cache_stats(self) -> dict:
        """{"enabled", "entries", "hits", "misses", "ram_bytes", "ram_budget_bytes", "disk_bytes"}."""

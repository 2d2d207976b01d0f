"""TurnContext: one question's state — guards, budgets, side channels, limits and model calls.

Every generation of every role goes through `TurnContext.structured` / `.text`, so the bounds
(wall-clock deadline, generated-token budget) are checked before each one, the prompt is recorded
exactly as rendered, and usage lands in one place.
"""
from __future__ import annotations

import asyncio
import collections
import inspect
import logging
import time
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Callable, Sequence, TypeVar

from pydantic import BaseModel

from edge_agent.config import HarnessSettings
from edge_agent.harness import prompts
from edge_agent.harness.channels import SideChannels
from edge_agent.harness.outcome import PillSink
from edge_agent.harness.trace import Tracer
from edge_agent.llm.base import ChatMessage, GenerationTimeout, Model, StructuredOutputError, Usage

log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)

MAX_CALLS_PER_TOOL = 3  # real L3 dispatches of one tool in one turn (attempt); the 4th halts L2


class ToolLoopHalt(Exception):
    """Raised by dispatch when a tool's budget is spent: ends L2's turn at once. Not an error."""

    def __init__(self, tool: str, calls: int):
        self.tool = tool
        self.calls = calls
        super().__init__(f"{tool} already ran {calls} times this turn")


class ConfirmationRequired(Exception):
    """Raised by dispatch for a tool with an effect: the loop exits with an exact preview."""

    def __init__(self, tool: str, args: dict[str, Any], preview: str):
        super().__init__(preview)
        self.tool = tool
        self.arguments = args  # not `args`: Exception.args is the message tuple
        self.preview = preview


class LimitReached(Exception):
    """A bound of the question ran out; kind is the exit kind (timeout or step_limit)."""

    def __init__(self, kind: str, reason: str):
        self.kind = kind
        self.reason = reason
        super().__init__(reason)


class ModelCallFailed(Exception):
    """A generation could not be made (window overflow, runtime failure); carries the role."""

    def __init__(self, role: str, err: Exception):
        self.role = role
        self.cause = err
        super().__init__(f"{role}: {err}")


def model_misbehaved(err: Exception) -> bool:
    """A cut-off or invalid structured output: the model's fault (fed back), not infrastructure (raised)."""
    from pydantic import ValidationError

    return isinstance(err, (StructuredOutputError, ValidationError))


@dataclass(frozen=True)
class CalendarRead:
    """One read of the calendar the plan made, and the days it covered."""

    first: date
    """First day read."""
    last: date
    """Last day read (inclusive)."""
    phrase: str
    """The asker's date phrase the range answers ("next week"); "" when they named no day."""
    events: list[dict[str, Any]]
    """The events found (by name, when no day was named)."""


@dataclass(frozen=True)
class Limits:
    """The bounds of one question (from settings.harness)."""

    max_l2_steps: int
    """L2 steps an attempt may take."""
    deadline_s: float
    """Wall-clock budget for the question."""
    token_budget: int
    """Generated tokens across all roles."""
    tool_result_tokens: int
    """Tokens a tool result may take in L2's transcript."""
    answer_tokens: int
    """Tokens reserved for the model's own reply to a question needing no data (small talk)."""

    @classmethod
    def from_settings(cls, h: HarnessSettings) -> "Limits":
        return cls(h.max_l2_steps, h.deadline_s, h.token_budget, h.tool_result_tokens, h.answer_tokens)


@dataclass
class TurnContext:
    """State of one question, shared by planner, follower, dispatch, tool-agents and the reply."""

    request_id: str
    """The request being answered."""
    question: str
    """The user's question, verbatim."""
    model: Model
    """The runtime every generation goes through."""
    limits: Limits
    """Bounds checked before every generation and every step."""
    on_pill: PillSink | None = None
    """Receives each real tool's pill label as it starts."""
    device: str | None = None
    """A device name the asker scoped file searches to (resolved via list_devices)."""
    clock: Callable[[], float] = time.monotonic
    """Monotonic clock (tests replace it)."""
    tracer: Tracer = field(init=False)
    """Trace rows and usage of the request."""
    channels: SideChannels = field(default_factory=SideChannels)
    """Exact payloads found so far."""
    seen_calls: set[tuple[str, str]] = field(default_factory=set)
    """Dedup set: (tool, lowercased instruction) of the current attempt."""
    tool_calls: collections.Counter = field(default_factory=collections.Counter)
    """Real calls per tool in the current attempt."""
    dispatch_counter: int = 0
    """Shared by all tools in the question: the n of l3.<tool>.<n>."""
    tools_called: list[str] = field(default_factory=list)
    """Real tools run, in order."""
    queries: list[str] = field(default_factory=list)
    """The words each search the model crafted looked for, in order (the reply ranks by them too)."""
    by_question: list[str] = field(default_factory=list)
    """Tools run with the question's own words (retrieval.py), no model choosing; in tools_called too."""
    located: list[dict[str, Any]] = field(default_factory=list)
    """The files the plan's own searches located (their best hits), in order."""
    calendar_reads: list[CalendarRead] = field(default_factory=list)
    """The calendar ranges the plan read (the reply renders the asked one)."""
    pills: list[str] = field(default_factory=list)
    """Pill labels emitted, in order."""
    plan: str | None = None
    """The skill the planner chose, once it has."""
    generated_tokens: int = 0
    """Tokens decoded so far, all roles."""

    l2_steps: int = 0
    """L2 steps taken in the current attempt."""
    memo: dict[str, Any] = field(default_factory=dict)
    """Per-question cache for runtime plumbing (date context, device list)."""

    def __post_init__(self) -> None:
        self.started = self.clock()
        self.tracer = Tracer(self.request_id, getattr(self.model, "name", None))

    # -- guards ------------------------------------------------------------------------------------
    def reset_guards(self) -> None:
        """Start a new attempt: clear the dedup set, per-tool counters and the step count."""
        self.seen_calls.clear()
        self.tool_calls.clear()
        self.l2_steps = 0

    def next_dispatch(self) -> int:
        self.dispatch_counter += 1
        return self.dispatch_counter

    async def emit_pill(self, label: str) -> None:
        self.pills.append(label)
        if self.on_pill is None or not label:
            return
        try:
            result = self.on_pill(label)
            if inspect.isawaitable(result):
                await result
        except Exception as err:  # a broken pill sink (gone client) must not cost the answer
            log.warning("request %s: pill sink failed: %s", self.request_id, err)

    # -- bounds ------------------------------------------------------------------------------------
    def elapsed_s(self) -> float:
        return self.clock() - self.started

    def check_deadline(self) -> None:
        if self.elapsed_s() > self.limits.deadline_s:
            raise LimitReached("timeout", f"deadline of {self.limits.deadline_s:g} s passed")

    def deadline(self) -> float:
        """The question's deadline as a time.monotonic() instant, for the runtime (whatever self.clock is)."""
        return time.monotonic() + self.limits.deadline_s - self.elapsed_s()

    def can_generate(self, max_tokens: int) -> bool:
        """Whether a generation reserving max_tokens fits the remaining time and token budget."""
        return (self.elapsed_s() <= self.limits.deadline_s
                and self.generated_tokens + max_tokens <= self.limits.token_budget)

    def check_budget(self, max_tokens: int) -> None:
        self.check_deadline()
        if self.generated_tokens + max_tokens > self.limits.token_budget:
            raise LimitReached("step_limit", f"generated-token budget of {self.limits.token_budget} spent "
                                             f"({self.generated_tokens} used, {max_tokens} more needed)")

    def begin_step(self, messages: Sequence[ChatMessage], max_tokens: int, who: str = "L2") -> str | None:
        """The bounds checked before every loop step (L2 or the direct baseline): None and the step
        is counted, or why the loop must stop with step_limit. A passed deadline raises."""
        if self.l2_steps >= self.limits.max_l2_steps:
            return f"{self.limits.max_l2_steps} {who} steps taken" if who else f"{self.limits.max_l2_steps} steps taken"
        self.check_deadline()
        if not self.fits_window(messages, max_tokens):
            return f"{who}'s transcript filled the window" if who else "the transcript filled the window"
        self.l2_steps += 1
        return None

    def fits_window(self, messages: Sequence[ChatMessage], max_tokens: int) -> bool:
        prompt = self.model.render_chat(messages, add_generation_prompt=True)
        return self.model.count_tokens(prompt) + max_tokens <= self.model.n_ctx

    # -- model calls -------------------------------------------------------------------------------
    def render_head(self, head: Sequence[ChatMessage] | None) -> str | None:
        """The static head of a prompt kind: its messages with prompts.VARIABLE, rendered and cut."""
        return prompts.head_text(self.model.render_chat, head) if head is not None else None

    async def structured(self, role: str, messages: Sequence[ChatMessage], schema: type[T], *,
                         max_tokens: int, bound_tools: list[str], input: str, session: str | None = None,
                         tool: str | None = None, head: Sequence[ChatMessage] | None = None) -> tuple[T, str, Usage]:
        """One constrained generation, bounded, traced and accounted. `head`: the prompt kind's
        messages with prompts.VARIABLE, so the runtime can keep the static head's KV state."""
        prompt = self.model.render_chat(messages, add_generation_prompt=True)
        self.check_budget(max_tokens)
        head_text = self.render_head(head)
        return await self._call(role, prompt, bound_tools, input, tool, lambda: self.model.generate_structured(
            prompt, schema, max_tokens=max_tokens, role=role, session=session, deadline=self.deadline(),
            head=head_text), structured=True)

    async def text(self, role: str, messages: Sequence[ChatMessage], *, max_tokens: int, input: str,
                   session: str | None = None, head: Sequence[ChatMessage] | None = None) -> tuple[str, Usage]:
        """One free-text generation, bounded, traced and accounted (`head` as for structured)."""
        prompt = self.model.render_chat(messages, add_generation_prompt=True)
        self.check_budget(max_tokens)
        head_text = self.render_head(head)
        out, _, usage = await self._call(role, prompt, [], input, None, lambda: self.model.generate(
            prompt, max_tokens=max_tokens, role=role, session=session, deadline=self.deadline(), head=head_text),
            structured=False)
        return out, usage

    async def _call(self, role, prompt, bound_tools, input, tool, make, *, structured: bool):
        started_at, t0 = time.time(), time.perf_counter()
        try:
            result = await make()
        except asyncio.CancelledError:
            raise
        except Exception as err:  # overflow or runtime failure: recorded, then surfaced as one type
            if model_misbehaved(err):
                self.tracer.grammar_failures += 1
            spent = getattr(err, "usage", None)  # a generation that ran but did not validate still cost tokens
            if spent is not None:
                self.generated_tokens += spent.generated_tokens
                self.tracer.add_usage(role, spent)
            self.tracer.record(role, prompt=prompt, bound_tools=bound_tools, input=input,
                               output=getattr(err, "raw", "") or "", usage=spent, started_at=started_at,
                               ms=(time.perf_counter() - t0) * 1000, error=f"{type(err).__name__}: {err}", tool=tool)
            if isinstance(err, GenerationTimeout):  # stopped within a token of the deadline: exit kind timeout
                raise LimitReached("timeout", f"deadline of {self.limits.deadline_s:g} s passed in {role}") from err
            raise ModelCallFailed(role, err) from err
        usage = result.usage
        self.generated_tokens += usage.generated_tokens
        self.tracer.add_usage(role, usage)
        raw = result.raw if structured else result.text
        self.tracer.record(role, prompt=prompt, bound_tools=bound_tools, input=input, output=raw, usage=usage,
                           started_at=started_at, ms=(time.perf_counter() - t0) * 1000, tool=tool)
        if structured:
            return result.value, raw, usage
        return raw, None, usage

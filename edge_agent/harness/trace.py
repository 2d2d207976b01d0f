"""Per-request trace records, usage accounting by role, and one structured log line a step.

Role tags: `planner`, `l2`, `l3.<tool>.<n>` (n from the turn's one dispatch counter), `choose` (the
reply's choice among its candidate lines) and `reply` (the model's own words, only for a question needing no data).
Records are kept in memory for the request and stored in the traces table when tracing is on.
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from edge_agent.llm.base import Usage
from edge_agent.store.traces import TraceRow

log = logging.getLogger(__name__)

ROLE_KINDS = ("planner", "l2", "l3", "choose", "reply")


def role_kind(role: str) -> str:
    """planner | l2 | l3 | choose | reply for any role tag (l3.find_file.3 -> l3)."""
    return role.split(".", 1)[0]


@dataclass
class RoleUsage:
    """What one role cost across a request."""

    calls: int = 0
    """Model calls."""
    prompt_tokens: int = 0
    """Tokens in the prompts."""
    cached_tokens: int = 0
    """Prompt tokens reused from the KV cache."""
    generated_tokens: int = 0
    """Tokens decoded."""
    forced_tokens: int = 0
    """Of generated_tokens, those the grammar forced (appended in a batch, no decode step)."""
    ms: float = 0.0
    """Model time (prefill + decode)."""


@dataclass
class Tracer:
    """Collects a request's trace rows, usage and tool time."""

    request_id: str
    """The request being traced."""
    model: str | None = None
    """The model's name (with its adapter's hash), recorded on every row."""
    records: list[TraceRow] = field(default_factory=list)
    """Rows in order."""
    roles: dict[str, RoleUsage] = field(default_factory=dict)
    """Usage per role kind."""
    tool_ms: float = 0.0
    """Time spent inside real tools."""
    queue_wait_ms: float = 0.0
    """Time spent waiting for the GenerationLock."""
    started: float = field(default_factory=time.monotonic)
    """Monotonic start of the request."""
    grammar_failures: int = 0
    """Structured generations that did not validate (cut off, or outside the schema): the model's fault."""

    def add_usage(self, role: str, usage: Usage) -> None:
        ru = self.roles.setdefault(role_kind(role), RoleUsage())
        ru.calls += 1
        ru.prompt_tokens += usage.prompt_tokens
        ru.cached_tokens += usage.cached_tokens
        ru.generated_tokens += usage.generated_tokens
        ru.forced_tokens += usage.forced_tokens
        ru.ms += usage.ms
        self.queue_wait_ms += usage.wait_ms

    def record(self, role: str, *, prompt: str, bound_tools: list[str], input: str, output: str,
               usage: Usage | None, started_at: float, ms: float, error: str | None = None,
               tool: str | None = None) -> TraceRow:
        row = TraceRow(self.request_id, len(self.records) + 1, role, tool, prompt, list(bound_tools), input,
                       output, usage_dict(usage), started_at, round(ms, 2), error, self.model)
        self.records.append(row)
        return row

    def log_step(self, step: int, role: str, *, tool: str | None, result: str, ms: float,
                 tokens_in: int = 0, tokens_out: int = 0) -> None:
        """One structured line a step: request id, step, role, tool, result kind, latency, tokens."""
        log.info("harness.step %s", json.dumps({
            "request_id": self.request_id, "step": step, "role": role, "tool": tool, "result": result,
            "latency_ms": round(ms, 1), "tokens_in": tokens_in, "tokens_out": tokens_out}))

    def usage_summary(self) -> dict[str, Any]:
        """The Outcome.usage shape the ops metrics read."""
        roles = {k: vars(RoleUsage()) for k in ROLE_KINDS}
        for kind, ru in self.roles.items():
            roles[kind] = {**vars(ru), "ms": round(ru.ms, 1)}
        return {
            "roles": roles,
            "model_calls": sum(r["calls"] for r in roles.values()),
            "prefill_tokens": sum(r["prompt_tokens"] - r["cached_tokens"] for r in roles.values()),
            "decode_tokens": sum(r["generated_tokens"] for r in roles.values()),
            "forced_tokens": sum(r["forced_tokens"] for r in roles.values()),
            "grammar_failures": self.grammar_failures,
            "tool_ms": round(self.tool_ms, 1),
            "queue_wait_ms": round(self.queue_wait_ms, 1),
            "wall_ms": round((time.monotonic() - self.started) * 1000, 1),
        }


def usage_dict(usage: Usage | None) -> dict[str, Any]:
    if usage is None:
        return {}
    return {"prompt_tokens": usage.prompt_tokens, "cached_tokens": usage.cached_tokens,
            "generated_tokens": usage.generated_tokens, "forced_tokens": usage.forced_tokens,
            "prefill_ms": round(usage.prefill_ms, 1),
            "decode_ms": round(usage.decode_ms, 1), "wait_ms": round(usage.wait_ms, 1)}


def format_trace(rows: list[TraceRow]) -> str:
    """Human-readable dump for `edge-agent trace`."""
    out = []
    for r in rows:
        head = f"#{r.seq} {r.role}  {r.ms:.0f} ms  tools={','.join(r.bound_tools) or '-'}"
        if r.model:
            head += f"  model={r.model}"
        if r.usage:
            head += (f"  tokens in={r.usage.get('prompt_tokens', 0)} cached={r.usage.get('cached_tokens', 0)}"
                     f" out={r.usage.get('generated_tokens', 0)}")
        out.append("=" * 78)
        out.append(head)
        if r.error:
            out.append(f"error: {r.error}")
        out.append("--- input")
        out.append(r.input)
        if r.prompt:
            out.append("--- prompt (as rendered)")
            out.append(r.prompt)
        out.append("--- output")
        out.append(r.output)
    return "\n".join(out)

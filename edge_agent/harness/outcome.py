"""What answering one question produces, and the interface the service calls (Asker)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Literal, Protocol

ExitKind = Literal["complete", "halted", "step_limit", "timeout", "needs_confirmation", "error"]
EXIT_KINDS: tuple[str, ...] = ("complete", "halted", "step_limit", "timeout", "needs_confirmation", "error")

PillSink = Callable[[str], Awaitable[None] | None]
"""Called with a tool's pill label as the tool starts, before the answer."""


@dataclass
class PendingAction:
    """An effect the loop stopped before running; `edge-agent confirm ID` runs exactly this."""

    id: str
    """Pending-action id the user confirms."""
    tool: str
    """The effectful tool (remember)."""
    args: dict[str, Any]
    """The exact arguments that will run."""
    preview: str
    """What the user is shown, e.g. 'Add to notebook: "..."'."""


@dataclass
class Outcome:
    """The end of one question (or one confirmation)."""

    request_id: str
    """The request this answers."""
    exit_kind: ExitKind
    """How the loop ended."""
    answer: str
    """What the asker reads: the assistant's own words, composed from exact spans (never the sources)."""
    attachment: dict[str, Any] | None = None
    """The located file (device, path, name), when the answer comes from one."""
    pending: PendingAction | None = None
    """Set when exit_kind is needs_confirmation."""
    sources: list[dict[str, Any]] = field(default_factory=list)
    """What the answer rests on: [{store, title, device, text: [exact spans]}] (reply.py)."""
    tools_called: list[str] = field(default_factory=list)
    """Real tools run, in order."""
    by_question: list[str] = field(default_factory=list)
    """Those of tools_called run with the question's own words (retrieval.py; no model chose them)."""
    usage: dict[str, Any] = field(default_factory=dict)
    """Per role: model calls, prompt/cached/generated tokens, ms; plus totals and queue wait."""
    error: str | None = None
    """Set when exit_kind is error."""
    reason: str | None = None
    """Why the loop stopped when it did not complete (which limit, which tool's budget)."""
    pills: list[str] = field(default_factory=list)
    """Pill labels emitted, in order."""
    plan: str | None = None
    """The skill the planner chose ("none" for no data; None when no plan was made)."""


class Asker(Protocol):
    """The service's view of the assistant."""

    async def ask(self, question: str, *, request_id: str, mode: str = "harness",
                  on_pill: PillSink | None = None, device: str | None = None) -> Outcome:
        """Answer one question over the user's data; `device` scopes file searches to one device."""

    async def confirm(self, action_id: str, *, request_id: str) -> Outcome:
        """Run a previewed pending action exactly."""

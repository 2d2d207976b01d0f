"""Payload models: the requests the agent and file peers accept, and the events they reply with.

One class an event type. Every reply event carries the request id, a sequence number that
only grows for that request, and its `type`. JSON on the wire, UTF-8.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

REQUEST_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"
MAX_QUESTION_CHARS = 2000  # a question longer than this is refused
MAX_QUERY_CHARS = 200  # a file-search query longer than this is refused
MAX_SEARCH_LIMIT = 50  # hits one file search may ask for
FINAL_TYPES = ("answer", "needs_confirmation", "error")
"""Event types after which nothing more comes for the request."""


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    request_id: str = Field(pattern=REQUEST_ID_PATTERN)
    """Chosen by the sender; sending the same id again never runs the request twice."""
    reply_to: str | None = None
    """Reply topic for MQTT 3.1.1 senders that cannot set the v5 ResponseTopic."""


class AskRequest(_Request):
    """P/<device>/ask/<sender>: a question."""

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    """The question, in plain words."""
    mode: Literal["harness", "direct"] = "harness"
    """harness = the L1-L2-L3 loop; direct = the baseline with every tool bound at once."""
    files_device: str | None = Field(None, pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$")
    """Search files on this device only (None = every device)."""


class ConfirmRequest(_Request):
    """P/<device>/confirm/<sender>: run a previewed pending action."""

    action_id: str = Field(min_length=1, max_length=64)
    """The id from a needs_confirmation event."""


class AckRequest(BaseModel):
    """P/<device>/ack/<sender>: the sender has the final event of a request; stop re-sending it."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    request_id: str = Field(pattern=REQUEST_ID_PATTERN)
    """The id of the sender's request whose final event arrived."""


class FileSearchRequest(_Request):
    """P/<device>/files/search/<sender>: search this device's indexed folders."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    """Words to look for in file names and contents."""
    limit: int = Field(10, ge=1, le=MAX_SEARCH_LIMIT)
    """Most hits wanted."""


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    request_id: str | None
    """The request this answers (None only when the request was too broken to name one)."""
    seq: int = Field(ge=0)
    """Grows with every event of a request (by one within a run); never reused, even across a restart."""


class Accepted(_Event):
    """The request is in the request log; it will be answered."""

    type: Literal["accepted"] = "accepted"
    device: str
    """The device that accepted it."""


class Queued(_Event):
    """Another request is running; this one waits its turn."""

    type: Literal["queued"] = "queued"
    position: int = Field(ge=1)
    """1 = next to run."""


class Pill(_Event):
    """A tool started working on the question."""

    type: Literal["pill"] = "pill"
    label: str
    """The tool's pill label from its manifest, e.g. "Files"."""


class Source(BaseModel):
    """One entry an answer rests on."""

    model_config = ConfigDict(extra="ignore")
    store: str
    """notebook | memory | files | calendar | date."""
    title: str
    """The note's title, the file's name, the event range, the memory entry's author."""
    device: str | None = None
    """The file's device."""
    text: list[str] = Field(default_factory=list)
    """The exact sentence(s) the answer rests on, as stored."""


class Answer(_Event):
    """The final answer."""

    type: Literal["answer"] = "answer"
    text: str
    """The answer: what the asker reads."""
    exit_kind: str
    """complete | halted | step_limit | timeout."""
    attachment: dict[str, Any] | None = None
    """The located file (device, path, name) when the answer is a file."""
    sources: list[Source] = Field(default_factory=list)
    """What the answer rests on: store, title, device and the exact spans (shown small, under it)."""
    usage: dict[str, Any] = Field(default_factory=dict)
    """Model calls, tokens and timings."""


class NeedsConfirmation(_Event):
    """The answer proposes an effect; nothing changes until it is confirmed."""

    type: Literal["needs_confirmation"] = "needs_confirmation"
    text: str
    """What the assistant says."""
    action_id: str
    """Send this id in a confirm request to run the action."""
    preview: str
    """Exactly what will happen."""
    confirm_topic: str
    """Where to send the confirm request (with your own name as the last level)."""


class Error(_Event):
    """The request failed or was refused; nothing more comes."""

    type: Literal["error"] = "error"
    code: str
    """bad_request | too_large | busy | rate_limited | not_found | interrupted | internal | timeout."""
    message: str
    """What went wrong, for a person."""
    retry_after_s: float | None = None
    """busy / rate_limited: send again (with the same request id) after this many seconds."""


class FileHit(BaseModel):
    """One file found on a device."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    device: str
    """The device that has it."""
    path: str
    """Its path on that device."""
    name: str
    """File name."""
    kind: str = ""
    """pdf | text | ... as the indexer classified it."""
    size: int = 0
    """Bytes."""
    mtime: str = ""
    """Modified, ISO 8601 (UTC)."""
    excerpt: str = ""
    """The matching text around the query."""
    score: float = 0.0
    """Higher is better."""


class FileResults(_Event):
    """A file peer's reply to a FileSearchRequest."""

    type: Literal["file_results"] = "file_results"
    device: str
    """The device that searched."""
    hits: list[FileHit] = Field(default_factory=list)
    """Best first."""


ReplyEvent = Annotated[Union[Accepted, Queued, Pill, Answer, NeedsConfirmation, Error, FileResults],
                       Field(discriminator="type")]
REPLY_EVENT = TypeAdapter(ReplyEvent)
"""Parses any reply event by its `type`."""


class Status(BaseModel):
    """P/<device>/status, retained: presence plus the latest metrics snapshot."""

    model_config = ConfigDict(extra="allow")

    state: Literal["online", "offline"]
    """online while the process runs; offline on a clean stop or, as the Last Will, a crash."""
    device: str
    """Which device."""
    role: str = "agent"
    """agent (serve) or files (files serve)."""
    ts: float = 0.0
    """When it was published, epoch seconds."""


def dump(event: BaseModel) -> bytes:
    return event.model_dump_json(exclude_none=False).encode("utf-8")

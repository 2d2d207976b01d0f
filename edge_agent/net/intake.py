"""Reading one incoming request: every way it can be bad, and where an error may be sent.

A request is answered on its reply route: the MQTT v5 ResponseTopic (or, for 3.1.1 senders,
the payload's `reply_to`), which must lie in the sender's own reply namespace. Without such a
route nothing may be published for it, so the rejection is only logged.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError

from edge_agent.net.events import REQUEST_ID_PATTERN, AskRequest, ConfirmRequest, FileSearchRequest
from edge_agent.net.mqtt_types import Message
from edge_agent.net.payload import PayloadError, parse_json
from edge_agent.net.topics import RequestTopic, Topics

REQUEST_MODELS: dict[str, type[BaseModel]] = {"ask": AskRequest, "confirm": ConfirmRequest,
                                              "files": FileSearchRequest}
_REQUEST_ID = re.compile(REQUEST_ID_PATTERN)


@dataclass(frozen=True)
class Route:
    """Where a request's events go."""

    topic: str
    """The response topic, inside the sender's reply namespace."""
    correlation: bytes | None
    """CorrelationData to echo on every event."""


@dataclass(frozen=True)
class Incoming:
    """A well-formed request."""

    topic: RequestTopic
    """Device, kind and sender from the topic."""
    request: BaseModel
    """AskRequest | ConfirmRequest | FileSearchRequest."""
    route: Route
    """Where its events go."""

    @property
    def request_id(self) -> str:
        return self.request.request_id  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Rejected:
    """A request that cannot run."""

    code: str
    """bad_request | too_large | no_route | foreign_route | not_for_us | busy | rate_limited | not_found"""
    message: str
    """Why, for a person."""
    route: Route | None
    """Where to send the error; None = log only."""
    request_id: str | None = None
    """The request's id when one could be read."""
    sender: str | None = None
    """The sender, when the topic names one."""
    retry_after_s: float | None = None
    """busy / rate_limited: when sending again may succeed, seconds."""


def _best_request_id(data: object, correlation: bytes | None) -> str | None:
    if isinstance(data, dict) and isinstance(data.get("request_id"), str) and _REQUEST_ID.match(data["request_id"]):
        return data["request_id"]
    if correlation:
        try:
            text = correlation.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return text if _REQUEST_ID.match(text) else None
    return None


def describe_validation_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "payload"
    more = f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


def read_request(msg: Message, topics: Topics, device: str, max_payload_bytes: int) -> Incoming | Rejected:
    """Validate one message addressed to `device`; never raises on bad input."""
    rt = topics.parse_request(msg.topic)
    if rt is None or rt.device != device:
        return Rejected("not_for_us", f"not a request topic of {device}: {msg.topic}", None)
    problem: tuple[str, str] | None = None
    data: object = None
    try:
        data = parse_json(msg.payload, max_bytes=max_payload_bytes)
    except PayloadError as err:
        problem = (err.code, str(err))
    if problem is None and not isinstance(data, dict):
        problem = ("bad_request", f"payload must be a JSON object, not {type(data).__name__}")
    route_topic = msg.response_topic
    if route_topic is None and isinstance(data, dict) and isinstance(data.get("reply_to"), str):
        route_topic = data["reply_to"]
    request_id = _best_request_id(data, msg.correlation)
    if not route_topic:
        return Rejected("no_route", "no response topic (set the MQTT v5 ResponseTopic or reply_to)",
                        None, request_id, rt.sender)
    if not topics.in_reply_namespace(route_topic, rt.sender):
        return Rejected("foreign_route", f"response topic {route_topic!r} is outside "
                        f"{topics.reply_namespace(rt.sender)}/", None, request_id, rt.sender)
    route = Route(route_topic, msg.correlation)
    if problem is not None:
        return Rejected(problem[0], problem[1], route, request_id, rt.sender)
    try:
        request = REQUEST_MODELS[rt.kind].model_validate(data)
    except ValidationError as err:
        return Rejected("bad_request", f"bad {rt.kind} request: {describe_validation_error(err)}",
                        route, request_id, rt.sender)
    return Incoming(rt, request, route)

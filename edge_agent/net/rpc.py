"""AgentClient: send requests to an agent over MQTT v5 and read their events.

One connection serves many requests: the reply subscription is the client's whole namespace,
each request gets the response topic <prefix>/reply/<name>/<request_id> and its id as
CorrelationData. Events are de-duplicated by (request id, seq): QoS 1 and the agent's re-sent
answers may deliver one twice. After a reconnect, requests still without a final event are
sent again with the same id; the agent never runs an id twice, so this only recovers a request
or an answer a broker crash lost. A request that has had no event at all after RESEND_SILENT_S
is sent again too (then at doubling intervals): a pool member killed with it in flight never
claimed it, and the broker hands the repeat to a live member. Every final event is acknowledged to the agent on
P/<device>/ack/<name> ({"request_id"}), which stops the agent re-sending it on its reconnects.
Retained messages on the reply namespace are never taken: the agent does not retain replies.
"""
from __future__ import annotations

import asyncio
import collections
import logging
import uuid
from dataclasses import dataclass, field
from typing import AsyncIterator

from pydantic import BaseModel, ValidationError

from edge_agent.config import Settings
from edge_agent.net.bridge import MqttBridge
from edge_agent.net.events import FINAL_TYPES, REPLY_EVENT, AckRequest
from edge_agent.net.mqtt_types import NO_MATCHING_SUBSCRIBERS, ConnectOptions, Message, MqttError
from edge_agent.net.payload import MAX_STATUS_BYTES, PayloadError, parse_json
from edge_agent.net.tasks import within
from edge_agent.net.topics import Topics
from edge_agent.ops.status import parse_status

log = logging.getLogger(__name__)

CLIENT_SESSION_EXPIRY_S = 600  # the broker keeps our replies this long across a broker restart
MAX_EVENT_BYTES = 256 * 1024  # a reply event larger than this is dropped unread
RESEND_SILENT_S = 5.0  # a request with no event (not even accepted) after this is sent again
RECENT_REQUESTS = 256  # finished requests remembered, so a re-sent answer is acknowledged again


class ClientConfigError(ValueError):
    """The client has no broker username (it is not paired)."""


def _unawaited(fut: asyncio.Future) -> None:
    """A QoS 1 publish nobody waits for: its outcome is read, so a failure is not reported as unretrieved."""
    fut.add_done_callback(lambda f: f.cancelled() or f.exception())


def new_request_id() -> str:
    return uuid.uuid4().hex[:16]


@dataclass
class _Pending:
    device: str
    kind: str
    payload: bytes
    expiry_s: int
    events: asyncio.Queue = field(default_factory=asyncio.Queue)
    seen: set[int] = field(default_factory=set)
    done: bool = False


class AgentClient:
    """A paired client's connection to the agents."""

    def __init__(self, settings: Settings, *, name: str | None = None, fail_fast: bool = True):
        m = settings.mqtt
        self.name = name or m.username
        if not self.name:
            raise ClientConfigError("no MQTT username: pair this client (edge-agent pair add NAME --role client) "
                                    "and use its credentials file with --config")
        self.topics = Topics(m.prefix)
        opts = ConnectOptions(m.host, m.port, f"{self.name}-{uuid.uuid4().hex[:8]}", self.name, m.password,
                              m.tls_ca, m.keepalive_s, clean_start=True,
                              session_expiry_s=CLIENT_SESSION_EXPIRY_S, fail_fast=fail_fast)
        self.bridge = MqttBridge(opts, on_connect=self._on_connect)
        # Retain handling 2: the broker replays no retained message when we (re)subscribe.
        self.bridge.add_subscription(self.topics.reply_namespace(self.name) + "/#", retain_handling=2)
        self._pending: dict[str, _Pending] = {}
        self._recent: collections.OrderedDict[str, str] = collections.OrderedDict()  # request id -> device
        self.device_status: dict[str, dict] = {}
        self._reader: asyncio.Task | None = None
        self._connects = 0

    async def start(self) -> "AgentClient":
        await self.bridge.start()
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aenter__(self) -> "AgentClient":
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        await self.bridge.close(drop_session=True)

    async def watch_status(self, device: str) -> None:
        """Also read the device's retained status (into device_status)."""
        await self.bridge.subscribe(self.topics.status(device))

    async def _on_connect(self, session_present: bool) -> None:
        self._connects += 1
        if self._connects == 1:
            return
        for rid, p in self._pending.items():
            if not p.done:
                log.info("reconnected: sending request %s again", rid)
                self._publish(rid, p)

    def _publish(self, request_id: str, p: _Pending) -> asyncio.Future:
        topic = self.topics.ask(p.device, self.name) if p.kind == "ask" else self.topics.confirm(p.device, self.name)
        return self.bridge.publish(topic, p.payload, qos=1, response_topic=self.topics.reply(self.name, request_id),
                                   correlation=request_id.encode(), expiry_s=p.expiry_s)

    async def send(self, device: str, kind: str, request: BaseModel, *, expiry_s: int) -> str:
        """Publish a request and wait for the broker's PUBACK; raises PermissionError if refused."""
        rid = request.request_id  # type: ignore[attr-defined]
        p = _Pending(device, kind, request.model_dump_json(exclude_none=True).encode(), expiry_s)
        self._pending[rid] = p
        self._remember(rid, device)
        rc = await self._publish(rid, p)
        if rc is not None and rc.is_failure:
            self._pending.pop(rid, None)
            raise PermissionError(f"the broker refused the {kind} to {device}: {rc} "
                                  f"(is {self.name!r} paired as a client?)")
        if rc is not None and rc.value == NO_MATCHING_SUBSCRIBERS:
            # The agent's persistent session would match even while it is down: no such agent.
            self._pending.pop(rid, None)
            raise LookupError(f"no agent named {device!r} has ever connected to this broker "
                              f"(or, if it is a pool, none of its members is connected now)")
        return rid

    def _remember(self, request_id: str, device: str) -> None:
        self._recent[request_id] = device
        self._recent.move_to_end(request_id)
        while len(self._recent) > RECENT_REQUESTS:
            self._recent.popitem(last=False)

    def _ack(self, request_id: str, device: str) -> None:
        """Tell the agent we have the final event (QoS 1; a lost ack only costs a re-sent answer)."""
        try:
            fut = self.bridge.publish(self.topics.ack(device, self.name),
                                      AckRequest(request_id=request_id).model_dump_json(), qos=1)
        except MqttError:
            return  # closing: the agent re-sends the answer to the next connection that asks
        _unawaited(fut)

    async def events(self, request_id: str, timeout_s: float) -> AsyncIterator[BaseModel]:
        """The request's events until its final one; asyncio.TimeoutError past timeout_s."""
        p = self._pending[request_id]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        silent_s = RESEND_SILENT_S
        resend_at = loop.time() + silent_s
        try:
            while True:
                try:
                    event = await within(p.events.get(), max(0.0, min(deadline, resend_at) - loop.time()))
                except asyncio.TimeoutError:
                    if loop.time() >= deadline:
                        raise
                    if not p.seen:
                        log.info("no word on request %s after %.0f s: sending it again", request_id, silent_s)
                        _unawaited(self._publish(request_id, p))
                    silent_s *= 2
                    resend_at = loop.time() + silent_s
                    continue
                yield event
                if event.type in FINAL_TYPES:
                    return
        finally:
            self._pending.pop(request_id, None)

    async def _read(self) -> None:
        async for msg in self.bridge.messages():
            try:
                self._route(msg)
            except Exception:
                log.exception("bad reply on %s", msg.topic)

    def _route(self, msg: Message) -> None:
        device = self.topics.parse_status(msg.topic)
        if device is not None:
            try:
                parse_json(msg.payload, max_bytes=MAX_STATUS_BYTES)  # size and nesting first
                self.device_status[device] = parse_status(msg.payload)
            except ValueError as err:
                log.warning("bad status of %s: %s", device, err)
            return
        head = self.topics.reply_namespace(self.name) + "/"
        rid = msg.topic[len(head):] if msg.topic.startswith(head) else None
        if msg.retain:
            log.warning("ignored a retained message on %s: the agent never retains replies", msg.topic)
            return
        p = self._pending.get(rid or "")
        if p is None and rid not in self._recent:
            return  # not one of our requests
        try:
            event = REPLY_EVENT.validate_python(parse_json(msg.payload, max_bytes=MAX_EVENT_BYTES))
        except PayloadError as err:
            log.warning("unreadable event for %s: %s", rid, err)
            return
        except ValidationError as err:
            log.warning("unreadable event for %s: %s", rid, err.errors()[0]["msg"])
            return
        if event.type in FINAL_TYPES and event.request_id == rid:
            self._ack(rid, p.device if p is not None else self._recent[rid])
        if p is None:
            return  # an answer re-sent for a request we already have: acknowledged again above
        if event.seq in p.seen:
            return
        p.seen.add(event.seq)
        if event.type in FINAL_TYPES:
            if p.done:
                return
            p.done = True
        p.events.put_nowait(event)

"""The agent service: MQTT requests in, a durable queue of questions (askers in turn), reply events out.

Per message, in arrival order: validate (intake) -> check the bounds (queue, per asker; a
confirm only for the asker's own action) -> write the request log -> PUBACK -> accepted (+
queued with its position) -> one worker runs requests one at a time through the Asker, askers
in turn, publishing pills -> the final event is stored, then published. A duplicate id never
runs again: a finished one gets its stored final event re-sent. On start, what a crash left
unanswered is rerun (a confirmation too: the assistant settled its action at its own start and runs
an action at most once), or, for a request that already crashed the agent twice, answered with a
clear error; on every (re)connect, stored answers the broker never
acknowledged, and recent ones the asker has not acked, are re-sent.
"""
from __future__ import annotations

import asyncio
import itertools
import logging
import sqlite3
import time
from dataclasses import dataclass
from typing import Callable

import aiosqlite
from pydantic import BaseModel

from edge_agent.config import Settings
from edge_agent.harness.outcome import Asker, Outcome
from edge_agent.net.bridge import MqttBridge
from edge_agent.net.admission import Admission
from edge_agent.net.events import AckRequest, Accepted, AskRequest, Error, Pill, Queued
from edge_agent.net.fairqueue import FairQueue
from edge_agent.net.intake import REQUEST_MODELS, Incoming, Rejected, Route, read_request
from edge_agent.net.mqtt_types import ConnectOptions, Message, private_client_id
from edge_agent.net.payload import PayloadError, parse_json
from edge_agent.net.presence import DeviceDirectory, StatusPublisher, offline_will
from edge_agent.net.remote_files import RemoteFileSearch, answer_file_search
from edge_agent.net.replies import ReplySender, outcome_event
from edge_agent.net.tasks import cancel_and_wait
from edge_agent.net.topics import Topics
from edge_agent.ops.memguard import LOW_MEMORY_MESSAGE, low_memory
from edge_agent.ops.metrics import Metrics
from edge_agent.store import requests as rlog

log = logging.getLogger(__name__)

MAX_RUNS = 2  # a request that was running when the agent died this often gets an error instead
STOP_GRACE_S = 10.0  # a clean stop lets the running request finish this long
GUARD_FACTOR = 1.5  # the service's own deadline = harness deadline x this + GUARD_SLACK_S
GUARD_SLACK_S = 10.0
ACCEPTED_SEQ = 0  # the request log numbers a new request's events from 1
MAX_ACK_BYTES = 512  # {"request_id": ...} needs far less
RESEND_UNDELIVERED_S = 24 * 3600  # an answer nobody subscribed to is re-sent on reconnects this long
STORAGE_RETRY_S = (0.5, 2.0)  # a request-log write that failed is tried again after each of these
# (each try itself waits up to the busy timeout for another writer): then the asker hears why


def storage_fault(err: sqlite3.Error) -> str:
    """The error code an asker gets for a storage failure: disk_full | storage_unavailable."""
    return "disk_full" if "full" in str(err).lower() else "storage_unavailable"


@dataclass
class Job:
    """One request waiting for, or in, the worker."""

    key: tuple[str, str]
    """(sender, request_id): the request log's key."""
    kind: str
    """ask | confirm"""
    request: BaseModel
    """AskRequest | ConfirmRequest."""
    route: Route
    """Where its events go."""
    enqueued_at: float
    """time.monotonic() when it joined the queue."""


def agent_connect_options(settings: Settings, topics: Topics) -> ConnectOptions:
    """A persistent session keyed by the device (and a tag of its password: nobody else can claim
    it), so questions sent while it restarts still arrive."""
    m = settings.mqtt
    return ConnectOptions(m.host, m.port, private_client_id(f"edge-agent-{settings.device_id}", m.password),
                          m.username, m.password,
                          m.tls_ca, m.keepalive_s, clean_start=False, session_expiry_s=m.session_expiry_s,
                          will=offline_will(topics, settings.device_id, "agent"), receive_maximum=m.receive_maximum)


class AgentService:
    """Owns the MQTT connection of `serve`; run(asker) serves until stop()."""

    def __init__(self, settings: Settings, conn: aiosqlite.Connection, *, metrics: Metrics | None = None,
                 paired_devices: Callable[[], list[str]] | None = None,
                 is_low_memory: Callable[[], bool] | None = None):
        self.settings = settings
        self.device = settings.device_id
        self.conn = conn
        self.topics = Topics(settings.mqtt.prefix)
        self.metrics = metrics or Metrics(settings.ops.latency_window)
        self.bridge = MqttBridge(agent_connect_options(settings, self.topics), manual_ack=True,
                                 on_connect=self._on_connect)
        for topic in self.topics.agent_subscriptions(self.device):
            # Replies are never retained: ask the broker not to replay any on (re)subscribe.
            own_replies = topic.startswith(self.topics.reply_namespace(self.device) + "/")
            self.bridge.add_subscription(topic, retain_handling=2 if own_replies else 0)
        self.replies = ReplySender(self.bridge, conn)
        self.directory = DeviceDirectory(self.topics, self.device, paired_devices)
        self.remote = RemoteFileSearch(self.bridge, self.topics, self.device, self.directory)
        self.status = StatusPublisher(self.bridge, self.topics, self.device, "agent", self._snapshot,
                                      settings.ops.status_interval_s)
        self._low_memory = is_low_memory or (lambda: low_memory(settings.ops.min_available_mb))
        self.storage_fault: str | None = None
        """Why requests cannot be stored right now ("disk_full: ..."), or None: the status's health."""
        self._queue: FairQueue[Job] = FairQueue()
        self.admission = Admission(settings.mqtt, conn, self._queue)
        self._active: set[tuple[str, str]] = set()
        self._running: Job | None = None
        self._stop = asyncio.Event()
        self._stopping = False
        self.asker: Asker | None = None
        h = settings.harness
        self.guard_s = h.deadline_s * GUARD_FACTOR + GUARD_SLACK_S

    def _snapshot(self) -> dict:
        """The status figures: the metrics, plus what the assistant says of itself (heads warming)."""
        snap = self.metrics.snapshot(queue_depth=self.queue_depth)
        snap["health"] = "degraded" if self.storage_fault else "ok"
        snap["health_reason"] = self.storage_fault
        extra = getattr(self.asker, "status", None)
        if callable(extra):
            snap.update(extra())
        return snap

    @property
    def queue_depth(self) -> int:
        """Requests waiting plus the one running."""
        return self._queue.qsize() + (1 if self._running else 0)

    def stop(self) -> None:
        self._stop.set()

    async def run(self, asker: Asker, *, on_ready: Callable[[], None] | None = None) -> None:
        """Recover, connect, serve until stop(), then stop cleanly."""
        self.asker = asker
        await self.recover()
        await self.bridge.start()
        tasks = [asyncio.create_task(self._consume(), name="mqtt-intake"),
                 asyncio.create_task(self._work(), name="request-worker"),
                 asyncio.create_task(self.status.run(), name="status")]
        try:
            if on_ready is not None:
                ready = asyncio.create_task(self._ready(on_ready))
                tasks.append(ready)
            await self._stop.wait()
        finally:
            await self._shutdown(tasks)

    async def _ready(self, on_ready: Callable[[], None]) -> None:
        await self.bridge.wait_connected()
        on_ready()

    async def _on_connect(self, session_present: bool) -> None:
        self.status.publish_online()
        if self.settings.ops.hass_discovery:
            self.publish_discovery()
        await self.resend_unacknowledged()

    def publish_discovery(self) -> None:
        """Home Assistant's retained discovery configs for this board (net/hass.py), on every connect:
        a broker that lost its retained store learns them again."""
        from edge_agent import __version__
        from edge_agent.net.hass import discovery_messages

        for topic, payload in discovery_messages(self.device, self.topics.status(self.device), __version__).items():
            self.bridge.publish(topic, payload, qos=1, retain=True)

    async def resend_unacknowledged(self) -> None:
        """Re-send stored final events the broker never acknowledged, and recent ones the asker
        has not acked: a broker that crashed after its PUBACK may have lost them."""
        undelivered = await rlog.undelivered_requests(self.conn, RESEND_UNDELIVERED_S)
        rows = {(r.sender, r.request_id): r for r in undelivered}
        for r in await rlog.unacked_requests(self.conn, self.settings.mqtt.resend_window_s):
            rows.setdefault((r.sender, r.request_id), r)
        for key, row in rows.items():
            if row.final_event:
                self.replies.publish_final(key, Route(row.response_topic, row.correlation), row.final_event)
        if rows:
            log.info("re-sent %d answers not yet acknowledged", len(rows))

    # -- intake -------------------------------------------------------------------------------
    async def _consume(self) -> None:
        async for msg in self.bridge.messages():
            try:
                await self._handle(msg)
            except Exception as err:
                # Our bug or the database: the message is acked (a redelivery would fail the
                # same way), the asker is told, and the service goes on.
                log.exception("handling a message on %s failed", msg.topic)
                self.bridge.ack(msg)
                code = storage_fault(err) if isinstance(err, sqlite3.Error) else "internal"
                self._tell_failed(msg, code, f"the assistant could not take this request ({code}): {err}")

    def _tell_failed(self, msg: Message, code: str, message: str) -> None:
        """An error event to the asker of `msg`, when it is a request with a reply route."""
        try:
            got = read_request(msg, self.topics, self.device, self.settings.mqtt.max_payload_bytes)
        except Exception:  # nothing readable to answer
            return
        if isinstance(got, Rejected) or got.route is None:
            return
        err = Error(request_id=got.request_id, seq=0, code=code, message=message)
        self.bridge.publish(got.route.topic, err.model_dump_json(), qos=1, correlation=got.route.correlation)

    async def _handle(self, msg: Message) -> None:
        if self.remote.on_reply(msg) or self.directory.on_status(msg):
            self.bridge.ack(msg)
            return
        rt = self.topics.parse_request(msg.topic)
        if msg.retain and rt is not None:
            # Live requests arrive unretained; a retained one is a replay at (re)subscribe.
            self.bridge.ack(msg)
            log.warning("ignored a retained request on %s", msg.topic)
            return
        if rt is not None and rt.kind == "ack" and rt.device == self.device:
            self.bridge.ack(msg)
            await self._acked(rt.sender, msg)
            return
        got = read_request(msg, self.topics, self.device, self.settings.mqtt.max_payload_bytes)
        if isinstance(got, Rejected):
            self.bridge.ack(msg)
            self._reject(got)
            return
        if got.topic.kind == "files":
            self.bridge.ack(msg)
            payload = await answer_file_search(self.conn, self.device, got.request)  # type: ignore[arg-type]
            self.bridge.publish(got.route.topic, payload, qos=1, correlation=got.route.correlation)
            return
        refusal = await self.admission.refusal(got)
        if refusal is not None:
            self.bridge.ack(msg)
            self._reject(refusal)
            return
        await self._accept(msg, got)

    async def _acked(self, sender: str, msg: Message) -> None:
        """P/<device>/ack/<sender>: the sender has a final event; it is not re-sent any more."""
        try:
            ack = AckRequest.model_validate(parse_json(msg.payload, max_bytes=MAX_ACK_BYTES))
        except (PayloadError, ValueError) as err:
            log.warning("unreadable ack from %s: %s", sender, err)
            return
        if not await rlog.mark_acked(self.conn, sender, ack.request_id):
            log.info("ack from %s for %s, which has no stored answer", sender, ack.request_id)

    def _reject(self, got: Rejected) -> None:
        self.metrics.record_rejection(got.code)
        log.warning("rejected request: %s", got.message,
                    extra={"request_id": got.request_id, "sender": got.sender, "code": got.code})
        if got.route is not None:
            err = Error(request_id=got.request_id, seq=0, code=got.code, message=got.message,
                        retry_after_s=got.retry_after_s)
            self.bridge.publish(got.route.topic, err.model_dump_json(), qos=1, correlation=got.route.correlation)

    async def _record(self, got: Incoming) -> tuple | None:
        """The request written to the request log, tried again after STORAGE_RETRY_S; None when
        storage keeps failing: then status says degraded and the asker gets the reason."""
        for delay in (*STORAGE_RETRY_S, None):
            try:
                recorded = await rlog.record_request(
                    self.conn, sender=got.topic.sender, request_id=got.request_id, kind=got.topic.kind,
                    payload=got.request.model_dump_json(), response_topic=got.route.topic,
                    correlation=got.route.correlation)
            except sqlite3.Error as err:
                code = storage_fault(err)
                if delay is not None:
                    log.warning("request log write failed (%s), trying again in %.1f s", err, delay)
                    await asyncio.sleep(delay)
                    continue
                self._set_fault(f"{code}: {err}")
                self._reject(Rejected(code, f"The assistant cannot store requests right now ({err}); "
                                            f"nothing was done. Try again later.", got.route,
                                      request_id=got.request_id, sender=got.topic.sender))
                return None
            self._set_fault(None)
            return recorded
        return None

    def _set_fault(self, fault: str | None) -> None:
        if fault != self.storage_fault:
            self.storage_fault = fault
            self.status.publish_soon()

    async def _accept(self, msg: Message, got: Incoming) -> None:
        sender, rid, kind = got.topic.sender, got.request_id, got.topic.kind
        recorded = await self._record(got)
        if recorded is None:
            self.bridge.ack(msg)  # answered with the reason: a redelivery would only repeat it
            return
        row, created = recorded
        self.bridge.ack(msg)  # only now: a crash before this line makes the broker redeliver
        key = (sender, rid)
        if not created:
            self._duplicate(row, got.route)
            return
        log.info("accepted %s", kind, extra={"request_id": rid, "sender": sender})
        await self.replies.send(key, got.route, lambda seq: Accepted(request_id=rid, seq=seq, device=self.device),
                                seq=ACCEPTED_SEQ)
        if kind == "ask" and self._low_memory():
            self.metrics.record_rejection("low_memory")
            await self.replies.finish(key, got.route, lambda seq: Error(
                request_id=rid, seq=seq, code="busy", message=LOW_MEMORY_MESSAGE,
                retry_after_s=self.settings.mqtt.busy_retry_after_s))
            return
        await self._enqueue(Job(key, kind, got.request, got.route, time.monotonic()), announce=True)

    def _duplicate(self, row: rlog.RequestRow, route: Route) -> None:
        key = (row.sender, row.request_id)
        if row.state == rlog.STATE_DONE and row.final_event is not None:
            log.info("duplicate of an answered request: re-sending its answer", extra={"request_id": row.request_id})
            self.replies.publish_final(key, route, row.final_event)
        elif key in self._active:
            log.info("duplicate of a request in progress: ignored", extra={"request_id": row.request_id})
        else:  # logged but not queued here: cannot happen after recover(), handled anyway
            request = REQUEST_MODELS[row.kind].model_validate_json(row.payload)
            self._active.add(key)
            self._queue.put_nowait(row.sender, Job(key, row.kind, request, Route(row.response_topic, row.correlation),
                                                   time.monotonic()))

    async def _enqueue(self, job: Job, *, announce: bool) -> None:
        ahead = self._queue.position(job.key[0]) + (1 if self._running else 0)
        self._active.add(job.key)
        self._queue.put_nowait(job.key[0], job)
        if announce and ahead:
            await self.replies.send(job.key, job.route, lambda seq: Queued(
                request_id=job.key[1], seq=seq, position=ahead))

    # -- the worker ---------------------------------------------------------------------------
    async def _work(self) -> None:
        while True:
            sender, job = await self._queue.get()
            if self._stopping:
                return  # it stays accepted in the request log and runs after the restart
            self._running = job
            try:
                await self._run_job(job)
            except Exception:
                log.exception("request %s/%s failed outside the assistant", *job.key)
            finally:
                self._running = None
                self._queue.done(sender)
                self._active.discard(job.key)

    async def _run_job(self, job: Job) -> None:
        assert self.asker is not None
        sender, rid = job.key
        attempt, first_seq = await rlog.mark_running(self.conn, sender, rid)
        seqs = itertools.count(first_seq)
        last_seq = first_seq + rlog.RUN_SEQ_BLOCK - 1  # kept for the final event
        queue_wait_ms = (time.monotonic() - job.enqueued_at) * 1000
        started = time.perf_counter()
        # Harness ids must be unique across senders and reruns (traces are keyed by them).
        harness_id = f"{sender}.{rid}" + (f".r{attempt}" if attempt > 1 else "")

        async def on_pill(label: str) -> None:
            seq = next(seqs)
            if seq >= last_seq:
                log.warning("request %s: too many pills; %r not sent", rid, label)
                return
            await self.replies.send(job.key, job.route, lambda s: Pill(request_id=rid, seq=s, label=label), seq=seq)

        outcome: Outcome | None = None
        try:
            if isinstance(job.request, AskRequest):
                call = self.asker.ask(job.request.question, request_id=harness_id, mode=job.request.mode,
                                      on_pill=on_pill, device=job.request.files_device)
            else:
                call = self.asker.confirm(job.request.action_id, request_id=harness_id)  # type: ignore[attr-defined]
            outcome = await asyncio.wait_for(call, self.guard_s)
            confirm_topic = self.topics.confirm(self.device, sender)
            make = lambda seq: outcome_event(outcome, request_id=rid, seq=seq, confirm_topic=confirm_topic)  # noqa: E731
        except asyncio.TimeoutError:
            make = lambda seq: Error(request_id=rid, seq=seq, code="timeout",  # noqa: E731
                                     message=f"no answer within {self.guard_s:.0f} s")
        except Exception as err:
            log.exception("the assistant failed on %s", rid, extra={"request_id": rid})
            why = f"internal error: {type(err).__name__}: {err}"
            make = lambda seq: Error(request_id=rid, seq=seq, code="internal", message=why)  # noqa: E731
        action_id = outcome.pending.id if outcome is not None and outcome.pending is not None else None
        await self.replies.finish(job.key, job.route, make, seq=min(next(seqs), last_seq), action_id=action_id)
        wall_ms = (time.perf_counter() - started) * 1000
        self.metrics.record_request(outcome or Outcome(harness_id, "error", ""), wall_ms=wall_ms,
                                    queue_wait_ms=queue_wait_ms)
        self.status.publish_soon()
        log.info("answered", extra={"request_id": rid, "sender": sender, "attempt": attempt,
                                    "exit_kind": outcome.exit_kind if outcome else "error",
                                    "wall_ms": round(wall_ms, 1), "queue_wait_ms": round(queue_wait_ms, 1),
                                    "question": getattr(job.request, "question", None),
                                    "answer": outcome.answer if outcome else None})

    # -- recovery and shutdown ----------------------------------------------------------------
    async def recover(self) -> None:
        """Before connecting: rerun or settle unfinished requests (answers are re-sent on connect)."""
        pruned = await rlog.prune_requests(self.conn)
        unfinished = await rlog.unfinished_requests(self.conn)
        # A confirmation is rerun like a question: the assistant settled its action when it started
        # (Harness.recover_interrupted: done, pending again, or failed) and runs an action at most
        # once, so the rerun either runs it now or says it already ran.
        for row in unfinished:
            key, route = (row.sender, row.request_id), Route(row.response_topic, row.correlation)
            if row.attempts >= MAX_RUNS:
                message = f"the agent stopped {row.attempts} times while answering this; not retrying"
                await self.replies.finish(key, route, lambda seq, m=message, r=row.request_id: Error(
                    request_id=r, seq=seq, code="interrupted", message=m))
                continue
            request = REQUEST_MODELS[row.kind].model_validate_json(row.payload)
            await self._enqueue(Job(key, row.kind, request, route, time.monotonic()), announce=False)
        if pruned or unfinished:
            log.info("recovery: %d unfinished requests, %d old ones pruned", len(unfinished), pruned)

    async def _shutdown(self, tasks: list[asyncio.Task]) -> None:
        self._stopping = True
        tasks[0].cancel()  # intake: unacked messages are redelivered to the next run
        if self._running is not None:
            log.info("stopping: letting request %s/%s finish", *self._running.key)
            deadline = time.monotonic() + STOP_GRACE_S
            while self._running is not None and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        await cancel_and_wait(tasks)
        await self.status.publish_offline()
        await self.replies.drain()
        await self.bridge.close()

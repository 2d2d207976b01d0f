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
An agent in a pool also reads the pool's shared ask topic on a second, clean-session connection;
those requests are claimed on the broker before they run, and claims of a board that went offline
are taken over (net/pool.py).
"""
from __future__ import annotations

import asyncio
import contextlib
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
from edge_agent.net.pool import Claim, ClaimBook, running_claim, seq_floor
from edge_agent.net.presence import DeviceDirectory, StatusPublisher, offline_will
from edge_agent.net.remote_files import RemoteFileSearch, answer_file_search
from edge_agent.net.replies import ReplySender, outcome_event
from edge_agent.net.tasks import cancel_and_wait, within
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
POOL_JOIN_WAIT_S = 5.0  # the online status waits this long for the pool's subscription
POOL_SWEEP_S = 0.5  # how often a pool member looks for claims to take over
POOL_STATUS_GRACE_S = 2.0  # after connecting, wait this long for the members' retained statuses
POOL_CONTEST_S = 30.0  # a claim that does not come back from the broker within this is given up
POOL_DONE_RESEND_S = 30.0  # answers an offline member finished this recently are sent again
POOL_MAX_EPOCHS = MAX_RUNS + 1  # a pool request whose boards died this often gets an error instead
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
    claim: Claim | None = None
    """Our winning claim, for a pool request."""


def agent_connect_options(settings: Settings, topics: Topics) -> ConnectOptions:
    """A persistent session keyed by the device (and a tag of its password: nobody else can claim
    it), so questions sent while it restarts still arrive."""
    m = settings.mqtt
    return ConnectOptions(m.host, m.port, private_client_id(f"edge-agent-{settings.device_id}", m.password),
                          m.username, m.password,
                          m.tls_ca, m.keepalive_s, clean_start=False, session_expiry_s=m.session_expiry_s,
                          will=offline_will(topics, settings.device_id, "agent", m.pool),
                          receive_maximum=m.receive_maximum)


def pool_connect_options(settings: Settings) -> ConnectOptions:
    """A clean session for the pool's shared subscription: when this board dies the broker stops
    handing it questions at once (a persistent member would keep getting its share, queued)."""
    m = settings.mqtt
    return ConnectOptions(m.host, m.port, private_client_id(f"edge-agent-pool-{settings.device_id}", m.password),
                          m.username, m.password, m.tls_ca, m.keepalive_s, clean_start=True, session_expiry_s=0,
                          receive_maximum=m.receive_maximum)


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
        self.pool = settings.mqtt.pool
        self.pool_bridge: MqttBridge | None = None
        self.claims: ClaimBook | None = None
        if self.pool:
            self.pool_bridge = MqttBridge(pool_connect_options(settings), manual_ack=True,
                                          on_connect=self._on_pool_connect)
            for topic in self.topics.pool_subscriptions(self.pool):
                self.pool_bridge.add_subscription(topic)
            self.claims = ClaimBook(self.pool_bridge, self.topics, self.pool, self.device)
        self._pool_since = float("inf")  # time.monotonic() of the pool connection's last connect
        self._taking: set[tuple[str, str]] = set()  # pool requests whose claim contest is under way
        self._resent: dict[tuple[str, str], float] = {}  # offline members' answers sent again, and when
        self._pool_rows: list[rlog.RequestRow] = []  # pool requests a crash left: claimed after connecting
        self._tasks: set[asyncio.Task] = set()
        self._members_told: dict[str, str] = {}  # the pool members our last status named
        self.status = StatusPublisher(self.bridge, self.topics, self.device, "agent", self._snapshot,
                                      settings.ops.status_interval_s, pool=self.pool)
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
        if self.pool:
            snap["pool_members"] = self._pool_members()
        extra = getattr(self.asker, "status", None)
        if callable(extra):
            snap.update(extra())
        return snap

    def _pool_members(self) -> dict[str, str]:
        """Every member of our pool this board has heard of, with its state (ours: online)."""
        members = {d: s.get("state", "?") for d, s in self.directory.statuses.items() if s.get("pool") == self.pool}
        members[self.device] = "online"
        return dict(sorted(members.items()))

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
        if self.pool_bridge is not None:
            await self.pool_bridge.start()
        await self.bridge.start()
        tasks = [asyncio.create_task(self._consume(self.bridge), name="mqtt-intake"),
                 asyncio.create_task(self._work(), name="request-worker"),
                 asyncio.create_task(self.status.run(), name="status")]
        if self.pool_bridge is not None:
            tasks += [asyncio.create_task(self._consume(self.pool_bridge), name="pool-intake"),
                      asyncio.create_task(self._pool_sweep(), name="pool-sweep")]
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
        if self.pool_bridge is not None:  # "online" means the pool's questions reach us too
            with contextlib.suppress(asyncio.TimeoutError):
                await self.pool_bridge.wait_connected(POOL_JOIN_WAIT_S)
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
    async def _consume(self, source: MqttBridge) -> None:
        async for msg in source.messages():
            try:
                await self._handle(msg, source)
            except Exception as err:
                # Our bug or the database: the message is acked (a redelivery would fail the
                # same way), the asker is told, and the service goes on.
                log.exception("handling a message on %s failed", msg.topic)
                source.ack(msg)
                code = storage_fault(err) if isinstance(err, sqlite3.Error) else "internal"
                self._tell_failed(msg, code, f"the assistant could not take this request ({code}): {err}")

    def _tell_failed(self, msg: Message, code: str, message: str) -> None:
        """An error event to the asker of `msg`, when it is a request with a reply route."""
        try:
            got = read_request(msg, self.topics, self._addressee(msg.topic), self.settings.mqtt.max_payload_bytes)
        except Exception:  # nothing readable to answer
            return
        if isinstance(got, Rejected) or got.route is None:
            return
        err = Error(request_id=got.request_id, seq=0, code=code, message=message)
        self.bridge.publish(got.route.topic, err.model_dump_json(), qos=1, correlation=got.route.correlation)

    def _addressee(self, topic: str) -> str:
        """Whom a request topic addresses among the names this agent answers to: its pool or itself."""
        rt = self.topics.parse_request(topic)
        return self.pool if self.pool and rt is not None and rt.device == self.pool else self.device

    async def _handle(self, msg: Message, source: MqttBridge) -> None:
        if self.directory.on_status(msg):
            source.ack(msg)
            members = self._pool_members() if self.pool else {}
            if members != self._members_told:
                self._members_told = members
                self.status.publish_soon()  # the pool's status shows every member as it is
            return
        if self.remote.on_reply(msg) or (self.claims is not None and self.claims.on_message(msg)):
            source.ack(msg)
            return
        rt = self.topics.parse_request(msg.topic)
        if msg.retain and rt is not None:
            # Live requests arrive unretained; a retained one is a replay at (re)subscribe.
            source.ack(msg)
            log.warning("ignored a retained request on %s", msg.topic)
            return
        if rt is not None and rt.kind == "ack" and rt.device in (self.device, self.pool):
            source.ack(msg)
            await self._acked(rt.sender, msg)
            return
        got = read_request(msg, self.topics, self._addressee(msg.topic), self.settings.mqtt.max_payload_bytes)
        if isinstance(got, Rejected):
            source.ack(msg)
            self._reject(got)
            return
        if got.topic.kind == "files":
            source.ack(msg)
            payload = await answer_file_search(self.conn, self.device, got.request)  # type: ignore[arg-type]
            self.bridge.publish(got.route.topic, payload, qos=1, correlation=got.route.correlation)
            return
        refusal = await self.admission.refusal(got)
        if refusal is not None:
            source.ack(msg)
            self._reject(refusal)
            return
        if self.pool and got.topic.device == self.pool:
            await self._accept_pooled(msg, got, source)
            return
        await self._accept(msg, got)

    async def _acked(self, sender: str, msg: Message) -> None:
        """P/<device>/ack/<sender>: the sender has a final event; it is not re-sent any more."""
        try:
            ack = AckRequest.model_validate(parse_json(msg.payload, max_bytes=MAX_ACK_BYTES))
        except (PayloadError, ValueError) as err:
            log.warning("unreadable ack from %s: %s", sender, err)
            return
        if not await rlog.mark_acked(self.conn, sender, ack.request_id) and not self.pool:
            log.info("ack from %s for %s, which has no stored answer", sender, ack.request_id)

    def _reject(self, got: Rejected) -> None:
        self.metrics.record_rejection(got.code)
        log.warning("rejected request: %s", got.message,
                    extra={"request_id": got.request_id, "sender": got.sender, "code": got.code})
        if got.route is not None:
            err = Error(request_id=got.request_id, seq=0, code=got.code, message=got.message,
                        retry_after_s=got.retry_after_s)
            self.bridge.publish(got.route.topic, err.model_dump_json(), qos=1, correlation=got.route.correlation)

    async def _record(self, got: Incoming, *, pool: str | None = None, first_seq: int = 0) -> tuple | None:
        """The request written to the request log, tried again after STORAGE_RETRY_S; None when
        storage keeps failing: then status says degraded and the asker gets the reason."""
        for delay in (*STORAGE_RETRY_S, None):
            try:
                recorded = await rlog.record_request(
                    self.conn, sender=got.topic.sender, request_id=got.request_id, kind=got.topic.kind,
                    payload=got.request.model_dump_json(), response_topic=got.route.topic,
                    correlation=got.route.correlation, pool=pool, first_seq=first_seq)
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

    # -- the pool (net/pool.py) --------------------------------------------------------------
    async def _on_pool_connect(self, session_present: bool) -> None:
        self._pool_since = time.monotonic()

    def _gone(self, board: str) -> bool:
        """True if `board`'s status says offline, or says nothing although we have been connected long
        enough to have its retained status: then its running claims are taken over."""
        state = self.directory.statuses.get(board, {}).get("state")
        if state is not None:
            return state != "online"
        return time.monotonic() - self._pool_since >= POOL_STATUS_GRACE_S
    def _spawn(self, coro) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _accept_pooled(self, msg: Message, got: Incoming, source: MqttBridge) -> None:
        """A pool request: answered again if a member answered it, left to a live member that holds
        it, else logged, acknowledged and contested (one epoch above an offline holder's claim)."""
        assert self.claims is not None
        key = (got.topic.sender, got.request_id)
        owner = self.claims.owner(key)
        if owner is not None and owner.state == "done" and owner.final_event is not None:
            source.ack(msg)
            log.info("pool request answered by %s: sending its answer again", owner.board, extra={"request_id": key[1]})
            self.bridge.publish(got.route.topic, owner.final_event, qos=1, correlation=got.route.correlation)
            return
        if key in self._active or key in self._taking or (
                owner is not None and owner.board != self.device and not self._gone(owner.board)):
            source.ack(msg)  # ours already, or a live member's: it answers
            return
        claim = running_claim(self.device, owner.epoch + 1 if owner else 1, *key, got.topic.kind,
                              got.request.model_dump_json(), got.route)
        recorded = await self._record(got, pool=self.pool, first_seq=seq_floor(claim.epoch))
        source.ack(msg)  # logged (or answered with the reason): a crash from here on is recovered
        if recorded is not None:
            self._taking.add(key)
            await self._claim_logged(claim, recorded)

    async def _take_over(self, held: Claim, epoch: int) -> None:
        """Log and contest, at `epoch`, a request a claim or our log holds (its board offline, or this
        board before a restart)."""
        claim = held.model_copy(update={"board": self.device, "epoch": epoch, "state": "running", "ts": time.time()})
        route = held.route
        try:
            recorded = await rlog.record_request(
                self.conn, sender=held.sender, request_id=held.request_id, kind=held.kind, payload=held.payload,
                response_topic=route.topic, correlation=route.correlation, pool=self.pool,
                first_seq=seq_floor(epoch))
        except sqlite3.Error as err:
            log.warning("pool request %s/%s not taken over: %s", *held.key, err)
            self._taking.discard(held.key)
            return
        if held.board != self.device:
            log.info("taking over a pool request of %s", held.board, extra={"request_id": held.request_id})
        await self._claim_logged(claim, recorded)

    async def _claim_logged(self, claim: Claim, recorded: tuple[rlog.RequestRow, bool]) -> None:
        """Our log holds the request (`recorded` = (row, new)): contest and run it, unless we answered
        it already (then the claim is brought up to date) or hold it under an older epoch."""
        row, created = recorded
        key = claim.key
        if not created and row.state == rlog.STATE_DONE and row.final_event is not None:
            self._taking.discard(key)
            self.replies.publish_final(key, claim.route, row.final_event)
            self.claims.finish(claim, row.final_event)  # type: ignore[union-attr]
            return
        if not created:
            await rlog.reopen(self.conn, *key, seq_floor(claim.epoch))
        self._spawn(self._run_claimed(claim))

    async def _run_claimed(self, claim: Claim) -> None:
        """Contest the claim: the winner announces and queues the request, a loser hands it over."""
        key = claim.key
        try:
            won = await self.claims.contest(claim, POOL_CONTEST_S)  # type: ignore[union-attr]
            if not won:
                await rlog.hand_over(self.conn, *key)
                return
            if claim.epoch > POOL_MAX_EPOCHS:  # every board that took it died with it
                message = f"the agents stopped {claim.epoch - 1} times while answering this; not retrying"
                final = await self.replies.finish(key, claim.route, lambda seq: Error(
                    request_id=key[1], seq=seq, code="interrupted", message=message), seq=seq_floor(claim.epoch))
                if final is not None:
                    self.claims.finish(claim, final)  # type: ignore[union-attr]
                return
            request = REQUEST_MODELS[claim.kind].model_validate_json(claim.payload)
            job = Job(key, claim.kind, request, claim.route, time.monotonic(), claim=claim)
            await self.replies.send(key, job.route, lambda seq: Accepted(request_id=key[1], seq=seq, device=self.device),
                                    seq=seq_floor(claim.epoch))
            await self._enqueue(job, announce=True)
        except Exception:
            log.exception("pool request %s/%s could not be claimed", *key)
        finally:
            self._taking.discard(key)

    def _taken_from_us(self, job: Job) -> bool:
        """A pool request another member claimed one epoch up while it ran here (our connection was
        lost long enough for our Last Will): its answer is theirs, ours is not sent."""
        holder = self.claims.owner(job.key) if self.claims is not None and job.claim is not None else None
        if holder is None or holder.board == self.device or holder.epoch <= job.claim.epoch:  # type: ignore[union-attr]
            return False
        log.warning("pool request %s/%s was taken over by %s while it ran here; not answering it",
                    *job.key, holder.board)
        return True

    async def _pool_sweep(self) -> None:
        """Take over the running claims of offline members (and our own from before a restart);
        claim what a crash left in our log unclaimed; re-send what an offline member just answered."""
        assert self.claims is not None and self.pool_bridge is not None
        while True:
            await asyncio.sleep(POOL_SWEEP_S)
            if not self.pool_bridge.connected or time.monotonic() - self._pool_since < POOL_STATUS_GRACE_S:
                continue
            for row in self._pool_rows:  # what a crash left: unclaimed, or now another member's
                key = (row.sender, row.request_id)
                owner = self.claims.owner(key)
                if owner is not None and owner.board != self.device and (
                        owner.state == "done" or not self._gone(owner.board)):
                    await rlog.hand_over(self.conn, *key)
                elif owner is None:  # logged, then the crash came before the claim
                    self._taking.add(key)
                    self._spawn(self._take_over(running_claim(
                        self.device, 1, *key, row.kind, row.payload, Route(row.response_topic, row.correlation)), 1))
            self._pool_rows = []
            now = time.time()
            self._resent = {k: t for k, t in self._resent.items() if now - t < 2 * POOL_DONE_RESEND_S}
            for claim in self.claims.claims():
                if claim.key in self._active or claim.key in self._taking:
                    continue
                mine = claim.board == self.device
                if claim.state == "running" and (mine or self._gone(claim.board)):
                    self._taking.add(claim.key)
                    self._spawn(self._take_over(claim, claim.epoch + 1))
                elif (claim.state == "done" and not mine and claim.final_event is not None
                      and claim.key not in self._resent and now - claim.ts < POOL_DONE_RESEND_S
                      and self._gone(claim.board)):
                    self._resent[claim.key] = now  # it may have died between its claim and its answer
                    route = claim.route
                    self.bridge.publish(route.topic, claim.final_event, qos=1, correlation=route.correlation)

    def _duplicate(self, row: rlog.RequestRow, route: Route) -> None:
        key = (row.sender, row.request_id)
        if row.state == rlog.STATE_DONE and row.final_event is not None:
            log.info("duplicate of an answered request: re-sending its answer", extra={"request_id": row.request_id})
            self.replies.publish_final(key, route, row.final_event)
        elif key in self._active:
            log.info("duplicate of a request in progress: ignored", extra={"request_id": row.request_id})
        elif key in self.replies.unstored:  # answered, but the log could not store the answer
            log.info("duplicate of a request answered without a stored copy: re-sending its answer",
                     extra={"request_id": row.request_id})
            self.bridge.publish(route.topic, self.replies.unstored[key], qos=1, correlation=route.correlation)
        else:  # logged but neither queued nor answered here: cannot happen after recover(), handled anyway
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
            outcome = await within(call, self.guard_s)
            confirm_topic = self.topics.confirm(self.device, sender)
            make = lambda seq: outcome_event(outcome, request_id=rid, seq=seq, confirm_topic=confirm_topic)  # noqa: E731
        except asyncio.TimeoutError:
            make = lambda seq: Error(request_id=rid, seq=seq, code="timeout",  # noqa: E731
                                     message=f"no answer within {self.guard_s:.0f} s")
        except Exception as err:
            log.exception("the assistant failed on %s", rid, extra={"request_id": rid})
            why = f"internal error: {type(err).__name__}: {err}"
            make = lambda seq: Error(request_id=rid, seq=seq, code="internal", message=why)  # noqa: E731
        if self._taken_from_us(job):
            await rlog.hand_over(self.conn, sender, rid)
            return
        action_id = outcome.pending.id if outcome is not None and outcome.pending is not None else None
        final = await self.replies.finish(job.key, job.route, make, seq=min(next(seqs), last_seq), action_id=action_id)
        if job.claim is not None and self.claims is not None:
            if final is None:  # answered before (kept): the claim names that answer
                row = await rlog.get_request(self.conn, sender, rid)
                final = row.final_event if row is not None else None
            if final is not None:
                self.claims.finish(job.claim, final)
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
            if row.pool is not None:
                if row.pool == self.pool:
                    self._pool_rows.append(row)  # claimed (or left to its holder) once connected
                else:
                    await rlog.hand_over(self.conn, *key)  # this board left that pool
                continue
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
        for task in tasks:  # intake: unacked messages are redelivered (a pool's: to another member)
            if task.get_name() in ("mqtt-intake", "pool-intake"):
                task.cancel()
        if self._running is not None:
            log.info("stopping: letting request %s/%s finish", *self._running.key)
            deadline = time.monotonic() + STOP_GRACE_S
            while self._running is not None and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        await cancel_and_wait([*tasks, *self._tasks])
        await self.status.publish_offline()
        await self.replies.drain()
        if self.pool_bridge is not None:
            await self.pool_bridge.close()
        await self.bridge.close()

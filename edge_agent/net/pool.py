"""An agent pool: the boards of one household answer one shared request topic, each request once.

The broker hands each question on P/<pool>/ask/<sender> to one member: an MQTT v5 shared
subscription (`$share/<pool>/...`) on a clean-session connection of its own. (Mosquitto keeps
queueing new messages to a dead member's persistent session, and never hands what was in flight
to a dead member to another one, so the shared subscription alone loses requests.) The member
logs the request, then *claims* it: a retained message on P/<pool>/claim/<sender>/<id> naming
itself, with the request and where its answer goes. The claims extend the request log across
boards:

- A contest decides who runs a request: for one epoch, the claim the broker passes on first
  wins. The broker orders the messages of a topic, so every member sees the same first claim. A
  winner that sees a loser's claim after its own publishes its claim again, so the retained
  value stays the winner's.
- Takeover: a running claim whose board went offline (its Last Will on P/<board>/status), or that
  a restarted board finds under its own name, is claimed one epoch up and run from the claim's
  copy of the request. Its events number above anything the earlier run sent (seq_floor).
- Done: the winner replaces its claim with the final event, which the broker keeps for
  CLAIM_EXPIRY_S. The same request reaching any member again gets that answer, never a rerun.

A request lost before its claim (its member killed with it in flight) is sent again by the
asker, which repeats a request that got no event at all (net/rpc.py).
"""
from __future__ import annotations

import asyncio
import base64
import logging
import time
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from edge_agent.net.bridge import MqttBridge
from edge_agent.net.intake import Route
from edge_agent.net.mqtt_types import Message
from edge_agent.net.payload import PayloadError, parse_json
from edge_agent.net.tasks import within
from edge_agent.net.topics import Topics

log = logging.getLogger(__name__)

CLAIM_EXPIRY_S = 24 * 3600  # the broker forgets a claim (running or done) after this
EPOCH_SEQ = 100_000  # event numbers reserved by one epoch of a pool request (runs take RUN_SEQ_BLOCK each)
MAX_CLAIM_BYTES = 64 * 1024  # a request (16 KB at most) plus its final event

Key = tuple[str, str]  # (sender, request_id), the request log's key


class Claim(BaseModel):
    """Who runs (or ran) one pool request, and what it is: the retained payload of its claim topic."""

    board: str
    """The member that runs it."""
    epoch: int = Field(ge=1)
    """1 for the first claim; each takeover one more."""
    state: Literal["running", "done"]
    """running until the final event is stored, then done."""
    sender: str
    """Who asked (the last level of the request topic)."""
    request_id: str
    """The asker's id for it."""
    kind: str
    """ask"""
    payload: str
    """The validated request, JSON: what a board taking it over runs."""
    response_topic: str
    """Where its events go."""
    correlation: str | None = None
    """MQTT v5 CorrelationData to echo, base64."""
    final_event: str | None = None
    """The exact final event, once done."""
    ts: float = Field(default_factory=time.time)
    """When this claim was published, epoch seconds."""

    @property
    def key(self) -> Key:
        return (self.sender, self.request_id)

    @property
    def route(self) -> Route:
        return Route(self.response_topic, base64.b64decode(self.correlation) if self.correlation else None)


def encode_correlation(correlation: bytes | None) -> str | None:
    return base64.b64encode(correlation).decode("ascii") if correlation is not None else None


def running_claim(board: str, epoch: int, sender: str, request_id: str, kind: str, payload: str,
                  route: Route) -> Claim:
    """`board`'s claim at `epoch` on a request it is about to run."""
    return Claim(board=board, epoch=epoch, state="running", sender=sender, request_id=request_id, kind=kind,
                 payload=payload, response_topic=route.topic, correlation=encode_correlation(route.correlation))


def seq_floor(epoch: int) -> int:
    """The accepted event's number for a run at `epoch`: above every event of earlier epochs."""
    return (epoch - 1) * EPOCH_SEQ


class ClaimBook:
    """The pool's claims as this board has seen them, and the contest that decides who runs a request."""

    def __init__(self, bridge: MqttBridge, topics: Topics, pool: str, device: str):
        self.bridge = bridge
        self.topics = topics
        self.pool = pool
        self.device = device
        self._view: dict[Key, Claim] = {}
        """Per request, the winning claim of its highest epoch (updated to done by its board)."""
        self._contests: dict[tuple[Key, int], asyncio.Future] = {}

    def owner(self, key: Key) -> Claim | None:
        """The claim that holds this request now, or None if no member has claimed it."""
        return self._view.get(key)

    def claims(self) -> list[Claim]:
        """Every claim known, oldest first."""
        self._forget_expired()
        return sorted(self._view.values(), key=lambda c: c.ts)

    def on_message(self, msg: Message) -> bool:
        """Take a claim message; False if `msg` is not one of this pool's claims."""
        parsed = self.topics.parse_claim(msg.topic)
        if parsed is None or parsed[0] != self.pool:
            return False
        key = (parsed[1], parsed[2])
        if not msg.payload:
            self._view.pop(key, None)  # cleared by hand
            return True
        try:
            claim = Claim.model_validate(parse_json(msg.payload, max_bytes=MAX_CLAIM_BYTES))
        except (PayloadError, ValidationError, ValueError) as err:
            log.warning("ignoring a bad claim on %s: %s", msg.topic, err)
            return True
        if claim.key != key:
            log.warning("ignoring a claim on %s for another request (%s/%s)", msg.topic, *claim.key)
            return True
        current = self._view.get(key)
        if current is None or claim.epoch > current.epoch or (
                claim.epoch == current.epoch and claim.board == current.board):
            self._view[key] = claim  # the first claim of a new epoch, or its board's own update
            fut = self._contests.pop((key, claim.epoch), None)
            if fut is not None and not fut.done():
                fut.set_result(claim)
        elif claim.epoch == current.epoch and current.board == self.device:
            log.info("pool request %s/%s: %s claimed it after us; claiming it again", *key, claim.board)
            self.publish(current)
        return True

    def publish(self, claim: Claim) -> asyncio.Future:
        return self.bridge.publish(self.topics.claim(self.pool, claim.sender, claim.request_id),
                                   claim.model_dump_json(), qos=1, retain=True, expiry_s=CLAIM_EXPIRY_S)

    async def contest(self, claim: Claim, timeout_s: float) -> bool:
        """Publish `claim` and wait for the first claim of its epoch: True if it is ours."""
        current = self._view.get(claim.key)
        if current is not None and current.epoch >= claim.epoch:
            return False  # someone got there first
        fut = asyncio.get_running_loop().create_future()
        self._contests[(claim.key, claim.epoch)] = fut
        self.publish(claim)
        try:
            winner = await within(fut, timeout_s)
        except asyncio.TimeoutError:
            self._contests.pop((claim.key, claim.epoch), None)
            log.warning("pool request %s/%s: our claim did not come back in %.0f s", *claim.key, timeout_s)
            return False
        return winner.board == self.device

    def finish(self, claim: Claim, final_event: bytes) -> None:
        """Replace our running claim by the final event: the request is answered, by us."""
        done = claim.model_copy(update={"state": "done", "final_event": final_event.decode("utf-8"),
                                        "ts": time.time()})
        self._view[claim.key] = done
        self.publish(done)

    def _forget_expired(self) -> None:
        cutoff = time.time() - CLAIM_EXPIRY_S
        for key in [k for k, c in self._view.items() if c.ts < cutoff]:
            del self._view[key]

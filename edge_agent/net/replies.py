"""Sending a logged request's events: sequence numbers from the request log, the final event
stored before it is published, and marked delivered once the broker acknowledged it.
"""
from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from typing import Any

import aiosqlite
from pydantic import BaseModel

from edge_agent.harness.outcome import Outcome
from edge_agent.net.bridge import MqttBridge
from edge_agent.net.events import Answer, Error, NeedsConfirmation, dump
from edge_agent.net.intake import Route
from edge_agent.net.mqtt_types import NO_MATCHING_SUBSCRIBERS
from edge_agent.store import requests as rlog

log = logging.getLogger(__name__)

MAX_UNSTORED = 1000  # unstored final events kept in memory for duplicates (oldest dropped first)


def _jsonable(value: Any) -> Any:
    """Usage and attachments as plain JSON (anything odd becomes its string)."""
    return json.loads(json.dumps(value, default=str))


def outcome_event(outcome: Outcome, *, request_id: str, seq: int, confirm_topic: str) -> BaseModel:
    """The final event for an Outcome."""
    if outcome.exit_kind == "needs_confirmation" and outcome.pending is not None:
        return NeedsConfirmation(request_id=request_id, seq=seq, text=outcome.answer,
                                 action_id=outcome.pending.id, preview=outcome.pending.preview,
                                 confirm_topic=confirm_topic)
    if outcome.exit_kind == "error":
        return Error(request_id=request_id, seq=seq, code="failed",
                     message=outcome.error or outcome.answer or "the request failed")
    return Answer(request_id=request_id, seq=seq, text=outcome.answer, exit_kind=outcome.exit_kind,
                  attachment=_jsonable(outcome.attachment), sources=list(outcome.sources),
                  usage=_jsonable(outcome.usage))


class ReplySender:
    """Publishes the events of logged requests."""

    def __init__(self, bridge: MqttBridge, conn: aiosqlite.Connection):
        self.bridge = bridge
        self.conn = conn
        self._tasks: set[asyncio.Task] = set()
        self._seqs: dict[tuple[str, str], int] = {}  # the last seq taken a request: numbering goes on
        # when the request log cannot be written
        self.unstored: dict[tuple[str, str], bytes] = {}  # final events sent without a stored copy:
        # a duplicate of such a request gets this event again instead of running again

    async def _seq(self, row_key: tuple[str, str]) -> int:
        """The next seq from the request log; from memory when it cannot be written (full disk)."""
        try:
            seq = await rlog.take_seq(self.conn, *row_key)
        except sqlite3.Error as err:
            seq = self._seqs.get(row_key, 0) + 1
            log.error("request %s/%s: event number not stored (%s); numbering on from %d", *row_key, err, seq)
        self._seqs[row_key] = seq
        return seq

    async def send(self, row_key: tuple[str, str], route: Route, make_event, seq: int | None = None) -> None:
        """Publish one non-final event; `make_event(seq)` builds it (seq None = reserve one now)."""
        if seq is None:
            seq = await self._seq(row_key)
        self.bridge.publish(route.topic, dump(make_event(seq)), qos=1, correlation=route.correlation)

    async def finish(self, row_key: tuple[str, str], route: Route, make_event, seq: int | None = None,
                     action_id: str | None = None) -> bytes | None:
        """Store the final event (with the action it offers), then publish it; None if already done.
        When it cannot be stored (a full disk, a locked database) it is published all the same: an
        answer the asker gets once is better than one kept for a re-send nobody receives."""
        if seq is None:
            seq = await self._seq(row_key)
        self._seqs.pop(row_key, None)
        payload = dump(make_event(seq))
        try:
            stored = await rlog.finish_request(self.conn, *row_key, payload, action_id)
        except sqlite3.Error as err:
            log.error("request %s/%s: final event not stored (%s); sent without a stored copy", *row_key, err)
            self.bridge.publish(route.topic, payload, qos=1, correlation=route.correlation)
            while len(self.unstored) >= MAX_UNSTORED:
                self.unstored.pop(next(iter(self.unstored)))
            self.unstored[row_key] = payload
            return payload
        if not stored:
            log.warning("request %s/%s was already answered; keeping the first answer", *row_key)
            return None
        self.publish_final(row_key, route, payload)
        return payload

    def publish_final(self, row_key: tuple[str, str], route: Route, payload: bytes) -> None:
        """Publish a stored final event (never retained) and mark it delivered on a PUBACK that
        says someone subscribed; the asker's own ack (rlog.mark_acked) ends the re-sending."""
        fut = self.bridge.publish(route.topic, payload, qos=1, correlation=route.correlation)
        fut.add_done_callback(lambda f: self._delivered(row_key, f))

    def _delivered(self, row_key: tuple[str, str], fut: asyncio.Future) -> None:
        if fut.cancelled() or fut.exception() is not None:
            return  # not delivered: re-sent at the next start
        rc = fut.result()
        if rc is not None and getattr(rc, "value", 0) == NO_MATCHING_SUBSCRIBERS:
            return  # the broker dropped it: nobody (not even the asker's session) was subscribed
        if rc is not None and getattr(rc, "is_failure", False):
            # Retrying cannot help a refused publish; stop re-sending it.
            log.error("broker refused the answer of %s/%s: %s", *row_key, rc)
        task = asyncio.create_task(self._mark_delivered(row_key))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _mark_delivered(self, row_key: tuple[str, str]) -> None:
        try:
            await rlog.mark_delivered(self.conn, *row_key)
        except sqlite3.Error as err:  # the mark only stops a re-send: without it the answer goes out again
            log.warning("could not mark the answer of %s/%s delivered (%s, %s); it is re-sent at the next start",
                        *row_key, err, getattr(err, "sqlite_errorname", "?"))

    async def drain(self) -> None:
        """Wait for pending delivered-marks (at shutdown)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

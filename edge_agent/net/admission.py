"""Who may add what to the agent's queue: the intake bounds and the confirm rule.

A question past the per-asker or the queue bound is refused as `busy` with a retry-after,
before anything is written (a duplicate id is always let through: it is answered from the
request log). A confirm is let through only from the asker whose question was offered that
action; other confirms are answered `not_found` (someone else's action and no action look the
same) and counted, and past CONFIRM_FAILURES_ALLOWED in a window an asker's confirms are refused
unread as `rate_limited`. Every refusal is logged by the service.
"""
from __future__ import annotations

import collections
import logging
import time

import aiosqlite

from edge_agent.config import MqttSettings
from edge_agent.net.events import ConfirmRequest
from edge_agent.net.fairqueue import FairQueue
from edge_agent.net.intake import Incoming, Rejected
from edge_agent.store import requests as rlog

log = logging.getLogger(__name__)

CONFIRM_FAILURES_ALLOWED = 5  # failed confirms one asker may make in a window ...
CONFIRM_FAILURE_WINDOW_S = 60.0  # ... of this many seconds; past it confirms are refused unread


class Admission:
    """Decides, per well-formed request, whether it may be logged and queued."""

    def __init__(self, settings: MqttSettings, conn: aiosqlite.Connection, queue: FairQueue):
        self.settings = settings
        self.conn = conn
        self.queue = queue
        self._confirm_failures: dict[str, collections.deque[float]] = {}

    async def refusal(self, got: Incoming) -> Rejected | None:
        """Why a well-formed request may not be logged, or None. Nothing is written for a refusal."""
        sender, rid = got.topic.sender, got.request_id
        if await rlog.get_request(self.conn, sender, rid) is not None:
            return None  # a duplicate: answered from the log whatever the bounds
        m = self.settings
        if isinstance(got.request, ConfirmRequest):
            return await self._confirm_refusal(got)
        if self.queue.pending(sender) >= m.per_asker_limit:
            why = f"you have {self.queue.pending(sender)} questions waiting or running (limit {m.per_asker_limit})"
        elif self.queue.qsize() >= m.queue_limit:
            why = f"{self.queue.qsize()} questions are waiting (limit {m.queue_limit})"
        else:
            return None
        return Rejected("busy", f"busy: {why}; send it again later", got.route, rid, sender,
                        retry_after_s=m.busy_retry_after_s)

    async def _confirm_refusal(self, got: Incoming) -> Rejected | None:
        """Only the asker whose question offered an action may confirm it; failures are rate-limited."""
        sender, rid = got.topic.sender, got.request_id
        failures = self._confirm_failures.setdefault(sender, collections.deque())
        now = time.monotonic()
        while failures and now - failures[0] > CONFIRM_FAILURE_WINDOW_S:
            failures.popleft()
        if len(failures) >= CONFIRM_FAILURES_ALLOWED:
            retry = CONFIRM_FAILURE_WINDOW_S - (now - failures[0])
            log.warning("confirm from %s refused: %d failed confirms in %.0f s", sender, len(failures),
                        CONFIRM_FAILURE_WINDOW_S, extra={"request_id": rid, "sender": sender})
            return Rejected("rate_limited", f"too many failed confirmations; try again in {retry:.0f} s",
                            got.route, rid, sender, retry_after_s=round(retry, 1))
        action_id = got.request.action_id.strip()  # type: ignore[attr-defined]
        if await rlog.action_owner(self.conn, action_id) == sender:
            return None
        failures.append(now)
        # Someone else's action and no action at all look the same: ids are not confirmed to guessers.
        log.warning("confirm from %s for an action that is not theirs: %r", sender, action_id[:64],
                    extra={"request_id": rid, "sender": sender, "code": "not_found"})
        return Rejected("not_found", f"there is no pending action {action_id[:64]!r} of yours", got.route, rid, sender)

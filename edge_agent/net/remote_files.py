"""Cross-device files: the agent's fan-out search, and the answer any device gives to one.

The agent asks every online paired device at once (or the ones named) and waits until all
have answered or the deadline passes. A device that is offline, slow or answers with an error
is named in "unreachable"; it never fails the search.

A reply is taken only on P/reply/<agent>/files/<search id>/<device>, which the broker's ACL lets
only <device> write, and never when retained (a planted message, not an answer). It is dropped
unread past MAX_REPLY_BYTES, its hits are ranked by the agent's own score of the returned name
and excerpt (a peer's own number is never trusted), and at most the number asked for is kept.
"""
from __future__ import annotations

import asyncio
import logging
import uuid

import aiosqlite
from pydantic import ValidationError

from edge_agent.net.bridge import MqttBridge
from edge_agent.net.events import REPLY_EVENT, FileHit, FileResults, FileSearchRequest, dump
from edge_agent.net.mqtt_types import Message
from edge_agent.net.payload import PayloadError, parse_json
from edge_agent.net.presence import DeviceDirectory
from edge_agent.net.topics import Topics
from edge_agent.store.files import search_files
from edge_agent.store.text import name_terms, query_terms, words

log = logging.getLogger(__name__)

SEARCH_DEADLINE_S = 3.0  # how long the agent waits for slow devices
SEARCH_LIMIT = 5  # hits asked of each device
MAX_REPLY_BYTES = 32 * 1024  # a reply of SEARCH_LIMIT hits with full excerpts is ~10 KB; larger is refused unread
NAME_MATCH_WEIGHT = 2.0  # a query word in the file's name counts this much more than one in its text


def excerpt_score(query: str, hit: FileHit) -> float:
    """The agent's own score of a returned hit: query words found in its name and excerpt, 0..3."""
    # A plural's "s" is dropped and words match as prefixes: "manuals" finds "manual".
    terms = [t[:-1] if len(t) > 3 and t.endswith("s") else t for t in query_terms(query)]
    if not terms:
        return 0.0
    name_words = words(name_terms(hit.name))
    text_words = words(hit.excerpt)

    def found(stem: str, among: list[str]) -> bool:
        return any(w.startswith(stem) for w in among)

    total = sum(NAME_MATCH_WEIGHT * found(t, name_words) + found(t, text_words) for t in terms)
    return round(total / len(terms), 3)


async def answer_file_search(conn: aiosqlite.Connection, device: str, request: FileSearchRequest) -> bytes:
    """This device's FileResults event for a search request."""
    hits = await search_files(conn, request.query, [device], request.limit)
    results = FileResults(request_id=request.request_id, seq=0, device=device,
                          hits=[FileHit.model_validate(h) for h in hits])
    return dump(results)


class RemoteFileSearch:
    """The `remote_search` and `list_remote_devices` callables given to the assistant."""

    def __init__(self, bridge: MqttBridge, topics: Topics, device: str, directory: DeviceDirectory,
                 deadline_s: float = SEARCH_DEADLINE_S):
        self.bridge = bridge
        self.topics = topics
        self.device = device
        self.directory = directory
        self.deadline_s = deadline_s
        self._waiting: dict[str, dict[str, asyncio.Future]] = {}

    def on_reply(self, msg: Message) -> bool:
        """Take a reply addressed to one of our searches; False if `msg` is not one."""
        head = self.topics.reply(self.device, "files") + "/"
        if not msg.topic.startswith(head):
            return False
        parts = msg.topic[len(head):].split("/")
        futures = self._waiting.get(parts[0]) if len(parts) == 2 else None
        fut = futures.get(parts[1]) if futures else None
        if msg.retain:
            log.warning("ignored a retained message on %s: replies are never retained", msg.topic)
            return True
        if fut is None or fut.done():
            return True  # a late or unknown reply
        try:
            event = REPLY_EVENT.validate_python(parse_json(msg.payload, max_bytes=MAX_REPLY_BYTES))
        except PayloadError as err:
            fut.set_exception(ValueError(f"bad reply from {parts[1]}: {err}"))
        except ValidationError as err:
            fut.set_exception(ValueError(f"bad reply from {parts[1]}: {err.error_count()} errors"))
        else:
            fut.set_result(event)
        return True

    async def search(self, query: str, devices: list[str]) -> dict:
        """{"hits": [...], "unreachable": [...]} from the named (or all) other devices."""
        targets = [d for d in (devices or self.directory.remote_devices()) if d != self.device]
        unreachable = [d for d in targets if not self.directory.online(d)]
        asked = [d for d in targets if d not in unreachable]
        if not asked:
            return {"hits": [], "unreachable": unreachable}
        search_id = uuid.uuid4().hex[:12]
        futures = {d: asyncio.get_running_loop().create_future() for d in asked}
        self._waiting[search_id] = futures
        try:
            request = FileSearchRequest(request_id=search_id, query=query[:200], limit=SEARCH_LIMIT)
            for d in asked:
                self.bridge.publish(self.topics.files_search(d, self.device), request.model_dump_json(),
                                    qos=1, response_topic=self.topics.reply(self.device, "files", search_id, d),
                                    correlation=search_id.encode(), expiry_s=int(self.deadline_s) + 1)
            await asyncio.wait(list(futures.values()), timeout=self.deadline_s)
        finally:
            self._waiting.pop(search_id, None)
        hits: list[dict] = []
        for d, fut in futures.items():
            event = fut.result() if fut.done() and not fut.cancelled() and fut.exception() is None else None
            if isinstance(event, FileResults):
                scored = sorted((h.model_dump() | {"device": d, "score": excerpt_score(query, h)} for h in event.hits),
                                key=lambda h: h["score"], reverse=True)
                if len(scored) > SEARCH_LIMIT:
                    log.warning("file search on %s: %d hits for %d asked; kept the agent's best %d", d,
                                len(scored), SEARCH_LIMIT, SEARCH_LIMIT)
                hits.extend(scored[:SEARCH_LIMIT])
            else:
                if fut.done() and not fut.cancelled() and fut.exception() is not None:
                    log.warning("file search on %s failed: %s", d, fut.exception())
                elif event is not None:
                    log.warning("file search on %s answered %s", d, getattr(event, "type", "?"))
                unreachable.append(d)
            if not fut.done():
                fut.cancel()
        hits.sort(key=lambda h: h["score"], reverse=True)
        log.info("remote file search: %d hits; asked %s; unreachable %s", len(hits), asked, unreachable)
        return {"hits": hits, "unreachable": unreachable}

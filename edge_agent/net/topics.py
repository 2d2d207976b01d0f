"""Topic names under the prefix (default edge/v1), and parsing of the ones the agent receives.

  P/<device>/ask/<sender>            a question for <device> from <sender>
  P/<device>/confirm/<sender>        a confirmation of a pending action
  P/<device>/ack/<sender>            <sender> has the final event of one of its requests
  P/<device>/files/search/<sender>   a file search for <device>'s file peer
  P/<device>/status                  retained presence + metrics; the Last Will says offline
  P/<pool>/ask/<sender>              a question for any agent of the pool (a shared subscription)
  P/<pool>/ack/<sender>              <sender> has the final event of a pool request (every member reads it)
  P/<pool>/claim/<sender>/<id>       retained: which agent runs or ran that pool request (net/pool.py)
  P/reply/<name>/...                 <name>'s reply namespace: only <name> may read it
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

REPLY = "reply"
RESERVED_NAMES = frozenset({REPLY, "ask", "confirm", "ack", "files", "search", "status", "pill", "event", "events",
                            "claim"})
"""Names that would make topics ambiguous: every word a topic level holds. A client named `ask`
would match another's `P/+/ask/<name>` rule on `P/reply/ask/...` and read forged answers there."""
MAX_TOPIC_CHARS = 256  # a response topic longer than this is refused

RequestKind = Literal["ask", "confirm", "ack", "files"]


@dataclass(frozen=True)
class RequestTopic:
    """A parsed request topic."""

    device: str
    """The device addressed."""
    kind: RequestKind
    """ask | confirm | ack | files"""
    sender: str
    """The sender's name (the broker's ACL makes it the sender's username)."""


@dataclass(frozen=True)
class Topics:
    """Builds and parses topics under one prefix."""

    prefix: str
    """e.g. edge/v1"""

    def ask(self, device: str, sender: str) -> str:
        return f"{self.prefix}/{device}/ask/{sender}"

    def confirm(self, device: str, sender: str) -> str:
        return f"{self.prefix}/{device}/confirm/{sender}"

    def ack(self, device: str, sender: str) -> str:
        return f"{self.prefix}/{device}/ack/{sender}"

    def files_search(self, device: str, sender: str) -> str:
        return f"{self.prefix}/{device}/files/search/{sender}"

    def status(self, device: str) -> str:
        return f"{self.prefix}/{device}/status"

    def reply_root(self) -> str:
        return f"{self.prefix}/{REPLY}"

    def claim(self, pool: str, sender: str, request_id: str) -> str:
        return f"{self.prefix}/{pool}/claim/{sender}/{request_id}"

    def claims(self, pool: str) -> str:
        """Every claim of the pool (a subscription filter)."""
        return f"{self.prefix}/{pool}/claim/#"

    def parse_claim(self, topic: str) -> tuple[str, str, str] | None:
        """(pool, sender, request_id) of a claim topic, else None."""
        parts = self._levels(topic)
        if len(parts) == 4 and parts[1] == "claim":
            return parts[0], parts[2], parts[3]
        return None

    def pool_subscriptions(self, pool: str) -> list[str]:
        """What a pool member reads on its pool connection: the pool's asks, shared (the broker hands
        each to one member), and all of its acks and claims."""
        return [f"$share/{pool}/{self.ask(pool, '+')}", self.ack(pool, "+"), self.claims(pool)]

    def reply_namespace(self, name: str) -> str:
        return f"{self.prefix}/{REPLY}/{name}"

    def reply(self, name: str, *parts: str) -> str:
        return "/".join([self.reply_namespace(name), *parts])

    def agent_subscriptions(self, device: str) -> list[str]:
        """What `serve` reads: its asks, confirms, acks and file searches, its reply namespace, everyone's status."""
        return [self.ask(device, "+"), self.confirm(device, "+"), self.ack(device, "+"), self.files_search(device, "+"),
                self.reply_namespace(device) + "/#", self.status("+")]

    def _levels(self, topic: str) -> list[str]:
        """The topic's levels below the prefix ([] for a topic not under it)."""
        head = self.prefix + "/"
        return topic[len(head):].split("/") if topic.startswith(head) else []

    def parse_request(self, topic: str) -> RequestTopic | None:
        """The request a topic carries, or None if it is not a request topic under the prefix."""
        parts = self._levels(topic)
        if len(parts) == 3 and parts[1] in ("ask", "confirm", "ack"):
            return RequestTopic(parts[0], parts[1], parts[2])  # type: ignore[arg-type]
        if len(parts) == 4 and parts[1:3] == ["files", "search"]:
            return RequestTopic(parts[0], "files", parts[3])
        return None

    def parse_status(self, topic: str) -> str | None:
        """The device of a status topic, else None."""
        parts = self._levels(topic)
        if len(parts) == 2 and parts[1] == "status" and parts[0] != REPLY:
            return parts[0]
        return None

    def in_reply_namespace(self, topic: str, name: str) -> bool:
        """True if `topic` is a publishable topic inside `name`'s reply namespace."""
        ns = self.reply_namespace(name) + "/"
        return (topic.startswith(ns) and len(topic) > len(ns) and len(topic) <= MAX_TOPIC_CHARS
                and not any(c in topic for c in "+#\x00"))

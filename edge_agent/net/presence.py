"""Presence: this process's retained status (online/offline + metrics, Last Will) and the
statuses of the other devices, read from their retained status topics.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from types import MappingProxyType
from typing import Any, Callable, Mapping

from edge_agent.net.bridge import MqttBridge
from edge_agent.net.mqtt_types import Message, Will
from edge_agent.net.payload import MAX_STATUS_BYTES, parse_json
from edge_agent.net.tasks import within
from edge_agent.net.topics import Topics
from edge_agent.ops.status import parse_status, status_payload

log = logging.getLogger(__name__)

OFFLINE_PUBACK_TIMEOUT_S = 2.0  # wait this long for the broker to take the "offline" status
STATUS_COALESCE_S = 0.25  # requests finishing within this share one status publish


def identity(role: str, pool: str | None = None) -> dict[str, str]:
    """What every status of a process says of it, online or offline: its role, and an agent's pool."""
    return {"role": role, **({"pool": pool} if pool else {})}


def offline_will(topics: Topics, device: str, role: str, pool: str | None = None) -> Will:
    """The Last Will: the same retained status a clean stop publishes."""
    return Will(topics.status(device), status_payload("offline", device, identity(role, pool)), retain=True)


class StatusPublisher:
    """Publishes `<prefix>/<device>/status` (retained): on connect, every interval, on demand."""

    def __init__(self, bridge: MqttBridge, topics: Topics, device: str, role: str,
                 snapshot: Callable[[], dict[str, Any]], interval_s: float, pool: str | None = None):
        self.bridge = bridge
        self.topic = topics.status(device)
        self.device = device
        self.identity = identity(role, pool)
        self.snapshot = snapshot
        self.interval_s = interval_s
        self._soon: asyncio.TimerHandle | None = None

    def publish_soon(self) -> None:
        """Publish within STATUS_COALESCE_S: after each request, off its critical path, once a burst."""
        if self._soon is None:
            self._soon = asyncio.get_running_loop().call_later(STATUS_COALESCE_S, self._publish_soon)

    def _publish_soon(self) -> None:
        self._soon = None
        if self.bridge.connected:
            self.publish_online()

    def publish_online(self) -> None:
        try:
            extra = {**self.identity, **self.snapshot()}
        except Exception as err:  # a failing probe must not silence presence
            log.warning("status snapshot failed: %s", err)
            extra = dict(self.identity)
        self.bridge.publish(self.topic, status_payload("online", self.device, extra), qos=1, retain=True)

    async def run(self) -> None:
        """Re-publish every interval while connected (until cancelled)."""
        while True:
            await asyncio.sleep(self.interval_s)
            if self.bridge.connected:
                self.publish_online()

    async def publish_offline(self) -> None:
        """Retained offline, before a clean disconnect (which does not fire the Last Will)."""
        if not self.bridge.connected:
            return
        fut = self.bridge.publish(self.topic, status_payload("offline", self.device, self.identity),
                                  qos=1, retain=True)
        with contextlib.suppress(Exception):
            await within(fut, OFFLINE_PUBACK_TIMEOUT_S)


class DeviceDirectory:
    """What other devices said about themselves on their status topics."""

    def __init__(self, topics: Topics, own_device: str, paired: Callable[[], list[str]] | None = None):
        self.topics = topics
        self.own_device = own_device
        self._paired = paired
        self._status: dict[str, dict[str, Any]] = {}

    def on_status(self, msg: Message) -> bool:
        """Take a status message; False if `msg` is not one."""
        device = self.topics.parse_status(msg.topic)
        if device is None:
            return False
        if not msg.payload:  # a cleared retained message
            self._status.pop(device, None)
            return True
        try:
            parse_json(msg.payload, max_bytes=MAX_STATUS_BYTES)  # size and nesting first
            data = parse_status(msg.payload)
        except ValueError as err:
            log.warning("ignoring bad status from %s: %s", device, err)
            return True
        data["seen_at"] = time.time()
        self._status[device] = data
        return True

    @property
    def statuses(self) -> Mapping[str, dict[str, Any]]:
        """The last status each device published (read-only view, no copy)."""
        return MappingProxyType(self._status)

    def online(self, device: str) -> bool:
        return self._status.get(device, {}).get("state") == "online"

    def remote_devices(self) -> list[str]:
        """Other devices known from statuses or the local pairing registry."""
        names = set(self._status)
        if self._paired is not None:
            with contextlib.suppress(Exception):
                names.update(self._paired())
        names.discard(self.own_device)
        return sorted(names)

    async def list_remote_devices(self) -> list[dict]:
        """[{id, name, online}] for the list_devices tool."""
        return [{"id": d, "name": d, "online": self.online(d)} for d in self.remote_devices()]

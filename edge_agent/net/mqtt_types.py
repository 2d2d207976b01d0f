"""Value types of the MQTT bridge: connection options, the Last Will, a received message."""
from __future__ import annotations

import hashlib
import hmac

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties


NO_MATCHING_SUBSCRIBERS = 16  # MQTT v5 PUBACK reason: accepted, but nobody subscribes to the topic


class MqttError(RuntimeError):
    """A broker refused us (bad credentials, not authorized) or the bridge is closed."""


class ConnectRefused(MqttError):
    """CONNACK carried a failure reason code."""

    def __init__(self, reason: str, code: int):
        super().__init__(f"broker refused the connection: {reason} ({code})")
        self.code = code


@dataclass(frozen=True)
class Will:
    """The Last Will the broker publishes if we vanish."""

    topic: str
    """Where."""
    payload: bytes
    """What."""
    retain: bool = True
    """Retained, so late readers see it."""


@dataclass(frozen=True)
class ConnectOptions:
    """How to reach the broker and what session to keep."""

    host: str
    """Broker host."""
    port: int
    """Broker port."""
    client_id: str
    """MQTT client id: a persistent session is keyed by it."""
    username: str | None = None
    """Broker user."""
    password: str | None = None
    """Broker password."""
    tls_ca: Path | None = None
    """CA file; set = TLS."""
    keepalive_s: int = 30
    """Keepalive, seconds."""
    clean_start: bool = False
    """Clean start on the first connect; later connects always resume the session."""
    session_expiry_s: int = 0
    """How long the broker keeps our session after we go, seconds."""
    will: Will | None = None
    """Last Will."""
    fail_fast: bool = False
    """Raise on a refused or failed first connect instead of retrying (for short-lived clients)."""
    receive_maximum: int | None = None
    """MQTT v5 Receive Maximum: QoS 1 messages the broker sends before we ack them (None = the broker's 65535)."""


@dataclass(frozen=True)
class Message:
    """One received PUBLISH, handed from paho to the event loop."""

    topic: str
    """Topic it arrived on."""
    payload: bytes
    """Raw payload."""
    qos: int
    """0 or 1."""
    retain: bool
    """Retained message."""
    dup: bool
    """Redelivery flag set by the broker."""
    response_topic: str | None
    """MQTT v5 ResponseTopic."""
    correlation: bytes | None
    """MQTT v5 CorrelationData."""
    mid: int
    """Packet id, for a manual ack."""
    generation: int
    """Which connection delivered it; an ack on a later connection would hit the wrong packet."""


@dataclass
class Outgoing:
    """A PUBLISH waiting for the connection (internal to the bridge)."""

    topic: str
    payload: bytes
    qos: int
    retain: bool
    properties: Properties | None
    future: asyncio.Future = field(repr=False)


def publish_properties(response_topic: str | None = None, correlation: bytes | None = None,
                       expiry_s: int | None = None) -> Properties | None:
    if response_topic is None and correlation is None and expiry_s is None:
        return None
    props = Properties(PacketTypes.PUBLISH)
    if response_topic is not None:
        props.ResponseTopic = response_topic
    if correlation is not None:
        props.CorrelationData = correlation
    if expiry_s is not None:
        props.MessageExpiryInterval = max(1, int(expiry_s))
    return props


def private_client_id(base: str, password: str | None) -> str:
    """`base` plus a tag only the holder of `password` can compute: a long-lived connection's
    client id (the agent's persistent session, a file peer) that another paired member cannot
    take over. Mosquitto lets any authenticated user claim any client id and drops the connection
    that held it; a client id nobody else can name cannot be claimed."""
    if not password:
        return base
    tag = hmac.new(password.encode("utf-8"), b"edge-agent client id:" + base.encode("utf-8"), hashlib.sha256)
    return f"{base}-{tag.hexdigest()[:16]}"

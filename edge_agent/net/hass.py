"""Home Assistant MQTT discovery: the agent's status figures as one HA device per board.

Home Assistant finds MQTT devices by retained configs on `homeassistant/<component>/<node>/<object>/config`.
Each sensor here reads the agent's own retained status (`<prefix>/<device>/status`, ops/status.py)
through a value template, and its availability is the same topic's `state`, which the Last Will
sets to "offline" when the agent dies — so HA shows the board unavailable without any new message
from it. The configs are published (retained) on every connect and removed (empty retained
payloads) by `pair rm`. The broker ACL lets an agent write only its own node's configs and every
client read them (net/pairing.py).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

DISCOVERY_PREFIX = "homeassistant"
"""Home Assistant's default discovery prefix."""


@dataclass(frozen=True)
class Sensor:
    """One figure of the status, as an HA sensor."""

    key: str
    """Object id, unique on the board."""
    name: str
    """What HA shows (after the device's name)."""
    template: str
    """Jinja value template over the status JSON (HA's `value_json`)."""
    unit: str | None = None
    """Unit of measurement."""
    device_class: str | None = None
    """HA sensor device class (duration, data_size …)."""
    state_class: str | None = None
    """measurement | total_increasing (long-term statistics), None for text."""
    icon: str | None = None
    """A Material Design icon for figures HA has no class for."""


SENSORS: tuple[Sensor, ...] = (
    Sensor("status", "Status", "{{ value_json.health | default('ok') }}", icon="mdi:robot"),
    Sensor("memory_available", "Memory available", "{{ value_json.mem_available_mb }}", "MiB", "data_size",
           "measurement"),
    Sensor("model_rss", "Process memory (model RSS)", "{{ value_json.rss_mb }}", "MiB", "data_size", "measurement"),
    Sensor("latency_p50", "Latency p50", "{{ value_json.latency_p50_ms }}", "ms", "duration", "measurement"),
    Sensor("latency_p95", "Latency p95", "{{ value_json.latency_p95_ms }}", "ms", "duration", "measurement"),
    Sensor("queue_depth", "Queue depth", "{{ value_json.queue_depth }}", state_class="measurement",
           icon="mdi:tray-full"),
    Sensor("requests", "Requests answered", "{{ value_json.requests }}", state_class="total_increasing",
           icon="mdi:message-reply-text"),
    Sensor("last_error", "Last error", "{{ value_json.health_reason or 'none' }}", icon="mdi:alert-circle-outline"),
)


def node_id(device: str) -> str:
    """The board's node id in discovery topics (HA allows [a-zA-Z0-9_-])."""
    return f"edge_agent_{device}"


def config_topic(device: str, sensor: Sensor | str, prefix: str = DISCOVERY_PREFIX) -> str:
    key = sensor.key if isinstance(sensor, Sensor) else sensor
    return f"{prefix}/sensor/{node_id(device)}/{key}/config"


def config_filter(device: str | None = None, prefix: str = DISCOVERY_PREFIX) -> str:
    """The topic filter covering every config of one board, or of every board (device None)."""
    return f"{prefix}/sensor/{node_id(device) if device else '+'}/+/config"


def sensor_config(sensor: Sensor, device: str, status_topic: str, version: str) -> dict[str, Any]:
    """The discovery payload of one sensor (HA's MQTT sensor schema, full key names)."""
    config: dict[str, Any] = {
        "name": sensor.name,
        "unique_id": f"{node_id(device)}_{sensor.key}",
        "state_topic": status_topic,
        "value_template": sensor.template,
        "availability_topic": status_topic,
        "availability_template": "{{ value_json.state }}",
        "payload_available": "online",
        "payload_not_available": "offline",
        "device": {"identifiers": [node_id(device)], "name": f"edge-agent {device}", "manufacturer": "edge-agent",
                   "model": "on-device assistant", "sw_version": version},
        "origin": {"name": "edge-agent", "sw_version": version},
    }
    for key, value in (("unit_of_measurement", sensor.unit), ("device_class", sensor.device_class),
                       ("state_class", sensor.state_class), ("icon", sensor.icon)):
        if value is not None:
            config[key] = value
    return config


def discovery_messages(device: str, status_topic: str, version: str,
                       prefix: str = DISCOVERY_PREFIX) -> dict[str, bytes]:
    """{config topic: payload} for every sensor of the board (published retained)."""
    return {config_topic(device, s, prefix): json.dumps(sensor_config(s, device, status_topic, version)).encode()
            for s in SENSORS}


def removal_messages(device: str, prefix: str = DISCOVERY_PREFIX) -> dict[str, bytes]:
    """{config topic: b""}: an empty retained config removes the entity from HA."""
    return {config_topic(device, s, prefix): b"" for s in SENSORS}


def clear_discovery(host: str, port: int, username: str, password: str, *, tls_ca: str | None = None,
                    timeout_s: float = 5.0) -> str | None:
    """Publish the empty retained configs that remove board `username` from Home Assistant, logged
    in as that board (only it may write them); None when done, else why not (for `pair rm`)."""
    from edge_agent.net.oneshot import LoginFailed, logged_in

    try:
        with logged_in(host, port, username, password, tls_ca=tls_ca, purpose="unpair", timeout_s=timeout_s) as client:
            infos = [client.publish(topic, payload, qos=1, retain=True)
                     for topic, payload in removal_messages(username).items()]
            for info in infos:
                info.wait_for_publish(timeout_s)
            if not all(info.is_published() for info in infos):
                return f"broker {host}:{port} did not take the removal as {username}"
    except (LoginFailed, RuntimeError, ValueError) as err:
        return f"broker {host}:{port} as {username}: {err}"
    return None

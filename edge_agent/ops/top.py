"""`edge-agent top`: follow the retained status topics of one device or all, over MQTT v5."""
from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

import paho.mqtt.client as mqtt

from edge_agent.config import Settings
from edge_agent.ops.status import device_from_topic, parse_status, status_topic

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 5.0  # connect + CONNACK + SUBACK
SETTLE_S = 0.3  # with --all, stop collecting retained statuses after this long without a new one

COLUMNS = (  # header, key in the status, format
    ("DEVICE", "device", "{}"), ("STATE", "state", "{}"), ("RSS_MB", "rss_mb", "{:.0f}"),
    ("AVAIL_MB", "mem_available_mb", "{:.0f}"), ("LOAD1", "cpu_load_1m", "{:.2f}"),
    ("TEMP_C", "soc_temp_c", "{:.1f}"), ("QUEUE", "queue_depth", "{}"), ("REQS", "requests", "{}"),
    ("P50_MS", "latency_p50_ms", "{:.0f}"), ("P95_MS", "latency_p95_ms", "{:.0f}"),
)


class BrokerError(ConnectionError):
    """The broker could not be reached or refused us."""


class StatusWatcher:
    """Subscribes to status topics and keeps the newest status of each device (thread-safe)."""

    def __init__(self, settings: Settings, device: str | None):
        self.settings = settings
        self.topic = status_topic(settings.mqtt.prefix, device or "+")
        self._lock = threading.Lock()
        self._statuses: dict[str, dict[str, Any]] = {}
        self._subscribed = threading.Event()
        self._changed = threading.Condition(self._lock)
        self._last_message = 0.0
        self._refused: str | None = None
        m = settings.mqtt
        self._client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2,
                                   client_id=f"edge-agent-top-{os.getpid()}", protocol=mqtt.MQTTv5)
        if m.username:
            self._client.username_pw_set(m.username, m.password)
        if m.tls_ca:
            self._client.tls_set(ca_certs=str(m.tls_ca))
        self._client.on_connect = self._on_connect
        self._client.on_subscribe = self._on_subscribe
        self._client.on_message = self._on_message

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            self._refused = str(reason_code)
            self._subscribed.set()
            return
        client.subscribe(self.topic, qos=1)

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties) -> None:
        failed = [str(rc) for rc in reason_codes if rc.is_failure]
        if failed:
            self._refused = f"subscribe to {self.topic} refused ({', '.join(failed)})"
        self._subscribed.set()

    def _on_message(self, client, userdata, msg) -> None:
        if not msg.payload:
            return  # a cleared retained status
        try:
            status = parse_status(msg.payload)
        except ValueError as err:
            log.warning("ignoring status on %s: %s", msg.topic, err)
            return
        status.setdefault("device", device_from_topic(msg.topic))
        with self._changed:
            self._statuses[status["device"]] = status
            self._last_message = time.monotonic()
            self._changed.notify_all()

    def start(self, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
        m = self.settings.mqtt
        try:
            self._client.connect(m.host, m.port, keepalive=m.keepalive_s)
        except (OSError, ValueError) as err:
            raise BrokerError(f"broker {m.host}:{m.port}: {err}") from err
        self._client.loop_start()
        if not self._subscribed.wait(timeout_s):
            self.stop()
            raise BrokerError(f"broker {m.host}:{m.port}: no answer within {timeout_s:.0f} s")
        if self._refused:
            self.stop()
            raise BrokerError(f"broker {m.host}:{m.port}: {self._refused}")

    def stop(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()

    def statuses(self) -> dict[str, dict[str, Any]]:
        """device -> newest status, a copy."""
        with self._lock:
            return {k: dict(v) for k, v in self._statuses.items()}

    def wait_any(self, timeout_s: float) -> bool:
        """Wait until at least one status has arrived."""
        with self._changed:
            return self._changed.wait_for(lambda: bool(self._statuses), timeout_s)

    def wait_settled(self, timeout_s: float, quiet_s: float = SETTLE_S) -> None:
        """Wait until no new status arrived for `quiet_s` (retained ones come in one burst)."""
        deadline = time.monotonic() + timeout_s
        start = time.monotonic()
        while time.monotonic() < deadline:
            with self._lock:
                last = self._last_message or start
            if time.monotonic() - last >= quiet_s:
                return
            time.sleep(quiet_s / 3)


def _cell(status: dict[str, Any], key: str, fmt: str) -> str:
    value = status.get(key)
    if value is None:
        return "-"
    try:
        return fmt.format(value)
    except (ValueError, TypeError):
        return str(value)


def render_table(statuses: dict[str, dict[str, Any]], now: float | None = None) -> str:
    """A plain text table, one row a device; AGE_S is seconds since the status was made."""
    now = time.time() if now is None else now
    headers = [c[0] for c in COLUMNS] + ["TOK/S", "AGE_S"]
    rows = []
    for device in sorted(statuses):
        s = statuses[device]
        last = s.get("last_request") or {}
        tps = last.get("tokens_per_s") if isinstance(last, dict) else None
        age = now - s["ts"] if isinstance(s.get("ts"), (int, float)) else None
        rows.append([_cell(s, key, fmt) for _, key, fmt in COLUMNS]
                    + ["-" if tps is None else f"{tps:.1f}", "-" if age is None else f"{age:.0f}"])
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    if not rows:
        lines.append("(no status yet)")
    return "\n".join(lines)

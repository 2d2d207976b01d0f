"""`edge-agent top` against a real Mosquitto holding retained status messages."""
from __future__ import annotations

import json
import threading

import paho.mqtt.client as mqtt
import pytest

from edge_agent.harness.outcome import Outcome
from edge_agent.ops.metrics import Metrics
from edge_agent.ops.status import parse_status, status_payload, status_topic
from edge_agent.ops.top import render_table
from ops_helpers import cli_env, free_port, run_cli

PUBLISH_TIMEOUT_S = 5.0
MUST_SHOW = ("rss_mb", "mem_available_mb", "queue_depth", "latency_p50_ms", "latency_p95_ms")


def publish_retained(broker, topic: str, payload: bytes) -> None:
    """Publish like the service does: MQTT v5, QoS 1, retained; return once the broker acked."""
    done = threading.Event()
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.on_connect = lambda c, u, f, rc, p: done.set()
    client.connect(broker.host, broker.port)
    client.loop_start()
    assert done.wait(PUBLISH_TIMEOUT_S)
    info = client.publish(topic, payload, qos=1, retain=True)
    info.wait_for_publish(PUBLISH_TIMEOUT_S)
    assert info.is_published()
    client.disconnect()
    client.loop_stop()


def service_snapshot(walls: list[float], queue_depth: int = 1) -> dict:
    """What the service's Metrics really report after answering requests of these durations."""
    metrics = Metrics(window=100)
    for i, wall in enumerate(walls):
        usage = {"roles": {"l2": {"calls": 1, "generated_tokens": 30, "ms": wall * 0.8}}, "tool_ms": 5.0}
        metrics.record_request(Outcome(f"r{i}", "complete", "ok", usage=usage), wall_ms=wall, queue_wait_ms=3.0)
    return metrics.snapshot(queue_depth=queue_depth)


def env_for(broker, **extra):
    return cli_env(EDGE_AGENT_MQTT__PORT=str(broker.port), EDGE_AGENT_MQTT__HOST=broker.host, **extra)


@pytest.mark.broker
def test_top_once_json_prints_the_retained_status(broker):
    snap = service_snapshot([120.0, 340.0, 560.0, 900.0])
    publish_retained(broker, status_topic("edge/v1", "pi"), status_payload("online", "pi", snap))
    proc = run_cli("top", "--once", "--json", env=env_for(broker))
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    print(proc.stdout)
    for key in MUST_SHOW:
        assert key in shown and shown[key] is not None
    assert shown["state"] == "online" and shown["device"] == "pi"
    assert shown["latency_p50_ms"] == 340.0 and shown["latency_p95_ms"] == 900.0
    assert shown["rss_mb"] == snap["rss_mb"] and shown["queue_depth"] == 1
    assert shown["last_request"]["role_ms"]["l2"] == 720.0


@pytest.mark.broker
def test_top_all_collects_every_device_and_honours_the_prefix(broker):
    for device in ("pi", "kitchen"):
        publish_retained(broker, status_topic("home/v2", device),
                         status_payload("online", device, service_snapshot([100.0])))
    publish_retained(broker, status_topic("home/v2", "old"), status_payload("offline", "old"))
    proc = run_cli("top", "--all", "--once", "--json", env=env_for(broker, EDGE_AGENT_MQTT__PREFIX="home/v2"))
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert set(shown) == {"pi", "kitchen", "old"} and shown["old"]["state"] == "offline"
    table = run_cli("top", "--all", "--once", env=env_for(broker, EDGE_AGENT_MQTT__PREFIX="home/v2"))
    assert table.returncode == 0
    header, *rows = table.stdout.splitlines()
    assert header.split()[:3] == ["DEVICE", "STATE", "RSS_MB"]
    assert [r.split()[0] for r in rows] == ["kitchen", "old", "pi"]


@pytest.mark.broker
def test_top_without_a_status_says_so(broker):
    proc = run_cli("top", "--device", "ghost", "--once", "--json", "--wait", "0.5", env=env_for(broker))
    assert proc.returncode == 1
    assert "no status for ghost" in proc.stderr and proc.stdout == ""


def test_top_with_no_broker_fails_clearly():
    port = free_port()
    proc = run_cli("top", "--once", "--json", env=cli_env(EDGE_AGENT_MQTT__PORT=str(port)))
    assert proc.returncode == 1
    assert f"127.0.0.1:{port}" in proc.stderr


def test_status_payload_round_trip_and_table_rendering():
    snap = service_snapshot([200.0, 400.0])
    data = parse_status(status_payload("online", "pi", snap))
    assert data["latency_p95_ms"] == 400.0 and data["state"] == "online"
    with pytest.raises(ValueError):
        parse_status(b"[1, 2]")
    with pytest.raises(ValueError):
        parse_status(b"\xff")
    table = render_table({"pi": data}, now=data["ts"] + 7)
    header, row = table.splitlines()
    cells = dict(zip(header.split(), row.split()))
    assert cells["P50_MS"] == "200" and cells["P95_MS"] == "400" and cells["AGE_S"] == "7"
    assert cells["TEMP_C"] == ("-" if data["soc_temp_c"] is None else f"{data['soc_temp_c']:.1f}")
    assert "(no status yet)" in render_table({})

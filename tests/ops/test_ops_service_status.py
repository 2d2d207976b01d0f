"""With the service running: `edge-agent serve` (scripted model) under a real Mosquitto with the
pairing's ACL, answering questions; `edge-agent top --once --json` then shows its live figures,
and the service spoke systemd's notify protocol (READY=1, WATCHDOG=1) on a socket we hold.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from edge_agent.net.broker import start_local_broker
from edge_agent.net.pairing import PairingPaths, add_member
from ops_helpers import REPO, cli_env, run_cli

READY_TIMEOUT_S = 60.0  # serve start-up (SQLite migrations, scripted model) on a loaded 2-core box
WATCHDOG_USEC = 2_000_000  # 2 s: pings expected every second
MUST_SHOW = ("rss_mb", "mem_available_mb", "queue_depth", "latency_p50_ms", "latency_p95_ms")


def env_for(name: str, port: int, data_dir, **extra) -> dict[str, str]:
    return cli_env(EDGE_AGENT_DATA_DIR=str(data_dir), EDGE_AGENT_DEVICE_ID="pi",
                   EDGE_AGENT_MQTT__PORT=str(port), EDGE_AGENT_MQTT__USERNAME=name,
                   EDGE_AGENT_MQTT__PASSWORD=f"{name}-pw", EDGE_AGENT_OPS__STATUS_INTERVAL_S="1", **extra)


def receive_until(sock: socket.socket, wanted: bytes, timeout_s: float) -> list[bytes]:
    got: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            got.append(sock.recv(4096))
        except socket.timeout:
            break
        if any(wanted in g for g in got):
            return got
    raise AssertionError(f"no {wanted!r} from the service within {timeout_s} s; got {got}")


@pytest.mark.broker
def test_top_shows_the_running_service(tmp_path):
    pairing = PairingPaths(tmp_path / "pairing")
    for name, role in (("pi", "device"), ("phone", "client")):
        add_member(pairing, name, role, prefix="edge/v1", host="127.0.0.1", port=1883, password=f"{name}-pw")
    broker = start_local_broker(tmp_path / "broker", password_file=pairing.password_file,
                                acl_file=pairing.acl_file)
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify.sock"))
    serve_log = open(tmp_path / "serve.log", "wb")  # noqa: SIM115 - owned by the child
    serve = subprocess.Popen(
        [sys.executable, "-m", "edge_agent.cli", "serve", "--scripted-delay-ms", "5", "--log-format", "json"],
        env=env_for("pi", broker.port, tmp_path / "pi-data", NOTIFY_SOCKET=str(tmp_path / "notify.sock"),
                    WATCHDOG_USEC=str(WATCHDOG_USEC)),
        stdout=serve_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=REPO, start_new_session=True)
    serve_log.close()
    try:
        # WATCHDOG_PID is unset, so the watchdog is ours; READY=1 comes once MQTT is connected.
        messages = receive_until(notify, b"READY=1", READY_TIMEOUT_S)
        messages += receive_until(notify, b"WATCHDOG=1", 3.0)
        phone = env_for("phone", broker.port, tmp_path / "phone-data")
        for question in ("What day is it?", "When is my next dentist appointment?", "Hello?"):
            asked = run_cli("ask", question, env=phone, timeout=60)
            assert asked.returncode == 0, asked.stdout + asked.stderr
        time.sleep(1.5)  # the after-request status publish is coalesced for 0.25 s
        proc = run_cli("top", "--once", "--json", env=phone)
        assert proc.returncode == 0, proc.stderr
        print(proc.stdout)
        status = json.loads(proc.stdout)
    finally:
        try:
            if serve.poll() is None:
                os.killpg(serve.pid, signal.SIGTERM)
                try:
                    serve.wait(20)
                except subprocess.TimeoutExpired:
                    os.killpg(serve.pid, signal.SIGKILL)
                    serve.wait(5)
        finally:
            notify.close()
            broker.kill()
    assert any(m.startswith(b"READY=1") for m in messages)
    loading = messages[:next(i for i, m in enumerate(messages) if m.startswith(b"READY=1"))]
    assert any(m.startswith(b"EXTEND_TIMEOUT_USEC=") for m in loading)  # more start-up time while loading
    assert status["state"] == "online" and status["device"] == "pi"
    for key in MUST_SHOW:
        assert status[key] is not None, key
    assert status["requests"] == 3
    assert status["rss_mb"] > 20 and status["mem_available_mb"] > 0 and status["queue_depth"] == 0
    assert 0 < status["latency_p50_ms"] <= status["latency_p95_ms"]
    assert set(status["last_request"]["role_ms"]) == {"planner", "l2", "l3", "choose", "reply"}
    assert status["heads"] == "ready" and status["head_cache_mb"] == 0.0  # the scripted model keeps no KV
    logged = [json.loads(line) for line in (tmp_path / "serve.log").read_text().splitlines()
              if line.startswith("{")]
    assert logged and all("ts" in rec and "level" in rec for rec in logged)
    assert not any("dentist" in json.dumps(rec) for rec in logged if rec["level"] == "info")

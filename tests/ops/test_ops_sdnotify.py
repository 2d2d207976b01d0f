"""sd_notify over a real AF_UNIX datagram socket: path and abstract addresses, the watchdog."""
from __future__ import annotations

import asyncio
import os
import socket
import time

import pytest

from edge_agent.ops import sdnotify


def drain(sock: socket.socket) -> list[bytes]:
    out = []
    while True:
        try:
            out.append(sock.recv(4096))
        except BlockingIOError:
            return out


@pytest.fixture
def listener(tmp_path, monkeypatch):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = tmp_path / "notify.sock"
    sock.bind(str(path))
    sock.setblocking(False)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    yield sock
    sock.close()


def test_ready_status_and_stopping_reach_the_socket(listener):
    assert sdnotify.ready("model loaded, broker connected")
    assert sdnotify.status("serving")
    assert sdnotify.stopping()
    time.sleep(0.05)
    assert drain(listener) == [b"READY=1\nSTATUS=model loaded, broker connected", b"STATUS=serving",
                               b"STOPPING=1"]


def test_abstract_namespace_socket(monkeypatch):
    name = f"edge-agent-test-{os.getpid()}-{time.monotonic_ns()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(b"\0" + name.encode())
        sock.settimeout(2)
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        assert sdnotify.notify("WATCHDOG=1")
        assert sock.recv(100) == b"WATCHDOG=1"


def test_without_systemd_nothing_is_sent(monkeypatch, tmp_path):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert sdnotify.notify("READY=1") is False
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "nobody-listens.sock"))
    assert sdnotify.notify("READY=1") is False  # logged, never raised


def test_watchdog_interval_from_environment(monkeypatch):
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    assert sdnotify.watchdog_interval_s() is None
    monkeypatch.setenv("WATCHDOG_USEC", "60000000")
    assert sdnotify.watchdog_interval_s() == 60.0
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert sdnotify.watchdog_interval_s() == 60.0
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid() + 1))
    assert sdnotify.watchdog_interval_s() is None
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    monkeypatch.setenv("WATCHDOG_USEC", "soon")
    assert sdnotify.watchdog_interval_s() is None


async def test_watchdog_pings_come_from_the_event_loop(listener):
    task = asyncio.create_task(sdnotify.run_watchdog(0.1))  # ping every 0.05 s
    await asyncio.sleep(0.5)
    pings = drain(listener)
    assert len(pings) >= 2 and set(pings) == {b"WATCHDOG=1"}  # ~10 expected; slack for a busy CI box
    time.sleep(0.4)  # a blocked event loop: systemd must see the pings stop
    assert drain(listener) == []
    await asyncio.sleep(0.3)
    assert drain(listener)  # and resume once the loop runs again
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_watchdog_without_interval_returns_at_once(monkeypatch):
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    await asyncio.wait_for(sdnotify.run_watchdog(), 1)


async def test_start_up_is_extended_while_loading_and_never_past_the_limit(listener):
    started = time.monotonic()
    await asyncio.wait_for(sdnotify.extend_start(0.1, 0.25), 2)  # every 0.05 s for 0.25 s, then it ends
    assert time.monotonic() - started < 1
    sent = drain(listener)
    assert 3 <= len(sent) <= 7 and set(sent) == {b"EXTEND_TIMEOUT_USEC=100000"}
    task = asyncio.create_task(sdnotify.extend_start(0.1, 60))
    await asyncio.sleep(0.12)
    task.cancel()  # READY=1 was sent: no more extensions
    await asyncio.sleep(0.15)
    assert len(drain(listener)) <= 3 and task.cancelled()

"""systemd's notify protocol (sd_notify(3)) without libsystemd: READY=1, WATCHDOG=1, STATUS=, EXTEND_TIMEOUT_USEC=...

The unit is Type=notify with NotifyAccess=main, so only the main process may send. Outside
systemd NOTIFY_SOCKET is unset and every call is a cheap no-op returning False.
"""
from __future__ import annotations

import asyncio
import logging
import os
import socket
import time

log = logging.getLogger(__name__)

NOTIFY_SOCKET_ENV = "NOTIFY_SOCKET"
WATCHDOG_USEC_ENV = "WATCHDOG_USEC"
WATCHDOG_PID_ENV = "WATCHDOG_PID"
# Ping at half the watchdog interval, as sd_watchdog_enabled(3) recommends, so one late tick
# of a busy loop does not get the service killed.
WATCHDOG_PING_FRACTION = 0.5
START_EXTENSION_S = 90.0
"""The start-up time each EXTEND_TIMEOUT_USEC asks for, sent every half of it while the service
loads: a first load merges the adapter (about 2 minutes here, 4-6 estimated on a Pi 5)."""
START_LIMIT_S = 1800.0
"""Start-up is never extended past this: a load that hangs still fails the start."""


def _address(raw: str) -> str | bytes:
    if raw.startswith("@"):
        return b"\0" + raw[1:].encode()  # abstract namespace socket
    return raw


def notify(state: str) -> bool:
    """Send `state` (e.g. "READY=1\\nSTATUS=serving") to systemd; False when not under systemd."""
    target = os.environ.get(NOTIFY_SOCKET_ENV)
    if not target or target[0] not in "/@":
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(_address(target))
            sock.sendall(state.encode())
    except OSError as err:
        log.warning("sd_notify to %s failed: %s", target, err)
        return False
    return True


def ready(status: str | None = None) -> bool:
    """Tell systemd start-up is complete (model loaded, broker connected)."""
    return notify("READY=1" + (f"\nSTATUS={status}" if status else ""))


def status(text: str) -> bool:
    """Set the one-line status `systemctl status` shows."""
    return notify(f"STATUS={text}")


def stopping(text: str | None = None) -> bool:
    """Tell systemd a clean stop has begun."""
    return notify("STOPPING=1" + (f"\nSTATUS={text}" if text else ""))


def watchdog_interval_s() -> float | None:
    """The WatchdogSec= systemd expects pings within, seconds; None when no watchdog is set for us."""
    usec = os.environ.get(WATCHDOG_USEC_ENV)
    if not usec:
        return None
    pid = os.environ.get(WATCHDOG_PID_ENV)
    if pid and pid.strip() != str(os.getpid()):
        return None  # the watchdog belongs to another process (we are a child)
    try:
        value = int(usec)
    except ValueError:
        log.warning("ignoring malformed %s=%r", WATCHDOG_USEC_ENV, usec)
        return None
    return value / 1_000_000 if value > 0 else None


async def run_watchdog(interval_s: float | None = None) -> None:
    """Ping WATCHDOG=1 from the event loop until cancelled.

    It runs as a task on the service's own loop, so a loop blocked by a stray synchronous call
    stops the pings and systemd restarts the service.
    """
    interval_s = watchdog_interval_s() if interval_s is None else interval_s
    if not interval_s:
        return
    period = interval_s * WATCHDOG_PING_FRACTION
    while True:
        notify("WATCHDOG=1")
        await asyncio.sleep(period)


async def extend_start(extension_s: float = START_EXTENSION_S, limit_s: float = START_LIMIT_S) -> None:
    """Ask systemd for `extension_s` more start-up time every half of it, until cancelled (once
    READY=1 is sent) or `limit_s` has passed; a no-op outside systemd."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        notify(f"EXTEND_TIMEOUT_USEC={int(extension_s * 1_000_000)}")
        await asyncio.sleep(extension_s / 2)

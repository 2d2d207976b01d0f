"""Helpers of the ops tests: an anonymous Mosquitto on a free loopback port, the CLI in a child process."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

MOSQUITTO = "/usr/sbin/mosquitto"
BROKER_READY_S = 10.0  # how long a starting broker may take to listen
REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Broker:
    """A Mosquitto this test started."""

    host: str
    """Loopback address."""
    port: int
    """Its port."""
    proc: subprocess.Popen
    """The process."""


def start_broker(directory: Path, port: int, extra: str = "", anonymous: bool = True) -> Broker:
    """Mosquitto with a generated config on 127.0.0.1:port; `extra` lines are appended."""
    directory.mkdir(parents=True, exist_ok=True)
    conf = directory / "mosquitto.conf"
    allow = "true" if anonymous else "false"
    # Started as root Mosquitto drops to user "mosquitto", who cannot read files in a 0700 tmp dir.
    user = "user root\n" if os.geteuid() == 0 else ""
    conf.write_text(f"{user}listener {port} 127.0.0.1\nallow_anonymous {allow}\npersistence false\n{extra}")
    log = open(directory / "mosquitto.log", "wb")  # noqa: SIM115 - owned by the child
    proc = subprocess.Popen([MOSQUITTO, "-c", str(conf)], stdout=log, stderr=subprocess.STDOUT)
    log.close()
    deadline = time.monotonic() + BROKER_READY_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"mosquitto exited: {(directory / 'mosquitto.log').read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return Broker("127.0.0.1", port, proc)
        except OSError:
            time.sleep(0.02)
    proc.kill()
    raise RuntimeError("mosquitto did not start")


def cli_env(**extra: str) -> dict[str, str]:
    """The environment for `edge-agent` subprocesses: no EDGE_AGENT_* leaking in from outside."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_AGENT_")}
    env.update(extra)
    return env


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run the real console entry point in a child process."""
    return subprocess.run([sys.executable, "-m", "edge_agent.cli", *args], capture_output=True, text=True,
                          env=env or cli_env(), timeout=timeout, cwd=REPO)

"""Helpers of the real-broker tests (imported as `from netkit import ...`)."""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from edge_agent.config import Settings
from edge_agent.harness.outcome import Outcome, PendingAction
from edge_agent.paths import PROJECT_ROOT

PREFIX = "edge/v1"
MEMBERS = {"pi": "agent", "laptop": "device", "desk": "device", "phone": "client", "alice": "client"}
"""Names paired for every test, with their roles; each one's password is "<name>-secret"."""


async def until(predicate, timeout_s: float = 5.0) -> None:
    """Poll `predicate` until it holds; fail the test past `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition never held"
        await asyncio.sleep(0.02)


def settings_env(settings: Settings) -> dict[str, str]:
    """The environment that makes a CLI subprocess use these settings."""
    m = settings.mqtt
    env = dict(os.environ)
    env.update({"EDGE_AGENT_DATA_DIR": str(settings.data_dir), "EDGE_AGENT_DEVICE_ID": settings.device_id,
                "EDGE_AGENT_MQTT__HOST": m.host, "EDGE_AGENT_MQTT__PORT": str(m.port),
                "EDGE_AGENT_MQTT__USERNAME": m.username or "", "EDGE_AGENT_MQTT__PASSWORD": m.password or "",
                "EDGE_AGENT_MQTT__PREFIX": m.prefix, "PYTHONPATH": str(PROJECT_ROOT)})
    env.pop("NOTIFY_SOCKET", None)
    return env


@dataclass
class FakeAsker:
    """An Asker for the service's logic: sleeps, emits pills, counts calls; optional pending action."""

    delay_s: float = 0.0
    pills: tuple[str, ...] = ("Date",)
    pending: bool = False
    calls: list[str] = field(default_factory=list)
    confirms: list[str] = field(default_factory=list)
    devices: list[str | None] = field(default_factory=list)
    started: asyncio.Event = field(default_factory=asyncio.Event)

    async def ask(self, question: str, *, request_id: str, mode: str = "harness", on_pill=None,
                  device: str | None = None) -> Outcome:
        self.calls.append(request_id)
        self.devices.append(device)
        self.started.set()
        for label in self.pills:
            if on_pill is not None:
                await on_pill(label)
        await asyncio.sleep(self.delay_s)
        if self.pending:
            action = PendingAction(f"act-{len(self.calls)}", "remember", {"fact": question},
                                   f'Add to notebook: "{question}"')
            return Outcome(request_id, "needs_confirmation", "Shall I remember that?", pending=action)
        return Outcome(request_id, "complete", f"answer to: {question}", usage={"model_calls": 1})

    async def confirm(self, action_id: str, *, request_id: str) -> Outcome:
        self.confirms.append(action_id)
        return Outcome(request_id, "complete", f"done: {action_id}")


def spawn_cli(args: list[str], settings: Settings, log_path: Path, **env: str) -> subprocess.Popen:
    """`python -m edge_agent.cli ARGS` with `settings` (and `env`: more EDGE_AGENT_* overrides) in its
    environment, output to log_path."""
    fh = open(log_path, "ab")  # noqa: SIM115 - handed to the child
    try:
        return subprocess.Popen([sys.executable, "-m", "edge_agent.cli", *args], env=settings_env(settings) | env,
                                stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    finally:
        fh.close()


def kill_tree(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        proc.wait(10)


async def collect(client, device: str, question: str, *, request_id: str | None = None,
                  timeout_s: float = 15.0, kind: str = "ask") -> list:
    """Send one request through an AgentClient and return all its events, final last."""
    from edge_agent.net.events import AskRequest, ConfirmRequest
    from edge_agent.net.rpc import new_request_id

    rid = request_id or new_request_id()
    request = (AskRequest(request_id=rid, question=question) if kind == "ask"
               else ConfirmRequest(request_id=rid, action_id=question))
    await client.send(device, kind, request, expiry_s=60)
    return [e async for e in client.events(rid, timeout_s)]

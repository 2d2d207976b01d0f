"""MQTT round trip and fault tolerance of `serve` against a real Mosquitto on loopback.

Round trip: ask -> answer through the real harness on a zero-latency scripted model, the agent
a separate `serve` process. Fault run: requests sent at a steady pace while the broker is
restarted cleanly, then SIGKILLed (losing what it had not saved) and restarted, and the agent
is SIGKILLed and restarted; every request must end in exactly one executed answer (counted
from the agent's execution journal, not from its request log), and every answer the agent's
log counts as delivered must have reached the client.
Everything runs in a temporary directory with its own pairing, broker and data dirs.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from edge_agent.config import MqttSettings, Settings
from edge_agent.net.broker import LocalBroker, start_local_broker
from edge_agent.net.events import AskRequest
from edge_agent.net.pairing import PairingPaths, add_member, read_password
from edge_agent.net.rpc import AgentClient, new_request_id
from edge_agent.ops.metrics import percentile
from edge_agent.paths import PROJECT_ROOT

log = logging.getLogger(__name__)

ROUNDTRIPS = 200  # measured asks
WARMUP = 20  # asks before measuring (caches, first-use imports)
FAULT_REQUESTS = 200
FAULT_PACE_S = 0.02  # one request every 20 ms: the faults land while many are in flight
FAULT_DELAY_MS = 2.0  # scripted latency a generation in the fault run
FAULT_TIMEOUT_S = 120.0  # how long the fault run waits for the last answers
AGENT_READY_TIMEOUT_S = 60.0
GOAL_P99_MS = 10.0
# The fault run is one client sending 200 questions in 4 s: a durability test, not a flood test,
# so the agent's per-asker and queue bounds are lifted for it (bench abuse tests the bounds).
FAULT_ID_PREFIX = "fault-"  # request ids of the fault run (the round trips share the agent's log)
FAULT_RUN_ENV = {"EDGE_AGENT_MQTT__PER_ASKER_LIMIT": "1000", "EDGE_AGENT_MQTT__QUEUE_LIMIT": "1000"}
PREFIX = "edge/v1"


def add_arguments(parser) -> None:
    parser.add_argument("--requests", type=int, default=ROUNDTRIPS, help="measured round trips")
    parser.add_argument("--fault-requests", type=int, default=FAULT_REQUESTS,
                        help="requests in the fault run (0 skips it)")


class Rig:
    """A broker, a paired agent `pi` and client `bench`, in one temporary directory."""

    def __init__(self, root: Path):
        self.root = root
        self.pairing = PairingPaths(root / "pairing")
        for name, role in (("pi", "agent"), ("bench", "client")):
            add_member(self.pairing, name, role, prefix=PREFIX, host="127.0.0.1", port=0)
        self.broker: LocalBroker = start_local_broker(root / "broker", password_file=self.pairing.password_file,
                                                      acl_file=self.pairing.acl_file)
        self.agent: subprocess.Popen | None = None

    def settings(self, name: str) -> Settings:
        data = self.root / f"data-{name}"
        data.mkdir(exist_ok=True)
        mqtt = MqttSettings(host=self.broker.host, port=self.broker.port, username=name,
                            password=read_password(self.pairing, name), prefix=PREFIX)
        return Settings(data_dir=data, device_id="pi", mqtt=mqtt)

    def start_agent(self, delay_ms: float, journal: Path | None = None, **env_extra: str) -> None:
        self.agent = start_serve(self.settings("pi"), delay_ms, journal, self.root / "agent.log", **env_extra)

    def kill_agent(self, sig: int = signal.SIGKILL) -> None:
        if self.agent is not None and self.agent.poll() is None:
            os.killpg(self.agent.pid, sig)
            self.agent.wait(30)
        self.agent = None

    def close(self) -> None:
        self.kill_agent(signal.SIGTERM)
        self.broker.kill()


def start_serve(s: Settings, delay_ms: float, journal: Path | None, log_path: Path,
                **env_extra: str) -> subprocess.Popen:
    """`serve` on the scripted model as a process of its own session, with `s`'s data dir, device and
    broker login (`env_extra`: more EDGE_AGENT_* overrides), its output appended to `log_path`."""
    env = dict(os.environ, **env_extra, EDGE_AGENT_DATA_DIR=str(s.data_dir), EDGE_AGENT_DEVICE_ID=s.device_id,
               EDGE_AGENT_MQTT__HOST=s.mqtt.host, EDGE_AGENT_MQTT__PORT=str(s.mqtt.port),
               EDGE_AGENT_MQTT__USERNAME=s.mqtt.username or "", EDGE_AGENT_MQTT__PASSWORD=s.mqtt.password or "",
               PYTHONPATH=str(PROJECT_ROOT))
    env.pop("NOTIFY_SOCKET", None)
    args = [sys.executable, "-m", "edge_agent.cli", "serve", "--log-format", "json",
            "--scripted-delay-ms", str(delay_ms)]
    if journal is not None:
        args += ["--exec-journal", str(journal)]
    with open(log_path, "ab") as fh:
        return subprocess.Popen(args, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)


async def wait_online(client: AgentClient, since: float, names: tuple[str, ...] = ("pi",)) -> None:
    """Until every agent in `names` has said online since `since` (its retained status)."""
    for name in names:
        await client.watch_status(name)
    deadline = time.monotonic() + AGENT_READY_TIMEOUT_S
    while not all(client.device_status.get(n, {}).get("state") == "online"
                  and client.device_status.get(n, {}).get("ts", 0) >= since for n in names):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{', '.join(names)} did not come online; see the agent logs in the bench directory")
        await asyncio.sleep(0.05)


async def _ask(client: AgentClient, question: str, timeout_s: float) -> tuple[float, str, float]:
    """(round trip ms, final event type, the harness's own wall ms from the answer's usage)."""
    request = AskRequest(request_id=new_request_id(), question=question)
    started = time.perf_counter()
    await client.send("pi", "ask", request, expiry_s=int(timeout_s))
    final = None
    async for event in client.events(request.request_id, timeout_s):
        final = event
    elapsed = (time.perf_counter() - started) * 1000
    harness_ms = float(getattr(final, "usage", {}).get("wall_ms", 0.0)) if final is not None else 0.0
    return elapsed, final.type if final else "none", harness_ms


async def roundtrip(rig: Rig, n: int, key: str = "roundtrip", **env_extra: str) -> dict:
    rig.start_agent(0.0, **env_extra)
    since = time.time()
    async with AgentClient(rig.settings("bench")) as client:
        await wait_online(client, since)
        for _ in range(WARMUP):
            await _ask(client, "What is the date today?", 30)
        results = [await _ask(client, "What is the date today?", 30) for _ in range(n)]
    rig.kill_agent(signal.SIGTERM)
    times = [ms for ms, _, _ in results]
    harness = [h for _, _, h in results]
    return {f"{key}_requests": n, f"{key}_answers": sum(kind == "answer" for _, kind, _ in results),
            f"{key}_p50_ms": round(percentile(times, 50), 2), f"{key}_p99_ms": round(percentile(times, 99), 2),
            f"{key}_max_ms": round(max(times), 2),
            # Inside the round trip: the harness's own wall time (planner, L2, tool, answer selection).
            f"{key}_harness_p50_ms": round(percentile(harness, 50), 2)}


def read_journal(path: Path) -> list[dict]:
    """The execution journal's entries (serve --exec-journal), each with its request's `base` id."""
    entries = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    for e in entries:
        e["base"] = re.sub(r"\.r\d+$", "", e["request_id"])  # reruns carry .rN
    return entries


def delivered_but_not_received(db_path: Path, received: set[str], prefix: str, sender: str = "bench") -> int:
    """Requests (ids starting with `prefix`) the agent's log marks delivered (broker PUBACK or the
    asker's ack) whose final event never reached the client. A pool request handed over to another
    member is done without a final event of this agent's: not counted."""
    if not db_path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(db_path)) as db:
        rows = db.execute("SELECT request_id FROM requests WHERE sender = ? AND state = 'done'"
                          " AND final_event IS NOT NULL"
                          " AND (delivered = 1 OR acked = 1) AND substr(request_id, 1, ?) = ?",
                          (sender, len(prefix), prefix)).fetchall()
    return sum(1 for (rid,) in rows if rid not in received)


def count_executions(entries: list[dict], answered_at: dict[str, float]) -> dict[str, int]:
    """Judge every execution the journal shows.

    A duplicate is an execution that started after the asker already had the request's answer,
    or while another execution of it was running in the same process: what idempotent request
    ids must prevent. An execution after an agent crash that lost the earlier run's result
    (no answer delivered yet) is a rerun, which durability requires.
    """
    duplicates = reruns = 0
    running: dict[tuple[str, int], int] = {}
    seen: set[str] = set()
    for e in sorted(entries, key=lambda e: e["ts"]):
        key = (e["base"], e["pid"])
        if e["event"] == "done":
            running[key] = max(0, running.get(key, 0) - 1)
            continue
        if running.get(key) or e["ts"] > answered_at.get(e["base"], float("inf")):
            duplicates += 1
        elif e["base"] in seen:
            reruns += 1
        running[key] = running.get(key, 0) + 1
        seen.add(e["base"])
    done = {e["base"] for e in entries if e["event"] == "done"}
    return {"duplicates_executed": duplicates, "reruns_after_crash": reruns, "executed": len(done)}


async def fault_run(rig: Rig, n: int) -> dict:
    journal = rig.root / "journal.jsonl"
    rig.start_agent(FAULT_DELAY_MS, journal, **FAULT_RUN_ENV)
    since = time.time()
    finals: dict[str, str] = {}
    answered_at: dict[str, float] = {}
    async with AgentClient(rig.settings("bench")) as client:
        await wait_online(client, since)

        async def one(rid: str) -> None:
            await client.send("pi", "ask", AskRequest(request_id=rid, question="What is the date today?"),
                              expiry_s=int(FAULT_TIMEOUT_S))
            async for event in client.events(rid, FAULT_TIMEOUT_S):
                if event.type in ("answer", "needs_confirmation", "error"):
                    finals[rid] = event.type
                    answered_at[f"bench.{rid}"] = time.time()

        tasks = []
        for i in range(n):
            fault = fault_at(n).get(i)
            if fault == "broker restart":
                await asyncio.to_thread(rig.broker.restart)  # SIGTERM: it saves its persistence file
            elif fault == "broker SIGKILL":
                # Whatever it had not saved (sessions, queued questions and answers) is gone.
                await asyncio.to_thread(rig.broker.kill)
                await asyncio.to_thread(rig.broker.start)
            elif fault == "agent SIGKILL":
                rig.kill_agent()  # SIGKILL mid-stream
                rig.start_agent(FAULT_DELAY_MS, journal, **FAULT_RUN_ENV)
            tasks.append(asyncio.create_task(one(f"{FAULT_ID_PREFIX}{i:04d}")))
            await asyncio.sleep(FAULT_PACE_S)
        results = await asyncio.gather(*tasks, return_exceptions=True)
    rig.kill_agent(signal.SIGTERM)
    counts = count_executions(read_journal(journal), answered_at)
    undelivered = delivered_but_not_received(rig.settings("pi").db_path, set(finals), FAULT_ID_PREFIX)
    return {
        "fault_requests": n,
        "requests_answered": sum(1 for t in finals.values() if t == "answer"),
        "requests_failed": sum(1 for t in finals.values() if t != "answer"),
        "requests_lost": n - len(finals),
        "duplicates_executed": counts["duplicates_executed"],
        "reruns_after_crash": counts["reruns_after_crash"],
        "executions_missing": n - counts["executed"],
        "answers_undelivered": undelivered,
        "client_errors": sum(1 for r in results if isinstance(r, BaseException)),
        "faults": ", ".join(f"{what} at request {i}" for i, what in sorted(fault_at(n).items())),
    }


def fault_at(n: int) -> dict[int, str]:
    """Which fault hits before which request of the fault run."""
    return {n // 4: "broker restart", n // 2: "broker SIGKILL", (3 * n) // 4: "agent SIGKILL"}


def run(args, settings: Settings) -> dict:
    out: dict = {"broker": "mosquitto on loopback (persistence on)", "model": "scripted, zero latency",
                 # Other work on the machine stretches loopback round trips: report it with them.
                 "cpu_count": os.cpu_count(), "load_avg_1m_start": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory(prefix="edge-agent-bench-mqtt-") as tmp:
        rig = Rig(Path(tmp))
        try:
            out.update(asyncio.run(roundtrip(rig, args.requests)))
            out["roundtrip_goal_p99_ms"] = GOAL_P99_MS
            # The same without the harness's trace rows, which it writes before returning the answer.
            out.update(asyncio.run(roundtrip(rig, args.requests, "untraced", EDGE_AGENT_HARNESS__TRACING="false")))
            out["load_avg_1m_after_roundtrip"] = round(os.getloadavg()[0], 2)
            if args.fault_requests:
                out.update(asyncio.run(fault_run(rig, args.fault_requests)))
        finally:
            rig.close()
    return out

"""Two agents sharing one queue (an agent pool) on a real Mosquitto: spread, latency, and a SIGKILL.

Agents `pi` and `pi2` are paired into the pool `home` and run `serve` on a zero-latency scripted
model; the client `bench` sends its questions to the pool, a steady stream of them. Three runs:
one agent alone under a load one agent cannot keep up with (p99 ask->answer), both agents under
the same load (and how it spreads), and a longer run at a gentler pace in which `pi` is SIGKILLed
a quarter of the way through while it is executing a request, and restarted a second later (as
systemd would). In that run every request must end in exactly one final event and one execution:
executions are counted from the agents' own journals, and an execution is a duplicate if it starts
while another execution of the same request is still running (on either board) or after the asker
had its answer.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

from edge_agent.config import MqttSettings, Settings
from edge_agent.eval.bench_mqtt import delivered_but_not_received, read_journal, start_serve
from edge_agent.eval.bench_mqtt import wait_online as wait_online_since
from edge_agent.net.broker import LocalBroker, start_local_broker
from edge_agent.net.events import AskRequest
from edge_agent.net.pairing import PairingPaths, add_member, read_password
from edge_agent.net.rpc import AgentClient
from edge_agent.ops.metrics import percentile

POOL = "home"
AGENTS = ("pi", "pi2")
CLIENT = "bench"
PREFIX = "edge/v1"
REQUESTS = 200  # in each load run (one agent, two agents)
LOAD_PACE_S = 0.004  # one request every 4 ms: more than one agent answers in that time
FAULT_REQUESTS = 400
FAULT_PACE_S = 0.025  # 10 s of requests: the killed agent is back for the last part
RESTART_AFTER_S = 1.0  # systemd's RestartSec in deploy's unit is of this order
MID_REQUEST_WAIT_S = 5.0  # how long the kill waits for `pi` to be inside an execution
DELAY_MS = 2.0  # scripted latency of one generation
TIMEOUT_S = 120.0  # how long a run waits for its last answers
STOP_WAIT_S = 40.0  # a SIGTERMed agent exits within its ops.stop_limit_s (25 s) at the latest
POOL_SETTLE_S = 2.5  # a member's pool connection and sweep start a moment after its status says online
# One client sending a stream of questions: a durability and spread test, not a flood test, so the
# per-asker and queue bounds are lifted (bench abuse tests the bounds).
AGENT_ENV = {"EDGE_AGENT_MQTT__PER_ASKER_LIMIT": "1000", "EDGE_AGENT_MQTT__QUEUE_LIMIT": "1000"}


def add_arguments(parser) -> None:
    parser.add_argument("--requests", type=int, default=REQUESTS, help="requests in each load run")
    parser.add_argument("--fault-requests", type=int, default=FAULT_REQUESTS, help="requests in the kill run")


class PoolRig:
    """A broker, the pool's agents and the client, in one temporary directory."""

    def __init__(self, root: Path):
        self.root = root
        self.pairing = PairingPaths(root / "pairing")
        for name in AGENTS:
            add_member(self.pairing, name, "agent", prefix=PREFIX, host="127.0.0.1", port=0, pool=POOL)
        add_member(self.pairing, CLIENT, "client", prefix=PREFIX, host="127.0.0.1", port=0)
        self.broker: LocalBroker = start_local_broker(root / "broker", password_file=self.pairing.password_file,
                                                      acl_file=self.pairing.acl_file)
        self.agents: dict[str, subprocess.Popen] = {}
        self.stops_cut_short: list[str] = []
        """Agents whose SIGTERM stop outlasted their ops.stop_limit_s (exit status 1, stacks in their log)."""

    def settings(self, name: str) -> Settings:
        data = self.root / f"data-{name}"
        data.mkdir(exist_ok=True)
        mqtt = MqttSettings(host=self.broker.host, port=self.broker.port, username=name,
                            password=read_password(self.pairing, name), prefix=PREFIX,
                            pool=POOL if name in AGENTS else None)
        return Settings(data_dir=data, device_id=name if name in AGENTS else "pi", mqtt=mqtt)

    def journal(self, name: str) -> Path:
        return self.root / f"journal-{name}.jsonl"

    def start_agent(self, name: str) -> None:
        self.agents[name] = start_serve(self.settings(name), DELAY_MS, self.journal(name),
                                        self.root / f"agent-{name}.log", **AGENT_ENV, EDGE_AGENT_MQTT__POOL=POOL)

    def stop_agent(self, name: str, sig: int = signal.SIGTERM) -> None:
        proc = self.agents.pop(name, None)
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, sig)
            try:
                proc.wait(STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                tail = (self.root / f"agent-{name}.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"agent {name} did not stop within {STOP_WAIT_S:.0f} s; its log ends:\n{tail}")
            if sig == signal.SIGTERM and proc.returncode == 1:
                self.stops_cut_short.append(name)

    def close(self) -> None:
        for name in list(self.agents):
            self.stop_agent(name)
        self.broker.kill()


async def wait_online(client: AgentClient, names: list[str], since: float) -> None:
    """Until the agents say online (bench_mqtt.wait_online), then a moment for their sweeps."""
    await wait_online_since(client, since, tuple(names))
    await asyncio.sleep(POOL_SETTLE_S)


def judge_executions(entries: list[dict], answered_at: dict[str, float], killed: dict[int, float]) -> dict[str, int]:
    """Duplicates (an execution that starts while another of the same request runs, on any board,
    or after the asker had the answer), reruns (after a killed board's execution) and requests
    executed to the end. `killed` maps a SIGKILLed process to when it died: its open executions end then.
    `entries` are the journal lines of the requests judged (those in `answered_at` and any lost)."""
    runs: dict[str, list[list[float]]] = {}
    open_runs: dict[tuple[str, int], list[float]] = {}
    for e in sorted(entries, key=lambda e: e["ts"]):
        key = (e["base"], e["pid"])
        if e["event"] == "start":
            run = [e["ts"], killed.get(e["pid"], float("inf"))]
            runs.setdefault(e["base"], []).append(run)
            open_runs[key] = run
        elif key in open_runs:
            open_runs.pop(key)[1] = e["ts"]
    duplicates = reruns = 0
    for base, spans in runs.items():
        for i, (start, _end) in enumerate(spans):
            earlier = spans[:i]
            if start > answered_at.get(base, float("inf")) or any(s <= start < end for s, end in earlier):
                duplicates += 1
            elif earlier:
                reruns += 1
    done = {e["base"] for e in entries if e["event"] == "done"}
    return {"duplicates_executed": duplicates, "reruns_after_kill": reruns, "executed": len(done)}


def answered_by(db_path: Path, prefix: str) -> int:
    """Requests (ids starting with `prefix`) this board answered: done with a final event of its own."""
    if not db_path.exists():
        return 0
    with contextlib.closing(sqlite3.connect(db_path)) as db:
        (n,) = db.execute("SELECT count(*) FROM requests WHERE state = 'done' AND final_event IS NOT NULL"
                          " AND substr(request_id, 1, ?) = ?", (len(prefix), prefix)).fetchone()
    return int(n)


def executing(journal: Path, pid: int) -> bool:
    """True if the last journal line of process `pid` is the start of an execution."""
    mine = [e for e in read_journal(journal) if e["pid"] == pid]
    return bool(mine) and mine[-1]["event"] == "start"


async def kill_mid_request(rig: PoolRig, name: str, killed: dict[int, float]) -> bool:
    """SIGKILL `name` while it executes a request (or after MID_REQUEST_WAIT_S), restart it after
    RESTART_AFTER_S; True if it was inside an execution when it died."""
    pid = rig.agents[name].pid
    deadline = time.monotonic() + MID_REQUEST_WAIT_S
    inside = False
    while time.monotonic() < deadline and not (inside := executing(rig.journal(name), pid)):
        await asyncio.sleep(0.001)
    killed[pid] = time.time()
    rig.stop_agent(name, signal.SIGKILL)
    await asyncio.sleep(RESTART_AFTER_S)
    rig.start_agent(name)
    return inside


async def load_run(rig: PoolRig, agents: list[str], prefix: str, n: int, pace_s: float, *,
                   kill: bool = False) -> dict:
    """n requests to the pool, one every pace_s; with kill, `pi` dies mid-request at n/4 (kill_mid_request)."""
    since = time.time()
    for name in agents:
        rig.start_agent(name)
    finals: dict[str, str] = {}
    answered_at: dict[str, float] = {}
    latencies: list[float] = []
    killed: dict[int, float] = {}
    kill_task: asyncio.Task | None = None
    async with AgentClient(rig.settings(CLIENT)) as client:
        await wait_online(client, agents, since)

        async def one(rid: str) -> None:
            started = time.perf_counter()
            await client.send(POOL, "ask", AskRequest(request_id=rid, question="What is the date today?"),
                              expiry_s=int(TIMEOUT_S))
            async for event in client.events(rid, TIMEOUT_S):
                if event.type in ("answer", "needs_confirmation", "error"):
                    finals[rid] = event.type
                    answered_at[f"{CLIENT}.{rid}"] = time.time()
                    latencies.append((time.perf_counter() - started) * 1000)

        tasks = []
        for i in range(n):
            if kill and i == n // 4:
                kill_task = asyncio.create_task(kill_mid_request(rig, "pi", killed))
            tasks.append(asyncio.create_task(one(f"{prefix}{i:04d}")))
            await asyncio.sleep(pace_s)
        results = await asyncio.gather(*tasks, return_exceptions=True)
        killed_inside = await kill_task if kill_task is not None else None
    for name in agents:
        rig.stop_agent(name)
    received = set(finals)
    served = {name: answered_by(rig.settings(name).db_path, prefix) for name in AGENTS}
    total = sum(served.values()) or 1
    entries = [e for a in AGENTS for e in read_journal(rig.journal(a)) if e["base"].startswith(f"{CLIENT}.{prefix}")]
    counts = judge_executions(entries, answered_at, killed)
    on_killed = {e["base"] for e in entries if e["pid"] in killed and e["event"] == "start"}
    done_on_killed = {e["base"] for e in entries if e["pid"] in killed and e["event"] == "done"}
    return {
        "requests": n,
        "requests_answered": sum(1 for t in finals.values() if t == "answer"),
        "requests_failed": sum(1 for t in finals.values() if t != "answer"),
        "requests_lost": n - len(finals),
        "client_errors": sum(1 for r in results if isinstance(r, BaseException)),
        "served": served,
        "served_share": {name: round(count / total, 3) for name, count in served.items()},
        "p50_ms": round(percentile(latencies, 50), 1) if latencies else None,
        "p99_ms": round(percentile(latencies, 99), 1) if latencies else None,
        "answers_undelivered": sum(delivered_but_not_received(rig.settings(a).db_path, received, prefix, CLIENT)
                                   for a in AGENTS),
        **counts,
        "executions_missing": n - counts["executed"],
        "stops_cut_short": list(rig.stops_cut_short),
        **({"killed_mid_request": killed_inside,
            # Started on the killed board, never finished there: answered by a takeover.
            "taken_over": len(on_killed - done_on_killed)} if kill else {}),
    }


async def _all_runs(rig: PoolRig, n: int, n_fault: int) -> dict:
    one = await load_run(rig, ["pi"], "one-", n, LOAD_PACE_S)
    two = await load_run(rig, list(AGENTS), "two-", n, LOAD_PACE_S)
    fault = await load_run(rig, list(AGENTS), "fault-", n_fault, FAULT_PACE_S, kill=True)
    return {
        "one_agent_p99_ms": one["p99_ms"], "one_agent_p50_ms": one["p50_ms"],
        "two_agents_p99_ms": two["p99_ms"], "two_agents_p50_ms": two["p50_ms"],
        "two_agents_served_share": two["served_share"],
        "load_pace_ms": LOAD_PACE_S * 1000, "fault_pace_ms": FAULT_PACE_S * 1000,
        "fault": f"SIGKILL of pi inside an execution from request {n_fault // 4} on, restarted {RESTART_AFTER_S:.0f} s later",
        "killed_mid_request": fault["killed_mid_request"], "taken_over": fault["taken_over"],
        "requests_lost": fault["requests_lost"] + one["requests_lost"] + two["requests_lost"],
        "duplicates_executed": fault["duplicates_executed"] + one["duplicates_executed"] + two["duplicates_executed"],
        "answers_undelivered": fault["answers_undelivered"] + one["answers_undelivered"] + two["answers_undelivered"],
        "served_share": fault["served_share"],
        "fault_run": fault, "one_agent_run": one, "two_agents_run": two,
    }


def run(args, settings: Settings) -> dict:
    out: dict = {"broker": "mosquitto on loopback", "model": f"scripted, {DELAY_MS} ms a generation",
                 "pool": POOL, "agents": list(AGENTS),
                 "cpu_count": os.cpu_count(), "load_avg_1m_start": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory(prefix="edge-agent-bench-pool-") as tmp:
        rig = PoolRig(Path(tmp))
        try:
            out.update(asyncio.run(_all_runs(rig, args.requests, args.fault_requests)))
        finally:
            rig.close()
    return out

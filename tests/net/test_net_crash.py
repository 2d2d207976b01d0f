"""The agent SIGKILLed mid-request and restarted answers the request (and nothing runs twice); a
clean stop that hangs is cut short with the stacks in the log."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import time

from netkit import kill_tree, spawn_cli

from edge_agent.net.events import AskRequest
from edge_agent.net.rpc import AgentClient
from edge_agent.net.service import STOP_GRACE_S

# The scripted model's latency a generation. "what day is it" costs one generation (the planner's;
# the date is rendered), so the kill lands inside it: it must outlast a loaded machine's lag
# between the journal's "start" and the kill.
GENERATION_MS = 3000


async def _wait_state(client: AgentClient, device: str, state: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while client.device_status.get(device, {}).get("state") != state:
        assert time.monotonic() < deadline, f"{device} never became {state}: {client.device_status.get(device)}"
        await asyncio.sleep(0.05)


async def _journaled(journal, event: str, request_id: str, timeout_s: float = 30) -> None:
    """Waits until the journal holds (event, request_id); only whole lines are read."""
    deadline = time.monotonic() + timeout_s
    while True:
        text = journal.read_text() if journal.exists() else ""
        whole = text[: text.rfind("\n") + 1].splitlines()
        if (event, request_id) in [(e["event"], e["request_id"]) for e in map(json.loads, whole)]:
            return
        assert time.monotonic() < deadline, f"no {event} of {request_id} in the journal"
        await asyncio.sleep(0.05)


async def test_agent_killed_mid_request_and_restarted_answers_it(settings_for, tmp_path):
    settings = settings_for("pi")
    journal = tmp_path / "journal.jsonl"
    args = ["serve", "--scripted-delay-ms", str(GENERATION_MS), "--exec-journal", str(journal), "--log-format", "text"]
    agent = spawn_cli(args, settings, tmp_path / "agent-1.log")
    try:
        async with AgentClient(settings_for("phone")) as phone:
            await phone.watch_status("pi")
            await _wait_state(phone, "pi", "online")
            await phone.send("pi", "ask", AskRequest(request_id="crash-1", question="what day is it"), expiry_s=120)
            stream = phone.events("crash-1", 60)
            before = [await anext(stream)]
            assert [e.type for e in before] == ["accepted"]
            await _journaled(journal, "start", "phone.crash-1")  # running: its planner is generating
            kill_tree(agent)
            await _wait_state(phone, "pi", "offline", 10)  # the Last Will, published by the broker
            # Sent while the agent is down: kept in its persistent session.
            await phone.send("pi", "ask", AskRequest(request_id="crash-2", question="and now?"), expiry_s=120)
            agent = spawn_cli(args, settings, tmp_path / "agent-2.log")
            after = [e async for e in stream]
            second = [e async for e in phone.events("crash-2", 60)]
    finally:
        kill_tree(agent)
    assert after[-1].type == "answer" and after[-1].exit_kind == "complete", after
    seqs = [e.seq for e in before + after]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)  # never reused across the crash
    # "queued" is sent only when crash-2 arrives while the recovered crash-1 still runs: on a loaded
    # machine the recovery can finish first (seen in a full run). The order itself is the journal's.
    assert [e.type for e in second] in (["accepted", "queued", "pill", "answer"], ["accepted", "pill", "answer"])
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    events = [(entry["event"], entry["request_id"]) for entry in lines]
    assert events.index(("done", "phone.crash-1.r2")) < events.index(("start", "phone.crash-2"))  # waited behind it
    done = [entry["request_id"] for entry in lines if entry["event"] == "done"]
    started = [entry["request_id"] for entry in lines if entry["event"] == "start"]
    assert started == ["phone.crash-1", "phone.crash-1.r2", "phone.crash-2"]
    assert done == ["phone.crash-1.r2", "phone.crash-2"]


async def test_a_stop_that_outlasts_its_limit_is_cut_short_with_the_stacks(settings_for, tmp_path):
    """SIGTERM while a request runs: the grace would let it finish (STOP_GRACE_S), but a stop limit
    of 1 s ends the process first, exit status 1, every thread's stack in its log."""
    settings = settings_for("pi")
    journal, log_path = tmp_path / "journal.jsonl", tmp_path / "agent.log"
    args = ["serve", "--scripted-delay-ms", "20000", "--exec-journal", str(journal), "--log-format", "text"]
    agent = spawn_cli(args, settings, log_path, EDGE_AGENT_OPS__STOP_LIMIT_S="1")
    try:
        async with AgentClient(settings_for("phone")) as phone:
            await phone.watch_status("pi")
            await _wait_state(phone, "pi", "online")
            await phone.send("pi", "ask", AskRequest(request_id="stop-1", question="what day is it"), expiry_s=120)
            deadline = time.monotonic() + 30
            while not (journal.exists() and '"start"' in journal.read_text()):  # running: a 20 s generation
                assert time.monotonic() < deadline, log_path.read_text()
                await asyncio.sleep(0.05)
            os.killpg(agent.pid, signal.SIGTERM)
            t0 = time.monotonic()
            rc = await asyncio.to_thread(agent.wait, 30)
            took = time.monotonic() - t0
    finally:
        kill_tree(agent)
    text = log_path.read_text()
    assert rc == 1 and took < STOP_GRACE_S, (rc, took, text[-2000:])
    assert "stopping (at most 1 s)" in text and "most recent call first" in text, text[-2000:]

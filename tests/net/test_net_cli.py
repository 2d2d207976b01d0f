"""`edge-agent ask` / `confirm` (no --local) as subprocesses against a served agent."""
from __future__ import annotations

import asyncio
import json
import sys

from netkit import FakeAsker, settings_env

from edge_agent.store import requests as rlog


async def _cli(settings, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "edge_agent.cli", *args,
                                                env=settings_env(settings), stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode()


async def test_ask_prints_pills_then_the_answer(settings_for, start_agent):
    await start_agent(FakeAsker(pills=("Date", "Searching files")))
    code, out, err = await _cli(settings_for("phone"), "ask", "What day is it?")
    assert code == 0, err
    assert out.strip() == "answer to: What day is it?"
    assert err.index("[accepted by pi]") < err.index("[Date]") < err.index("[Searching files]")


async def test_ask_json_prints_the_raw_events_and_acks_the_answer(settings_for, start_agent):
    service = await start_agent(FakeAsker())
    code, out, err = await _cli(settings_for("phone"), "ask", "--json", "What day is it?")
    events = [json.loads(line) for line in out.splitlines()]
    assert code == 0, err
    assert [e["type"] for e in events] == ["accepted", "pill", "answer"]
    assert len({e["request_id"] for e in events}) == 1 and [e["seq"] for e in events] == [0, 1, 2]
    for _ in range(50):  # the ack goes out just before the CLI disconnects
        row = await rlog.get_request(service.conn, "phone", events[0]["request_id"])
        if row.acked:
            break
        await asyncio.sleep(0.05)
    assert row.acked  # the agent will not send this answer again on its reconnects


async def test_an_error_event_exits_non_zero(settings_for, start_agent):
    await start_agent(FakeAsker(), is_low_memory=lambda: True)
    code, out, err = await _cli(settings_for("phone"), "ask", "anything")
    assert code == 1 and out == ""
    assert "busy: busy: low memory" in err and "send it again in 30 s" in err


async def test_confirmation_prompt_then_confirm(settings_for, start_agent):
    asker = FakeAsker(pending=True, pills=())
    await start_agent(asker)
    phone = settings_for("phone")
    code, out, err = await _cli(phone, "ask", "remember the wifi password is hunter2")
    assert code == 0, err
    assert "Pending: Add to notebook" in out and "To confirm: edge-agent confirm act-1" in out
    code, out, err = await _cli(phone, "confirm", "act-1")
    assert code == 0, err
    assert out.strip() == "done: act-1" and asker.confirms == ["act-1"]


async def test_unpaired_unknown_device_and_refused_asker_are_clear(settings_for, start_agent):
    await start_agent(FakeAsker())
    code, _, err = await _cli(settings_for("phone", mqtt={"username": None}), "ask", "hi")
    assert code == 2 and "pair add" in err
    code, _, err = await _cli(settings_for("phone"), "ask", "--device", "nosuchdevice", "hi")
    assert code == 2 and "no agent named 'nosuchdevice'" in err
    # A device's credentials may not ask (the ACL gives devices no ask topics).
    code, _, err = await _cli(settings_for("laptop", device_id="pi"), "ask", "hi")
    assert code == 2 and "refused" in err

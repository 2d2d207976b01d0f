"""Interop: the exchange the README shows, with the stock mosquitto_pub / mosquitto_sub clients."""
from __future__ import annotations

import asyncio
import json

import pytest
from netkit import FakeAsker


async def _subscriber(settings, topic: str, count: int, version: str) -> asyncio.subprocess.Process:
    m = settings.mqtt
    proc = await asyncio.create_subprocess_exec(
        "stdbuf", "-oL", "mosquitto_sub", "-V", version, "-h", m.host, "-p", str(m.port),
        "-u", "phone", "-P", "phone-secret", "-t", topic, "-q", "1", "-v", "-d", "-C", str(count), "-W", "20",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    while True:  # -d prints the broker's SUBACK: only then may the question go out
        line = await asyncio.wait_for(proc.stdout.readline(), 10)
        assert line, "mosquitto_sub exited before subscribing"
        if b"received SUBACK" in line:
            return proc


async def _events(proc: asyncio.subprocess.Process) -> list[tuple[str, dict]]:
    out, _ = await asyncio.wait_for(proc.communicate(), 25)
    events = []
    for line in out.decode().splitlines():
        if line.startswith("edge/v1/reply/"):
            topic, _, payload = line.partition(" ")
            events.append((topic, json.loads(payload)))
    return events


@pytest.mark.parametrize("version", ["5", "311"])
async def test_question_by_mosquitto_pub_answer_read_by_mosquitto_sub(settings_for, start_agent, version):
    await start_agent(FakeAsker())
    phone = settings_for("phone")
    m = phone.mqtt
    sub = await _subscriber(phone, "edge/v1/reply/phone/#", 3, version)
    if version == "5":  # MQTT v5: ResponseTopic and CorrelationData as properties
        route = ["-D", "publish", "response-topic", "edge/v1/reply/phone/cli-1",
                 "-D", "publish", "correlation-data", "cli-1"]
        body = {"request_id": "cli-1", "question": "What day is it?"}
    else:  # MQTT 3.1.1 apps have no properties: the reply topic travels in the payload
        route = []
        body = {"request_id": "cli-1", "question": "What day is it?", "reply_to": "edge/v1/reply/phone/cli-1"}
    pub = await asyncio.create_subprocess_exec(
        "mosquitto_pub", "-V", version, "-h", m.host, "-p", str(m.port), "-u", "phone", "-P", "phone-secret",
        "-t", "edge/v1/pi/ask/phone", "-q", "1", *route, "-m", json.dumps(body),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(pub.communicate(), 10)
    assert pub.returncode == 0, out
    events = await _events(sub)
    assert [e["type"] for _, e in events] == ["accepted", "pill", "answer"]
    assert {t for t, _ in events} == {"edge/v1/reply/phone/cli-1"}
    assert all(e["request_id"] == "cli-1" for _, e in events)
    assert events[-1][1]["text"] == "answer to: What day is it?"

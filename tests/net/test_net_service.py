"""The service's request handling against a real broker, with a small fake Asker."""
from __future__ import annotations

import asyncio
import json

from netkit import FakeAsker, collect

from edge_agent.net.bridge import MqttBridge
from edge_agent.net.events import AskRequest
from edge_agent.net.mqtt_types import ConnectOptions
from edge_agent.net.rpc import AgentClient
from edge_agent.ops.memguard import LOW_MEMORY_MESSAGE


async def test_two_clients_get_only_their_own_events_and_the_second_is_queued(settings_for, start_agent):
    asker = FakeAsker(delay_s=0.4)
    await start_agent(asker)
    async with AgentClient(settings_for("phone")) as phone, AgentClient(settings_for("alice")) as alice:
        first = asyncio.create_task(collect(phone, "pi", "phone's question", request_id="same-id"))
        await asyncio.wait_for(asker.started.wait(), 5)
        # The same request id from another sender is another request.
        second = await collect(alice, "pi", "alice's question", request_id="same-id")
        first = await first
    assert [e.type for e in first] == ["accepted", "pill", "answer"]
    assert first[-1].text == "answer to: phone's question"
    assert [e.type for e in second] == ["accepted", "queued", "pill", "answer"]
    assert second[1].position == 1
    assert second[-1].text == "answer to: alice's question"
    assert asker.calls == ["phone.same-id", "alice.same-id"] and asker.devices == [None, None]


async def test_files_device_scopes_the_question(settings_for, start_agent):
    asker = FakeAsker()
    await start_agent(asker)
    async with AgentClient(settings_for("phone")) as phone:
        await phone.send("pi", "ask", AskRequest(request_id="scoped", question="my resume", files_device="laptop"),
                         expiry_s=60)
        events = [e async for e in phone.events("scoped", 10)]
    assert events[-1].type == "answer" and asker.devices == ["laptop"]


async def test_the_same_request_twice_runs_once(settings_for, start_agent):
    asker = FakeAsker(delay_s=0.2)
    await start_agent(asker)
    async with AgentClient(settings_for("phone")) as phone:
        request = AskRequest(request_id="dup-1", question="once please")
        # Delivered twice while the first is still running ...
        await phone.send("pi", "ask", request, expiry_s=60)
        await phone._publish("dup-1", phone._pending["dup-1"])
        events = [e async for e in phone.events("dup-1", 10)]
        # ... and again after it was answered: the stored answer comes back.
        await phone.send("pi", "ask", request, expiry_s=60)
        again = [e async for e in phone.events("dup-1", 10)]
    assert asker.calls == ["phone.dup-1"]
    assert [e.type for e in events] == ["accepted", "pill", "answer"]
    assert [e.type for e in again] == ["answer"]
    assert again[0] == events[-1]  # byte for byte the stored event, same seq


async def test_an_answer_the_log_could_not_store_is_sent_again_not_run_again(settings_for, start_agent, monkeypatch):
    # The request log refuses the final event once (a locked or full database): the answer goes
    # out without a stored copy, and a duplicate of the request gets that answer, not a second run.
    import sqlite3

    from edge_agent.store import requests as rlog

    real_finish = rlog.finish_request
    refused: list[str] = []

    async def refuse_once(conn, sender, request_id, *args, **kwargs):
        if not refused:
            refused.append(request_id)
            raise sqlite3.OperationalError("database is locked")
        return await real_finish(conn, sender, request_id, *args, **kwargs)

    monkeypatch.setattr(rlog, "finish_request", refuse_once)
    asker = FakeAsker()
    await start_agent(asker)
    async with AgentClient(settings_for("phone")) as phone:
        request = AskRequest(request_id="unstored-1", question="once please")
        await phone.send("pi", "ask", request, expiry_s=60)
        events = [e async for e in phone.events("unstored-1", 10)]
        await phone.send("pi", "ask", request, expiry_s=60)
        again = [e async for e in phone.events("unstored-1", 10)]
    assert refused == ["unstored-1"] and asker.calls == ["phone.unstored-1"]
    assert events[-1].type == "answer" and [e.type for e in again] == ["answer"]
    assert again[0] == events[-1]


async def test_confirmation_round_trip(settings_for, start_agent):
    asker = FakeAsker(pending=True, pills=())
    await start_agent(asker)
    async with AgentClient(settings_for("phone")) as phone:
        events = await collect(phone, "pi", "remember that the boiler code is 4711")
        prompt = events[-1]
        assert prompt.type == "needs_confirmation" and prompt.action_id == "act-1"
        assert prompt.confirm_topic == "edge/v1/pi/confirm/phone"
        assert "boiler code" in prompt.preview
        done = await collect(phone, "pi", prompt.action_id, kind="confirm")
    assert done[-1].type == "answer" and done[-1].text == "done: act-1"
    assert asker.confirms == ["act-1"]


async def test_low_memory_refuses_new_questions(settings_for, start_agent):
    asker = FakeAsker()
    await start_agent(asker, is_low_memory=lambda: True)
    async with AgentClient(settings_for("phone")) as phone:
        events = await collect(phone, "pi", "anything")
    assert [e.type for e in events] == ["accepted", "error"]
    assert events[-1].code == "busy" and events[-1].message == LOW_MEMORY_MESSAGE
    assert asker.calls == []


async def test_broker_restarted_mid_request_is_answered_after_reconnection(settings_for, start_agent, broker):
    asker = FakeAsker(delay_s=1.0)
    service = await start_agent(asker)
    async with AgentClient(settings_for("phone")) as phone:
        await phone.send("pi", "ask", AskRequest(request_id="br-1", question="survive a broker restart"),
                         expiry_s=60)
        stream = phone.events("br-1", 20)
        assert (await anext(stream)).type == "accepted"
        await asyncio.wait_for(asker.started.wait(), 5)
        await asyncio.to_thread(broker.restart)  # SIGTERM (persistence saved) and start again
        rest = [e async for e in stream]
    assert rest[-1].type == "answer" and rest[-1].text == "answer to: survive a broker restart"
    assert asker.calls == ["phone.br-1"]
    assert service.bridge.generation >= 2  # it really reconnected


async def test_status_is_retained_online_then_offline_on_clean_stop(settings_for, start_agent):
    service = await start_agent(FakeAsker())
    watcher = MqttBridge(ConnectOptions("127.0.0.1", settings_for("phone").mqtt.port, "watch", "phone",
                                        "phone-secret", clean_start=True))
    await watcher.start()
    try:
        await watcher.subscribe("edge/v1/pi/status")
        msg = await watcher.next_message(5)
        status = json.loads(msg.payload)
        assert msg.retain and status["state"] == "online" and status["device"] == "pi"
        for key in ("rss_mb", "mem_available_mb", "queue_depth", "latency_p50_ms"):
            assert key in status
        service.stop()
        msg = await watcher.next_message(15)
        assert json.loads(msg.payload)["state"] == "offline"
    finally:
        await watcher.close()

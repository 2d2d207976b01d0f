"""Issue 10, tried as an attacker against a real Mosquitto: each test is one attempt that must fail."""
from __future__ import annotations

import asyncio
import json

import pytest
from netkit import FakeAsker, collect

from edge_agent.net.bridge import MqttBridge
from edge_agent.net.events import REPLY_EVENT, AskRequest
from edge_agent.net.mqtt_types import ConnectOptions
from edge_agent.net.payload import PayloadError, parse_json
from edge_agent.net.presence import offline_will
from edge_agent.net.remote_files import MAX_REPLY_BYTES, SEARCH_LIMIT
from edge_agent.net.rpc import AgentClient
from edge_agent.net.topics import Topics
from edge_agent.ops.status import status_payload
from edge_agent.store import requests as rlog
from edge_agent.store.db import connect

T = Topics("edge/v1")
NOT_AUTHORIZED = 135
NESTED = b"[" * 4500 + b"]" * 4500  # 9 KB of [[[...]]]


async def _raw(settings, name: str, client_id: str, **kw) -> MqttBridge:
    bridge = MqttBridge(ConnectOptions("127.0.0.1", settings.mqtt.port, client_id, name, f"{name}-secret",
                                       **{"clean_start": True, "fail_fast": True, **kw}))
    return await bridge.start()


async def _finals(bridge: MqttBridge, want: int, timeout_s: float = 30) -> dict[str, object]:
    """Final events by request id, from a raw subscriber, until `want` of them came."""
    finals: dict[str, object] = {}
    while len(finals) < want:
        event = REPLY_EVENT.validate_json((await bridge.next_message(timeout_s)).payload)
        if event.type in ("answer", "needs_confirmation", "error"):
            finals[event.request_id] = event
    return finals


async def _log_rows(settings, sender: str) -> list[rlog.RequestRow]:
    conn = await connect(settings.db_path)
    try:
        rows = [await rlog.get_request(conn, sender, r["request_id"])
                for r in await (await conn.execute("SELECT request_id FROM requests WHERE sender = ?", (sender,))).fetchall()]
    finally:
        await conn.close()
    return rows


async def _times(settings) -> dict[tuple[str, str], tuple[float, float]]:
    """(sender, request id) -> (accepted at, started at) from the request log."""
    conn = await connect(settings.db_path)
    try:
        rows = await (await conn.execute("SELECT sender, request_id, created_at, started_at FROM requests")).fetchall()
    finally:
        await conn.close()
    return {(r[0], r[1]): (r[2], r[3] or 0.0) for r in rows}


async def test_another_client_cannot_confirm_my_action_and_guessing_is_rate_limited(settings_for, start_agent):
    asker = FakeAsker(pending=True, pills=())
    settings = settings_for("pi")
    await start_agent(asker, settings)
    async with AgentClient(settings_for("phone")) as phone, AgentClient(settings_for("alice")) as eve:
        prompt = (await collect(phone, "pi", "remember that the boiler code is 4711"))[-1]
        assert prompt.type == "needs_confirmation"
        stolen = await collect(eve, "pi", prompt.action_id, kind="confirm")
        assert stolen[-1].type == "error" and stolen[-1].code == "not_found"
        # Brute force: every wrong guess fails, and past the allowance nothing is even looked up.
        codes = [(await collect(eve, "pi", f"act-{i}", kind="confirm"))[-1].code for i in range(8)]
        assert codes[:4] == ["not_found"] * 4 and set(codes[4:]) == {"rate_limited"}
        limited = (await collect(eve, "pi", prompt.action_id, kind="confirm"))[-1]
        assert limited.code == "rate_limited" and limited.retry_after_s > 0
        mine = await collect(phone, "pi", prompt.action_id, kind="confirm")
    assert mine[-1].type == "answer" and asker.confirms == [prompt.action_id]
    assert await _log_rows(settings, "alice") == []  # refused confirms write nothing


def test_real_action_ids_have_128_bits():
    from edge_agent.harness.runner import ACTION_ID_BYTES

    assert ACTION_ID_BYTES * 8 >= 128


def test_nested_json_is_a_bad_request_not_a_recursion_error():
    with pytest.raises(PayloadError, match="nests 4500 levels"):
        parse_json(NESTED, max_bytes=16 * 1024)
    assert parse_json(b'{"a": [[{"b": "[[[[[[[[[[[[[[[[[[[[[[["}]]}', max_bytes=1024) == {
        "a": [[{"b": "[" * 23}]]}


def test_a_five_thousand_digit_number_is_a_bad_request():
    # Python refuses to turn more than 4,300 digits into an int with a plain ValueError.
    with pytest.raises(PayloadError, match="digits") as err:
        parse_json(b'{"question": "hi", "id": ' + b"9" * 5000 + b"}", max_bytes=16 * 1024)
    assert err.value.code == "bad_request"


async def test_nested_json_over_the_broker_gets_bad_request(settings_for, start_agent):
    settings = settings_for("pi")
    asker = FakeAsker()
    await start_agent(asker, settings)
    raw = await _raw(settings, "phone", "phone-nested")
    try:
        await raw.subscribe("edge/v1/reply/phone/#")
        await raw.publish(T.ask("pi", "phone"), NESTED, response_topic="edge/v1/reply/phone/n1", correlation=b"n1")
        event = REPLY_EVENT.validate_json((await raw.next_message(5)).payload)
    finally:
        await raw.close()
    assert event.type == "error" and event.code == "bad_request" and "nests" in event.message
    async with AgentClient(settings_for("phone")) as phone:
        assert (await collect(phone, "pi", "still there?"))[-1].type == "answer"


async def test_a_flood_from_one_asker_is_bounded_and_another_asker_is_served(settings_for, start_agent):
    settings = settings_for("pi")
    asker = FakeAsker(delay_s=0.1, pills=())
    await start_agent(asker, settings)
    limit = settings.mqtt.per_asker_limit
    flood = await _raw(settings, "alice", "alice-flood")
    try:
        await flood.subscribe("edge/v1/reply/alice/#")
        sent = [flood.publish(T.ask("pi", "alice"), AskRequest(request_id=f"f{i:03d}", question=f"q{i}").model_dump_json(),
                              response_topic=f"edge/v1/reply/alice/f{i:03d}") for i in range(300)]
        await asyncio.gather(*sent)
        async with AgentClient(settings_for("phone")) as phone:
            mine = await collect(phone, "pi", "my turn?", timeout_s=10)
        finals = await _finals(flood, 300)
    finally:
        await flood.close()
    assert mine[-1].type == "answer"
    busy = {rid for rid, e in finals.items() if e.type == "error"}
    served = [c for c in asker.calls if c.startswith("alice.")]
    assert all(finals[rid].code == "busy" and finals[rid].retry_after_s > 0 for rid in busy)
    assert len(busy) + len(served) == 300 and len(busy) >= 300 - 3 * limit
    # Round robin: once phone's question was in, at most one more of alice's started before it.
    times = await _times(settings)
    phone_in, phone_run = times[("phone", mine[0].request_id)]
    assert sum(1 for (who, _), (_, run) in times.items() if who == "alice" and phone_in < run < phone_run) <= 1
    assert served == sorted(served)  # FIFO within one asker
    logged = {r.request_id for r in await _log_rows(settings, "alice")}
    assert logged == {c.split(".", 1)[1] for c in served} and not (logged & busy)  # busy ones never logged


async def test_forged_file_replies_are_bounded_capped_and_ranked_by_the_agent(settings_for, start_agent):
    settings = settings_for("pi")
    service = await start_agent(FakeAsker(), settings)
    service.remote.deadline_s = 1.0
    mode = {"reply": "flood"}
    desk = await _raw(settings, "desk", "forged-desk", will=offline_will(T, "desk", "files"))

    async def answer_searches() -> None:
        while True:
            msg = await desk.next_message()
            request = json.loads(msg.payload)
            hit = {"device": "laptop", "path": "/etc/x", "name": "noise.txt", "excerpt": "nothing relevant",
                   "score": 1e9}
            if mode["reply"] == "flood":
                hits = [dict(hit, path=f"/x/{i}") for i in range(4000)]
            else:
                hits = [dict(hit, path=f"/x/{i}") for i in range(20)]
                hits.append({"device": "desk", "path": "/d/boiler.txt", "name": "boiler-manual.txt",
                             "excerpt": "Boiler manual: reset the pressure", "score": 0.0})
            payload = json.dumps({"request_id": request["request_id"], "seq": 0, "type": "file_results",
                                  "device": "desk", "hits": hits}).encode()
            # Impersonating another peer is refused by the broker ...
            other = msg.response_topic.rsplit("/", 1)[0] + "/laptop"
            assert (await desk.publish(other, payload[:1000])).value == NOT_AUTHORIZED
            await desk.publish(msg.response_topic, payload)

    responder = asyncio.create_task(answer_searches())
    try:
        await desk.subscribe("edge/v1/desk/files/search/+")
        await desk.publish(T.status("desk"), status_payload("online", "desk", {"role": "files"}), retain=True)
        for _ in range(100):
            if service.directory.online("desk"):
                break
            await asyncio.sleep(0.05)
        flooded = await service.remote.search("boiler manual", ["desk"])
        mode["reply"] = "many"
        capped = await service.remote.search("boiler manual", ["desk"])
    finally:
        responder.cancel()
        await desk.close()
    assert flooded == {"hits": [], "unreachable": ["desk"]}  # 4,000 hits: over MAX_REPLY_BYTES, dropped unread
    assert len(json.dumps([{"path": f"/x/{i}"} for i in range(4000)])) > MAX_REPLY_BYTES
    assert len(capped["hits"]) == SEARCH_LIMIT and capped["unreachable"] == []
    assert all(h["device"] == "desk" and h["score"] < 10 for h in capped["hits"])  # the peer's 1e9 ignored
    assert capped["hits"][0]["name"] == "boiler-manual.txt"  # ranked by the agent's own reading
    assert service.remote._waiting == {}


async def test_answers_are_resent_on_reconnect_until_the_asker_acks(settings_for, start_agent):
    settings = settings_for("pi")
    raw = await _raw(settings, "phone", "phone-noack")
    try:
        await raw.subscribe("edge/v1/reply/phone/#")
        service = await start_agent(FakeAsker(pills=()), settings)
        await raw.publish(T.ask("pi", "phone"), AskRequest(request_id="u1", question="hello").model_dump_json(),
                          response_topic="edge/v1/reply/phone/u1", correlation=b"u1")
        first = await _finals(raw, 1)
        service.stop()
        await asyncio.sleep(1.0)
        # The asker never acked: the agent's next connection sends the answer again, byte for byte.
        service = await start_agent(FakeAsker(pills=()), settings)
        again = await _finals(raw, 1)
        assert again["u1"] == first["u1"]
        await raw.publish(T.ack("pi", "phone"), b'{"request_id": "u1"}')
        await asyncio.sleep(0.3)
        service.stop()
        await asyncio.sleep(1.0)
        await start_agent(FakeAsker(pills=()), settings)
        with pytest.raises(asyncio.TimeoutError):
            await _finals(raw, 1, timeout_s=1.0)  # acked: not sent again
    finally:
        await raw.close()
    # The CLI's client acks by itself.
    async with AgentClient(settings_for("phone")) as phone:
        events = await collect(phone, "pi", "acked?")
        await asyncio.sleep(0.3)
    row = next(r for r in await _log_rows(settings, "phone") if r.request_id == events[0].request_id)
    assert row.acked and row.delivered


def test_a_nested_status_from_a_device_is_ignored_not_a_crash():
    from edge_agent.net.mqtt_types import Message
    from edge_agent.net.presence import DeviceDirectory

    directory = DeviceDirectory(T, "pi")
    assert directory.on_status(Message(T.status("laptop"), NESTED, 1, True, False, None, None, 1, 1))
    assert not directory.online("laptop")


async def test_a_locked_database_is_waited_out_then_answered_with_the_reason(settings_for, start_agent, monkeypatch):
    # Another writer holds edge-agent.db. A short hold is waited out and the question answered; a
    # hold that outlasts every try gets an error event with the reason and a degraded status —
    # never an acknowledged message and silence.
    import sqlite3

    from edge_agent.net import service as service_mod

    monkeypatch.setattr(service_mod, "STORAGE_RETRY_S", (0.3,))
    settings = settings_for("pi")
    service = await start_agent(FakeAsker(), settings)
    await service.conn.execute("PRAGMA busy_timeout=200")  # each try waits this long for the lock
    holder = sqlite3.connect(settings.db_path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        async with AgentClient(settings_for("phone")) as phone:
            asyncio.get_running_loop().call_later(0.3, holder.execute, "ROLLBACK")  # before the retry
            assert (await collect(phone, "pi", "first question"))[-1].type == "answer"
            holder.execute("BEGIN IMMEDIATE")  # now held past every try
            events = await collect(phone, "pi", "second question")
            assert events[-1].type == "error" and events[-1].code == "storage_unavailable", events
            assert "locked" in events[-1].message
            assert service._snapshot()["health"] == "degraded"
            holder.execute("ROLLBACK")
            assert (await collect(phone, "pi", "third question"))[-1].type == "answer"
            assert service._snapshot()["health"] == "ok"
    finally:
        holder.close()


async def test_a_paired_client_cannot_take_over_the_agents_client_id(settings_for, start_agent, caplog):
    # eve logs in with her own password but the agent's plain id, again and again: the agent's real
    # id carries a tag of its own password, so nobody is disconnected and questions keep arriving.
    import logging

    caplog.set_level(logging.WARNING, logger="edge_agent.net.bridge")
    settings = settings_for("pi")
    service = await start_agent(FakeAsker(), settings)
    assert service.bridge.opts.client_id.startswith("edge-agent-pi-") and len(service.bridge.opts.client_id) > 20
    async with AgentClient(settings_for("phone")) as phone:
        for round_ in range(5):
            for stolen in ("edge-agent-pi", "edge-agent-files-pi"):
                eve = await _raw(settings, "alice", stolen)
                await asyncio.sleep(0.05)
                await eve.close()
            assert service.bridge.connected
            assert (await collect(phone, "pi", f"question {round_}"))[-1].type == "answer"
    assert not [r for r in caplog.records if "connection lost" in r.getMessage()]


async def test_a_question_queued_while_the_agent_is_away_is_not_taken_by_another_client(
        settings_for, start_agent):
    # The agent's persistent session holds questions sent while it is stopped; alice resuming a
    # session under the agent's plain id gets a session of her own, not the agent's.
    settings = settings_for("pi")
    service = await start_agent(FakeAsker(), settings)
    service.stop()
    await asyncio.sleep(1.0)
    async with AgentClient(settings_for("phone")) as phone:
        rid = "queued-while-away"
        await phone.send("pi", "ask", AskRequest(request_id=rid, question="still there?"), expiry_s=60)
        thief = await _raw(settings, "alice", "edge-agent-pi", clean_start=False, session_expiry_s=600)
        await asyncio.sleep(0.5)
        await thief.close()
        await start_agent(FakeAsker(), settings)
        events = [e async for e in phone.events(rid, 20)]
    assert events[-1].type == "answer" and events[-1].request_id == rid


async def test_a_full_disk_is_said_never_silence(settings_for, start_agent, monkeypatch):
    # SQLite's max_page_count makes every write past the file's present size fail exactly as a full
    # disk does ("database or disk is full"). Every question still gets a final event.
    from edge_agent.net import service as service_mod

    monkeypatch.setattr(service_mod, "STORAGE_RETRY_S", (0.1,))
    settings = settings_for("pi")
    service = await start_agent(FakeAsker(), settings)
    pages = (await (await service.conn.execute("PRAGMA page_count")).fetchone())[0]
    await service.conn.execute(f"PRAGMA max_page_count={pages}")
    finals = []
    async with AgentClient(settings_for("phone")) as phone:
        for i in range(12):
            finals.append((await collect(phone, "pi", f"question {i} " + "x" * 1900, timeout_s=20))[-1])
    codes = [getattr(f, "code", f.type) for f in finals]
    assert len(finals) == 12 and "disk_full" in codes, codes
    assert service._snapshot()["health"] == "degraded" and "disk_full" in service._snapshot()["health_reason"]

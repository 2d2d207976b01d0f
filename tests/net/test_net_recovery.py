"""What a crash leaves in the request log is answered at the next start, never dropped."""
from __future__ import annotations

import asyncio

from netkit import FakeAsker

from edge_agent.net.bridge import MqttBridge
from edge_agent.net.events import REPLY_EVENT, Answer, AskRequest, ConfirmRequest, dump
from edge_agent.net.mqtt_types import ConnectOptions
from edge_agent.store import requests as rlog
from edge_agent.store.db import connect

R = "edge/v1/reply/phone/"


async def _log(conn, rid: str, request, *, runs: int = 0, final: bytes | None = None, delivered: bool = False,
               acked: bool = False):
    kind = "ask" if isinstance(request, AskRequest) else "confirm"
    await rlog.record_request(conn, sender="phone", request_id=rid, kind=kind, payload=request.model_dump_json(),
                              response_topic=R + rid, correlation=rid.encode())
    for _ in range(runs):
        await rlog.mark_running(conn, "phone", rid)
    if final is not None:
        await rlog.finish_request(conn, "phone", rid, final)
        if delivered:
            await rlog.mark_delivered(conn, "phone", rid)
        if acked:
            await rlog.mark_acked(conn, "phone", rid)


async def test_unfinished_requests_are_rerun_or_settled_and_lost_answers_resent(settings_for, start_agent):
    settings = settings_for("pi")
    stored = dump(Answer(request_id="d", seq=3, text="the stored answer", exit_kind="complete"))
    conn = await connect(settings.db_path)
    await _log(conn, "a", AskRequest(request_id="a", question="never started"))
    await _log(conn, "b", AskRequest(request_id="b", question="crashed once"), runs=1)
    await _log(conn, "c", AskRequest(request_id="c", question="crashed twice"), runs=2)
    await _log(conn, "k", ConfirmRequest(request_id="k", action_id="act-9"), runs=1)
    await _log(conn, "d", AskRequest(request_id="d", question="answered, not delivered"), runs=1, final=stored)
    await _log(conn, "e", AskRequest(request_id="e", question="all done"), runs=1, final=stored, delivered=True,
               acked=True)
    # The broker acknowledged it but the asker never did (a broker crash can lose it after its PUBACK).
    unacked = dump(Answer(request_id="f", seq=3, text="maybe lost", exit_kind="complete"))
    await _log(conn, "f", AskRequest(request_id="f", question="delivered?"), runs=1, final=unacked, delivered=True)
    await conn.close()

    watcher = MqttBridge(ConnectOptions(settings.mqtt.host, settings.mqtt.port, "phone-w", "phone",
                                        "phone-secret", clean_start=True))
    await watcher.start()
    await watcher.subscribe(R + "#")
    asker = FakeAsker(pills=())
    await start_agent(asker, settings)
    finals: dict[str, tuple] = {}
    while len(finals) < 6:
        msg = await watcher.next_message(10)
        event = REPLY_EVENT.validate_json(msg.payload)
        assert msg.correlation == msg.topic.rsplit("/", 1)[1].encode()
        if event.type in ("answer", "error"):
            finals[event.request_id] = (event, msg.payload)
    await watcher.close()

    assert finals["a"][0].text == "answer to: never started"
    # The rerun numbers its events above the block the crashed run may have used.
    assert finals["b"][0].text == "answer to: crashed once" and finals["b"][0].seq == 1 + rlog.RUN_SEQ_BLOCK
    assert finals["c"][0].code == "interrupted" and "2 times" in finals["c"][0].message
    assert finals["k"][0].text == "done: act-9"  # a confirmation is rerun: the assistant runs an action once
    assert finals["d"][1] == stored  # re-sent byte for byte
    assert finals["f"][1] == unacked
    assert "e" not in finals
    assert asker.calls == ["phone.a", "phone.b.r2"] and asker.confirms == ["act-9"]
    await asyncio.sleep(0.2)  # delivered-marks follow the PUBACKs
    conn = await connect(settings.db_path)
    try:
        assert await rlog.unfinished_requests(conn) == []
        assert await rlog.undelivered_requests(conn) == []
    finally:
        await conn.close()

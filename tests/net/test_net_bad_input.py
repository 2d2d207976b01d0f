"""Bad input never stops the service or costs another request (unit cases, then over the broker)."""
from __future__ import annotations

import asyncio
import json

import pytest
from netkit import FakeAsker, collect

from edge_agent.net.bridge import MqttBridge
from edge_agent.net.events import REPLY_EVENT
from edge_agent.net.intake import Incoming, Rejected, read_request
from edge_agent.net.mqtt_types import ConnectOptions, Message
from edge_agent.net.rpc import AgentClient
from edge_agent.net.topics import Topics

T = Topics("edge/v1")
ROUTE = "edge/v1/reply/phone/r"
MAX = 1024
GOOD = b'{"request_id": "ok-1", "question": "hi"}'

# (payload, response topic, topic, expected code, words in the message)
CASES = [
    (b"not json", ROUTE, "ask", "bad_request", "not JSON"),
    (b"", ROUTE, "ask", "bad_request", "not JSON"),
    (b'["a list"]', ROUTE, "ask", "bad_request", "JSON object"),
    (b'{"request_id": "b3"}', ROUTE, "ask", "bad_request", "question: Field required"),
    (b'{"request_id": "b4", "question": 42}', ROUTE, "ask", "bad_request", "question: Input should be a valid string"),
    (b'{"request_id": "b5", "question": "x", "colour": "red"}', ROUTE, "ask", "bad_request", "colour: Extra inputs"),
    (b'{"request_id": "bad id!", "question": "x"}', ROUTE, "ask", "bad_request", "request_id: String should match"),
    (b'{"request_id": "b7", "question": "' + b"a" * 2000 + b'"}', ROUTE, "ask", "too_large", "limit is 1024"),
    (b'{"request_id": "b8", "question": "\xff\xfe"}', ROUTE, "ask", "bad_request", "not valid UTF-8"),
    (b'{"request_id": "b9"}', ROUTE, "confirm", "bad_request", "action_id: Field required"),
    (b"[" * 1000, ROUTE, "ask", "bad_request", "nests 1000 levels"),
    (GOOD, None, "ask", "no_route", "no response topic"),
    (GOOD, "edge/v1/reply/alice/steal", "ask", "foreign_route", "outside edge/v1/reply/phone/"),
    (GOOD, "edge/v1/reply/phone/#", "ask", "foreign_route", "outside"),
    (GOOD, "edge/v1/reply/phone", "ask", "foreign_route", "outside"),
    (GOOD, "edge/v1/pi/status", "ask", "foreign_route", "outside"),
]


def _msg(payload: bytes, response_topic: str | None, kind: str = "ask", sender: str = "phone") -> Message:
    topic = T.ask("pi", sender) if kind == "ask" else T.confirm("pi", sender)
    return Message(topic, payload, 1, False, False, response_topic, b"corr", 1, 1)


@pytest.mark.parametrize("payload,route,kind,code,words", CASES)
def test_read_request_rejects(payload, route, kind, code, words):
    got = read_request(_msg(payload, route, kind), T, "pi", MAX)
    assert isinstance(got, Rejected), got
    assert got.code == code and words in got.message, got.message
    # A route is only ever one inside the sender's own namespace.
    assert (got.route is not None) == (code not in ("no_route", "foreign_route"))


def test_read_request_accepts_v5_route_and_the_reply_to_fallback():
    got = read_request(_msg(GOOD, ROUTE), T, "pi", MAX)
    assert isinstance(got, Incoming) and got.request_id == "ok-1" and got.route.topic == ROUTE
    fallback = b'{"request_id": "ok-2", "question": "hi", "reply_to": "edge/v1/reply/phone/x"}'
    got = read_request(_msg(fallback, None), T, "pi", MAX)
    assert isinstance(got, Incoming) and got.route.topic == "edge/v1/reply/phone/x"
    assert isinstance(read_request(_msg(GOOD, ROUTE, sender="alice"), T, "pi", MAX), Rejected)  # not alice's
    other = Message(T.ask("laptop", "phone"), GOOD, 1, False, False, ROUTE, None, 1, 1)
    assert read_request(other, T, "pi", MAX).code == "not_for_us"


async def test_every_bad_input_then_the_service_still_answers(settings_for, start_agent):
    settings = settings_for("pi", mqtt={"max_payload_bytes": MAX})
    asker = FakeAsker()
    service = await start_agent(asker, settings)
    port = settings.mqtt.port
    raw = MqttBridge(ConnectOptions("127.0.0.1", port, "phone-raw", "phone", "phone-secret", clean_start=True))
    spy = MqttBridge(ConnectOptions("127.0.0.1", port, "alice-spy", "alice", "alice-secret", clean_start=True))
    await raw.start()
    await spy.start()
    try:
        await raw.subscribe("edge/v1/reply/phone/#")
        await spy.subscribe("edge/v1/reply/alice/#")
        expected = 0
        for payload, route, kind, code, words in CASES:
            topic = T.ask("pi", "phone") if kind == "ask" else T.confirm("pi", "phone")
            await raw.publish(topic, payload, response_topic=route, correlation=b"corr-" + code.encode())
            if route == ROUTE:
                msg = await raw.next_message(5)
                event = REPLY_EVENT.validate_json(msg.payload)
                assert event.type == "error" and event.code == code and words in event.message
                assert msg.correlation == b"corr-" + code.encode()
                expected += 1
        async with AgentClient(settings_for("phone")) as phone:
            events = await collect(phone, "pi", "still there?")
        assert events[-1].type == "answer" and events[-1].text == "answer to: still there?"
        with pytest.raises(asyncio.TimeoutError):
            await spy.next_message(0.3)  # nothing was ever sent into alice's namespace
        rejected = service.metrics.snapshot(queue_depth=0)["rejected"]
        assert sum(rejected.values()) == len(CASES)
        assert rejected["no_route"] == 1 and rejected["foreign_route"] == 4
        assert asker.calls == ["phone." + events[0].request_id]
        assert expected == len(CASES) - 5
    finally:
        await raw.close()
        await spy.close()


def test_events_are_json_with_type_request_id_and_seq():
    event = REPLY_EVENT.validate_json(b'{"request_id": "r", "seq": 3, "type": "pill", "label": "Date"}')
    assert json.loads(event.model_dump_json()) == {"request_id": "r", "seq": 3, "type": "pill", "label": "Date"}

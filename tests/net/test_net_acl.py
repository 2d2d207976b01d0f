"""The generated password file and ACL, enforced by a real Mosquitto."""
from __future__ import annotations

import asyncio

import pytest

from edge_agent.net.bridge import MqttBridge
from edge_agent.net.mqtt_types import ConnectOptions, ConnectRefused

NOT_AUTHORIZED = 135  # MQTT v5 reason code
BAD_CREDENTIALS = 134


@pytest.fixture
async def connect_as(broker):
    opened: list[MqttBridge] = []

    async def connect(name: str | None, password: str | None = None) -> MqttBridge:
        pw = password if password is not None else (f"{name}-secret" if name else None)
        bridge = MqttBridge(ConnectOptions(broker.host, broker.port, f"acl-{name}-{len(opened)}", name, pw,
                                           clean_start=True, fail_fast=True))
        opened.append(bridge)
        return await bridge.start()

    yield connect
    for bridge in opened:
        await bridge.close()


async def _nothing_arrives(bridge: MqttBridge, wait_s: float = 0.3) -> None:
    with pytest.raises(asyncio.TimeoutError):
        await bridge.next_message(wait_s)


async def test_anonymous_and_wrong_password_are_refused(connect_as):
    with pytest.raises(ConnectRefused) as anon:
        await connect_as(None)
    assert anon.value.code == NOT_AUTHORIZED
    with pytest.raises(ConnectRefused) as wrong:
        await connect_as("phone", "guess")
    assert wrong.value.code in (BAD_CREDENTIALS, NOT_AUTHORIZED)


async def test_nobody_reads_another_clients_replies(connect_as):
    pi, alice, phone = await connect_as("pi"), await connect_as("alice"), await connect_as("phone")
    await alice.subscribe("edge/v1/reply/alice/#")
    await phone.subscribe("edge/v1/reply/alice/#")  # granted by the broker, but filtered per message
    await phone.subscribe("edge/v1/reply/#")
    assert (await pi.publish("edge/v1/reply/alice/r1", b"for alice")).value == 0
    assert (await alice.next_message(5)).payload == b"for alice"
    await _nothing_arrives(phone)


async def test_asking_as_another_client_is_refused(connect_as):
    pi, phone = await connect_as("pi"), await connect_as("phone")
    await pi.subscribe("edge/v1/pi/ask/+")
    assert (await phone.publish("edge/v1/pi/ask/alice", b"{}")).value == NOT_AUTHORIZED
    await _nothing_arrives(pi)
    assert (await phone.publish("edge/v1/pi/ask/phone", b"{}")).value == 0
    assert (await pi.next_message(5)).topic == "edge/v1/pi/ask/phone"


async def test_devices_keep_to_their_own_topics(connect_as):
    laptop, phone = await connect_as("laptop"), await connect_as("phone")
    await laptop.subscribe("edge/v1/pi/ask/+")  # another device's requests
    assert (await phone.publish("edge/v1/pi/ask/phone", b"{}")).value == 0
    await _nothing_arrives(laptop)
    for topic in ("edge/v1/pi/status", "edge/v1/pi/ask/laptop", "edge/v1/pi/confirm/laptop",
                  "edge/v1/pi/files/search/pi", "edge/v1/pi/files/search/laptop", "edge/v1/reply/phone/x",
                  "edge/v1/reply/pi/files/s1/desk", "edge/v1/reply/pi/x", "edge/v1/pi/ack/laptop"):
        assert (await laptop.publish(topic, b"{}")).value == NOT_AUTHORIZED, topic
    # ... and may do what a file peer needs (16 = accepted, but nobody subscribed).
    for topic in ("edge/v1/laptop/status", "edge/v1/reply/pi/files/s1/laptop"):
        assert not (await laptop.publish(topic, b'{"state": "online"}')).is_failure, topic


async def test_only_the_agent_writes_a_clients_replies(connect_as):
    pi, laptop, alice = await connect_as("pi"), await connect_as("laptop"), await connect_as("alice")
    forged = b'{"request_id": "q1", "seq": 9, "type": "answer", "text": "forged", "exit_kind": "complete"}'
    # A paired device and another client try to plant a retained answer in phone's replies.
    assert (await laptop.publish("edge/v1/reply/phone/q1", forged, retain=True)).value == NOT_AUTHORIZED
    assert (await alice.publish("edge/v1/reply/phone/q1", forged, retain=True)).value == NOT_AUTHORIZED
    phone = await connect_as("phone")
    await phone.subscribe("edge/v1/reply/phone/#")
    await _nothing_arrives(phone)  # a later subscriber gets nothing
    # The agent may answer phone, and ask laptop for files, but not write laptop's own topics.
    assert (await pi.publish("edge/v1/reply/phone/q2", b"{}")).value == 0
    assert (await phone.next_message(5)).topic == "edge/v1/reply/phone/q2"
    assert not (await pi.publish("edge/v1/laptop/files/search/pi", b"{}")).is_failure
    for topic in ("edge/v1/laptop/status", "edge/v1/reply/laptop/files/s1/pi", "edge/v1/laptop/files/search/alice"):
        assert (await pi.publish(topic, b"{}")).value == NOT_AUTHORIZED, topic


async def test_clients_write_no_status_and_no_replies(connect_as):
    phone = await connect_as("phone")
    for topic in ("edge/v1/pi/status", "edge/v1/phone/status", "edge/v1/reply/alice/x", "edge/v1/reply/phone/x",
                  "edge/v1/pi/files/search/phone", "edge/v1/pi/ack/alice", "edge/v1/reply/pi/files/s1/phone"):
        assert (await phone.publish(topic, b"{}", retain=True)).value == NOT_AUTHORIZED, topic

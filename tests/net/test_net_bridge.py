"""The asyncio bridge over paho: reconnection with backoff, queued publishes, TCP_NODELAY."""
from __future__ import annotations

import asyncio
import socket

import pytest

from edge_agent.net.bridge import MqttBridge
from edge_agent.net.broker import free_port, start_local_broker
from edge_agent.net.mqtt_types import ConnectOptions, MqttError


async def test_reconnects_when_the_broker_returns_and_delivers_what_was_queued(tmp_path, pairing):
    port = free_port()
    broker = start_local_broker(tmp_path / "b", password_file=pairing.password_file, acl_file=pairing.acl_file,
                                port=port)
    receiver = MqttBridge(ConnectOptions("127.0.0.1", port, "q-pi", "pi", "pi-secret", session_expiry_s=300))
    sender = MqttBridge(ConnectOptions("127.0.0.1", port, "q-phone", "phone", "phone-secret", clean_start=True))
    try:
        await receiver.start()
        await receiver.subscribe("edge/v1/pi/ask/+")
        await asyncio.to_thread(broker.stop)  # SIGTERM: the receiver's session is saved
        await sender.start()  # nothing listens: it keeps retrying with backoff
        pending = sender.publish("edge/v1/pi/ask/phone", b"sent while the broker was down")
        await asyncio.sleep(0.5)
        assert not sender.connected and not pending.done()
        await asyncio.to_thread(broker.start)
        assert not (await asyncio.wait_for(pending, 15)).is_failure  # PUBACK after the reconnect
        assert (await receiver.next_message(15)).payload == b"sent while the broker was down"
        assert receiver.generation >= 2 and sender.connected
        sock = sender._client.socket()  # noqa: SLF001 - checking the socket option itself
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        await sender.close()
        await receiver.close()
        broker.kill()


async def test_fail_fast_raises_when_nothing_listens():
    bridge = MqttBridge(ConnectOptions("127.0.0.1", free_port(), "nobody", "phone", "x", fail_fast=True))
    with pytest.raises(MqttError, match="cannot connect"):
        await bridge.start()
    await bridge.close()


async def test_receive_maximum_makes_the_broker_hold_what_we_have_not_acked(broker):
    receiver = MqttBridge(ConnectOptions("127.0.0.1", broker.port, "rm-pi", "pi", "pi-secret", clean_start=True,
                                         receive_maximum=2), manual_ack=True)
    sender = MqttBridge(ConnectOptions("127.0.0.1", broker.port, "rm-phone", "phone", "phone-secret",
                                       clean_start=True))
    try:
        await receiver.start()
        await receiver.subscribe("edge/v1/pi/ask/+")
        await sender.start()
        await asyncio.gather(*(sender.publish("edge/v1/pi/ask/phone", f"q{i}".encode()) for i in range(5)))
        first = [await receiver.next_message(5) for _ in range(2)]
        with pytest.raises(asyncio.TimeoutError):
            await receiver.next_message(0.5)  # the broker holds the other three
        receiver.ack(first[0])
        third = await receiver.next_message(5)
    finally:
        await sender.close()
        await receiver.close()
    assert [m.payload for m in first] == [b"q0", b"q1"] and third.payload == b"q2"

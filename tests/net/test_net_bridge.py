"""The asyncio bridge over paho: reconnection with backoff, queued publishes, TCP_NODELAY, closing."""
from __future__ import annotations

import asyncio
import socket

import pytest
from netkit import until

from edge_agent.net.bridge import MqttBridge
from edge_agent.net.broker import free_port, start_local_broker
from edge_agent.net.mqtt_types import ConnectOptions, MqttError
from edge_agent.net.tasks import within


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


async def test_a_cancel_meeting_the_result_is_not_swallowed():
    """3.11's wait_for returned the result here and the cancelled task went on (gh-86296)."""
    fut = asyncio.get_running_loop().create_future()

    async def waiter() -> str:
        await within(fut, 5)
        return "went on after its cancel"

    task = asyncio.create_task(waiter())
    await asyncio.sleep(0)  # the task now waits on fut
    fut.set_result(1)
    task.cancel()  # in the same loop turn as the result
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_closed_while_its_connack_arrives_the_bridge_ends(broker):
    """close() before `connected` cancels the connection loop; that cancel met the CONNACK and was
    lost, and close() then waited forever on a connection nobody would end (a CI run timed out)."""
    bridge = MqttBridge(ConnectOptions("127.0.0.1", broker.port, "cl-phone", "phone", "phone-secret",
                                       clean_start=True))
    closing: list[asyncio.Future] = []
    on_connack = bridge._on_connack  # noqa: SLF001 - the moment to close at

    def connack_then_close(*args) -> None:
        on_connack(*args)
        closing.append(asyncio.ensure_future(bridge.close()))

    bridge._on_connack = connack_then_close  # noqa: SLF001
    await bridge.start()
    await until(lambda: closing, 10)
    done, _ = await asyncio.wait(closing, timeout=10)
    if not done:  # ends the loop that waits on a connection nobody will end
        closing[0].cancel()
    assert done and not bridge.connected and bridge._task is None  # noqa: SLF001


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

"""MqttBridge: paho-mqtt 2 (MQTT v5) driven by the asyncio event loop (after aiomqtt).

No paho thread: the socket is watched with loop.add_reader/add_writer and a small task runs
paho's keepalive bookkeeping. paho's callbacks only hand things to the loop
(loop.call_soon_threadsafe), so they are safe even while the blocking TCP connect runs in an
executor thread. Consumers read `async for message in bridge.messages()`. Reconnection is an
outer loop with exponential backoff; subscriptions are renewed on every connect and QoS 1
publishes made while disconnected wait in a queue of our own (paho resends the ones it had in
flight). Every socket gets TCP_NODELAY: without it small replies wait for Nagle (~40 ms).

Only the event-loop thread touches the paho client, except inside connect(), during which the
loop leaves it alone (`_connecting`).
"""
from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import random
import socket
import threading
from typing import AsyncIterator, Awaitable, Callable

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from paho.mqtt.subscribeoptions import SubscribeOptions

from edge_agent.net.mqtt_types import ConnectOptions, ConnectRefused, Message, MqttError, Outgoing, publish_properties
from edge_agent.net.tasks import within

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 5.0  # TCP connect + CONNACK
BACKOFF_MIN_S = 0.2  # first reconnect delay
BACKOFF_MAX_S = 10.0  # reconnect delay cap
MISC_INTERVAL_S = 1.0  # how often paho's keepalive bookkeeping runs
CLOSE_TIMEOUT_S = 3.0  # wait for the DISCONNECT to be written


class MqttBridge:
    """One MQTT v5 connection, kept up until close()."""

    def __init__(self, opts: ConnectOptions, *, manual_ack: bool = False,
                 on_connect: Callable[[bool], Awaitable[None]] | None = None):
        self.opts = opts
        self._manual_ack = manual_ack
        self._on_connect_hook = on_connect
        self._subscriptions: dict[str, SubscribeOptions] = {}
        self._messages: asyncio.Queue[Message] = asyncio.Queue()
        self._pending: collections.deque[Outgoing] = collections.deque()
        self._inflight: dict[int, asyncio.Future] = {}
        self._suback: dict[int, asyncio.Future] = {}
        self._sub_codes: dict[str, ReasonCode] = {}
        self._connected = asyncio.Event()
        self._connack: asyncio.Future | None = None
        self._lost: asyncio.Future | None = None
        self._connecting = False
        self._closing = False
        self._closed = False
        self._generation = 0
        self._session_started = False
        self._task: asyncio.Task | None = None
        self._misc_task: asyncio.Task | None = None
        self._hook_tasks: set[asyncio.Task] = set()
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._client = self._make_client()

    # -- paho side: every callback only schedules work on the loop --------------------------
    def _make_client(self) -> mqtt.Client:
        o = self.opts
        c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=o.client_id, protocol=mqtt.MQTTv5,
                        reconnect_on_failure=False, manual_ack=self._manual_ack)
        c.connect_timeout = CONNECT_TIMEOUT_S
        if o.username:
            c.username_pw_set(o.username, o.password)
        if o.tls_ca:
            c.tls_set(ca_certs=str(o.tls_ca))
        if o.will:
            c.will_set(o.will.topic, o.will.payload, qos=1, retain=o.will.retain)
        c.on_socket_open = self._cb_socket_open
        c.on_socket_close = self._cb_socket_close
        c.on_socket_register_write = self._cb_register_write
        c.on_socket_unregister_write = self._cb_unregister_write
        c.on_connect = lambda _c, _u, flags, rc, _p: self._soon(self._on_connack, flags.session_present, rc)
        c.on_disconnect = lambda _c, _u, _f, rc, _p: self._soon(self._on_lost, rc)
        c.on_message = self._cb_message
        c.on_publish = lambda _c, _u, mid, rc, _p: self._soon(self._on_puback, mid, rc)
        c.on_subscribe = lambda _c, _u, mid, rcs, _p: self._soon(self._on_suback, mid, rcs)
        return c

    def _soon(self, fn, *args) -> None:
        # In the loop's own thread (paho called from loop_read/loop_write) run at once: a closed
        # socket must leave the selector before its fd number can be reused. From the connect
        # executor, hand it over.
        if threading.get_ident() == self._loop_thread:
            fn(*args)
        else:
            self._loop.call_soon_threadsafe(fn, *args)

    def _cb_socket_open(self, _c, _u, sock) -> None:
        # Socket options are set here, before the first byte goes out.
        with contextlib.suppress(OSError, AttributeError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._soon(self._loop.add_reader, sock.fileno(), self._read)

    def _cb_socket_close(self, _c, _u, sock) -> None:
        self._soon(self._forget_fd, sock.fileno())

    def _cb_register_write(self, _c, _u, sock) -> None:
        self._soon(self._loop.add_writer, sock.fileno(), self._write)

    def _cb_unregister_write(self, _c, _u, sock) -> None:
        self._soon(self._loop.remove_writer, sock.fileno())

    def _cb_message(self, _c, _u, m: mqtt.MQTTMessage) -> None:
        props = m.properties
        msg = Message(m.topic, bytes(m.payload), m.qos, bool(m.retain), bool(m.dup),
                      getattr(props, "ResponseTopic", None), getattr(props, "CorrelationData", None),
                      m.mid, self._generation)
        self._soon(self._messages.put_nowait, msg)

    # -- loop side --------------------------------------------------------------------------
    def _forget_fd(self, fd: int) -> None:
        if fd >= 0:
            self._loop.remove_reader(fd)
            self._loop.remove_writer(fd)

    def _read(self) -> None:
        if self._connecting:
            return
        self._client.loop_read()
        # TLS: bytes already decrypted into the SSL object's buffer never wake epoll again.
        sock = self._client.socket()
        while sock is not None and hasattr(sock, "pending") and sock.pending():
            self._client.loop_read()
            sock = self._client.socket()

    def _write(self) -> None:
        if not self._connecting:
            self._client.loop_write()

    def _on_connack(self, session_present: bool, rc: ReasonCode) -> None:
        if self._connack is not None and not self._connack.done():
            self._connack.set_result((session_present, rc))

    def _on_lost(self, rc: ReasonCode) -> None:
        self._connected.clear()
        if self._lost is not None and not self._lost.done():
            self._lost.set_result(rc)
        if self._connack is not None and not self._connack.done():
            self._connack.set_exception(ConnectionError(f"connection closed before CONNACK: {rc}"))
        for fut in self._suback.values():
            if not fut.done():
                fut.set_exception(ConnectionError("connection closed before SUBACK"))
        self._suback.clear()

    def _on_puback(self, mid: int, rc: ReasonCode) -> None:
        fut = self._inflight.pop(mid, None)
        if fut is not None and not fut.done():
            fut.set_result(rc)

    def _on_suback(self, mid: int, rcs: list[ReasonCode]) -> None:
        fut = self._suback.pop(mid, None)
        if fut is not None and not fut.done():
            fut.set_result(list(rcs))

    # -- public API -------------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    @property
    def generation(self) -> int:
        """Counts connection attempts; messages carry the one they arrived on."""
        return self._generation

    async def start(self) -> "MqttBridge":
        """Start the connection loop; with fail_fast, wait for the first connect and raise if it fails."""
        self._task = asyncio.create_task(self._run(), name=f"mqtt-{self.opts.client_id}")
        if self.opts.fail_fast:
            done_or_up = asyncio.ensure_future(self._connected.wait())
            await asyncio.wait({done_or_up, self._task}, return_when=asyncio.FIRST_COMPLETED)
            if self._task.done():
                done_or_up.cancel()
                self._task.result()  # raises the connect error
        return self

    async def __aenter__(self) -> "MqttBridge":
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def wait_connected(self, timeout_s: float | None = None) -> None:
        await within(self._connected.wait(), timeout_s)

    def add_subscription(self, topic: str, qos: int = 1, retain_handling: int = 0) -> None:
        """Subscribe now (if connected) and on every later connect."""
        self._subscriptions[topic] = SubscribeOptions(qos=qos, retainHandling=retain_handling)
        if self.connected:
            self._send_subscribe({topic: self._subscriptions[topic]})

    async def subscribe(self, topic: str, qos: int = 1, retain_handling: int = 0) -> ReasonCode:
        """add_subscription and wait for its SUBACK (or for the connect that subscribes it)."""
        self._subscriptions[topic] = SubscribeOptions(qos=qos, retainHandling=retain_handling)
        if not self.connected:
            await self._connected.wait()
            return self._sub_codes[topic]
        codes = await self._send_subscribe({topic: self._subscriptions[topic]})
        self._sub_codes[topic] = codes[0]
        return codes[0]

    def _send_subscribe(self, subs: dict[str, SubscribeOptions]) -> asyncio.Future:
        fut = self._loop.create_future()
        rc, mid = self._client.subscribe(list(subs.items()))
        if rc != mqtt.MQTT_ERR_SUCCESS or mid is None:
            fut.set_exception(MqttError(f"subscribe failed: {mqtt.error_string(rc)}"))
        else:
            self._suback[mid] = fut
        return fut

    def publish(self, topic: str, payload: bytes | str, *, qos: int = 1, retain: bool = False,
                response_topic: str | None = None, correlation: bytes | None = None,
                expiry_s: int | None = None) -> asyncio.Future:
        """Queue a PUBLISH; the future resolves with the PUBACK reason code (qos 0: once written)."""
        if self._closed:
            raise MqttError("bridge is closed")
        data = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
        out = Outgoing(topic, data, qos, retain, publish_properties(response_topic, correlation, expiry_s),
                        self._loop.create_future())
        if self.connected and not self._pending:
            self._send(out)
        else:
            self._pending.append(out)
        return out.future

    def _send(self, out: Outgoing) -> None:
        info = self._client.publish(out.topic, out.payload, qos=out.qos, retain=out.retain,
                                    properties=out.properties)
        if info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN):
            out.future.set_exception(MqttError(f"publish to {out.topic} failed: {mqtt.error_string(info.rc)}"))
        elif out.qos == 0 and info.rc == mqtt.MQTT_ERR_NO_CONN:
            out.future.set_result(None)  # QoS 0 promises nothing; paho does not keep it
        else:
            # QoS 1 stays in paho's session until PUBACK, resent after a reconnect.
            self._inflight[info.mid] = out.future
        self._flush()

    def _flush(self) -> None:
        """Write queued packets now instead of on the next loop turn (one epoll round trip less)."""
        if not self._connecting and self._client.want_write():
            self._client.loop_write()

    def ack(self, msg: Message) -> bool:
        """Send the PUBACK of a manually acknowledged message; False if its connection is gone."""
        if not self._manual_ack or msg.qos == 0:
            return True
        if msg.generation != self._generation or not self._client.is_connected():
            return False  # the broker redelivers it on the new connection
        self._client.ack(msg.mid, msg.qos)
        self._flush()
        return True

    async def messages(self) -> AsyncIterator[Message]:
        while True:
            yield await self._messages.get()

    async def next_message(self, timeout_s: float | None = None) -> Message:
        return await within(self._messages.get(), timeout_s)

    async def close(self, *, drop_session: bool = False) -> None:
        """Disconnect normally (no Last Will); drop_session also ends the broker-side session."""
        self._closing = True
        self._closed = True
        if self.connected:
            props = None
            if drop_session:
                props = Properties(PacketTypes.DISCONNECT)
                props.SessionExpiryInterval = 0
            lost = self._lost
            self._client.disconnect(properties=props)
            if lost is not None:
                with contextlib.suppress(asyncio.TimeoutError):
                    await within(asyncio.shield(lost), CLOSE_TIMEOUT_S)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None
        for fut in [*self._inflight.values(), *(o.future for o in self._pending), *self._suback.values()]:
            if not fut.done():
                fut.set_exception(MqttError("bridge closed"))
        self._inflight.clear()
        self._pending.clear()
        self._suback.clear()
        sock = self._client.socket()
        if sock is not None:
            self._forget_fd(sock.fileno())
            self._client._sock_close()  # noqa: SLF001 - paho has no public "drop the socket"

    # -- the connection loop ----------------------------------------------------------------
    async def _run(self) -> None:
        delay = BACKOFF_MIN_S
        while not self._closing:
            try:
                await self._connect_once()
                delay = BACKOFF_MIN_S
                rc = await self._lost  # type: ignore[misc]
                if not self._closing:
                    log.warning("mqtt %s: connection lost: %s", self.opts.client_id, rc)
            except ConnectRefused as err:
                log.error("mqtt %s: %s", self.opts.client_id, err)
                if self.opts.fail_fast and not self._session_started:
                    raise
            except (OSError, ConnectionError, asyncio.TimeoutError) as err:
                log.warning("mqtt %s: cannot connect to %s:%s: %s", self.opts.client_id,
                            self.opts.host, self.opts.port, err or type(err).__name__)
                if self.opts.fail_fast and not self._session_started:
                    raise MqttError(f"cannot connect to {self.opts.host}:{self.opts.port}: {err}") from err
            finally:
                self._connected.clear()
                if not self._closing:
                    self._client._sock_close()  # noqa: SLF001 - e.g. no CONNACK came: drop the half-open socket
                if self._misc_task is not None:
                    self._misc_task.cancel()
                    self._misc_task = None
            if self._closing:
                break
            await asyncio.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, BACKOFF_MAX_S)

    async def _connect_once(self) -> None:
        o = self.opts
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = o.session_expiry_s
        if o.receive_maximum is not None:
            props.ReceiveMaximum = o.receive_maximum
        clean = o.clean_start and not self._session_started
        self._connack = self._loop.create_future()
        self._lost = self._loop.create_future()
        # Messages are stamped with the connection they came on; bump before any can arrive.
        self._generation += 1
        self._connecting = True
        try:
            await self._loop.run_in_executor(
                None, lambda: self._client.connect(o.host, o.port, o.keepalive_s, clean_start=clean,
                                                   properties=props))
        finally:
            self._connecting = False
        # The CONNECT packet is written by the loop once the socket is registered.
        self._soon(self._write)
        session_present, rc = await within(self._connack, CONNECT_TIMEOUT_S)
        if rc.is_failure:
            self._client._sock_close()  # noqa: SLF001
            raise ConnectRefused(str(rc), rc.value)
        self._session_started = True
        log.info("mqtt %s: connected to %s:%s (session present: %s)", o.client_id, o.host, o.port,
                 session_present)
        self._misc_task = asyncio.create_task(self._misc())
        if self._subscriptions:
            topics = dict(self._subscriptions)
            codes = await within(self._send_subscribe(topics), CONNECT_TIMEOUT_S)
            for topic, code in zip(topics, codes, strict=False):
                self._sub_codes[topic] = code
                if code.is_failure:
                    log.error("mqtt %s: subscription %s refused: %s", o.client_id, topic, code)
        self._connected.set()
        while self._pending and self.connected:
            self._send(self._pending.popleft())
        if self._on_connect_hook is not None:
            task = asyncio.create_task(self._on_connect_hook(session_present))
            self._hook_tasks.add(task)
            task.add_done_callback(self._hook_done)

    def _hook_done(self, task: asyncio.Task) -> None:
        self._hook_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("mqtt on-connect hook failed", exc_info=task.exception())

    async def _misc(self) -> None:
        while True:
            await asyncio.sleep(MISC_INTERVAL_S)
            if not self._connecting:
                self._client.loop_misc()

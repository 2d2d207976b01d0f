"""A short synchronous MQTT v5 login for command-line work (doctor's broker check, pair rm's
discovery removal): connect, wait for the CONNACK, use the client, disconnect."""
from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any


class LoginFailed(Exception):
    """The broker could not be used: the connect error, "no CONNACK within N s" or "refused (reason)"."""


@contextlib.contextmanager
def logged_in(host: str, port: int, username: str | None, password: str | None, *, tls_ca: str | None = None,
              purpose: str = "check", timeout_s: float = 5.0) -> Iterator[Any]:
    """A connected paho client (its network loop running) for the block; LoginFailed otherwise.
    The client id names the purpose and the process, never a long-lived client's id."""
    import paho.mqtt.client as mqtt

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"edge-agent-{purpose}-{os.getpid()}",
                         protocol=mqtt.MQTTv5)
    if username:
        client.username_pw_set(username, password)
    if tls_ca:
        client.tls_set(ca_certs=tls_ca)
    done, refused = threading.Event(), []

    def on_connect(client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            refused.append(str(reason_code))
        done.set()

    client.on_connect = on_connect
    try:
        client.connect(host, port, keepalive=max(5, int(timeout_s)))
    except (OSError, ValueError) as err:
        raise LoginFailed(str(err)) from err
    client.loop_start()
    try:
        if not done.wait(timeout_s):
            raise LoginFailed(f"no CONNACK within {timeout_s:.0f} s")
        if refused:
            raise LoginFailed(f"refused ({refused[0]})")
        yield client
    finally:
        client.disconnect()
        client.loop_stop()

"""The retained status message: `<prefix>/<device>/status`, JSON {"state", "device", **snapshot}."""
from __future__ import annotations

import json
from typing import Any, Literal

State = Literal["online", "offline"]


def status_topic(prefix: str, device: str) -> str:
    """The retained status topic of one device ("+" for every device)."""
    return f"{prefix.rstrip('/')}/{device}/status"


def status_payload(state: State, device: str, snapshot: dict[str, Any] | None = None) -> bytes:
    """The JSON bytes published (retained) on the status topic."""
    return json.dumps({"state": state, "device": device, **(snapshot or {})}, sort_keys=True).encode()


def parse_status(payload: bytes) -> dict[str, Any]:
    """A status payload as a dict; ValueError if it is not a JSON object with a state."""
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"status payload is not JSON: {err}") from err
    if not isinstance(data, dict) or "state" not in data:
        raise ValueError("status payload is not a JSON object with a state")
    return data


def device_from_topic(topic: str) -> str:
    """The device segment of `<prefix>/<device>/status`."""
    parts = topic.split("/")
    return parts[-2] if len(parts) >= 2 else topic

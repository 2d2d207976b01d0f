"""`edge-agent ask` / `edge-agent confirm` over MQTT: print the events of one request.

Pills and progress go to stderr as they arrive; the answer (or the confirmation prompt) goes to
stdout. --json prints every event as one JSON line on stdout instead. Exit 0 for an answer or
a confirmation prompt, 1 for an error event, 2 when the client cannot reach or use the broker,
124 when no final event came in time.
"""
from __future__ import annotations

import asyncio
import sys

from pydantic import BaseModel, ValidationError

from edge_agent.config import Settings
from edge_agent.net.events import AskRequest, ConfirmRequest
from edge_agent.net.intake import describe_validation_error
from edge_agent.net.mqtt_types import MqttError
from edge_agent.net.rpc import AgentClient, ClientConfigError, new_request_id

EXIT_OK = 0
EXIT_ERROR = 1  # the request ended with an error event
EXIT_UNAVAILABLE = 2  # no broker, refused credentials, or not allowed to ask this device
EXIT_TIMEOUT = 124  # no final event within the timeout (as timeout(1))
DEFAULT_TIMEOUT_S = 300.0  # the agent may be busy with others' questions first


def _print_event(event: BaseModel, *, device: str, default_device: str) -> int | None:
    """Human output for one event; the exit code once the final event is printed."""
    err = sys.stderr
    kind = event.type  # type: ignore[attr-defined]
    if kind == "accepted":
        print(f"[accepted by {event.device}]", file=err, flush=True)  # type: ignore[attr-defined]
    elif kind == "queued":
        print(f"[queued: {event.position} ahead]", file=err, flush=True)  # type: ignore[attr-defined]
    elif kind == "pill":
        print(f"[{event.label}]", file=err, flush=True)  # type: ignore[attr-defined]
    elif kind == "answer":
        from edge_agent.harness.reply import source_lines

        print(event.text, flush=True)  # type: ignore[attr-defined]
        for line in source_lines(event.sources):  # type: ignore[attr-defined]
            print(line, flush=True)
        att = event.attachment  # type: ignore[attr-defined]
        if att:
            print(f"(attached: {att.get('name')} on {att.get('device')}: {att.get('path')})", flush=True)
        return EXIT_OK
    elif kind == "needs_confirmation":
        where = "" if device == default_device else f" --device {device}"
        print(event.text, flush=True)  # type: ignore[attr-defined]
        print(f"Pending: {event.preview}", flush=True)  # type: ignore[attr-defined]
        print(f"To confirm: edge-agent confirm {event.action_id}{where}", flush=True)  # type: ignore[attr-defined]
        return EXIT_OK
    elif kind == "error":
        retry = getattr(event, "retry_after_s", None)
        hint = f" (send it again in {retry:.0f} s)" if retry else ""
        print(f"edge-agent: {event.code}: {event.message}{hint}", file=err, flush=True)  # type: ignore[attr-defined]
        return EXIT_ERROR
    return None


async def exchange(settings: Settings, device: str, kind: str, request: BaseModel, *, timeout_s: float,
                   json_lines: bool) -> int:
    """Send one request and print its events; returns the exit code."""
    try:
        client = AgentClient(settings)
        await client.start()
    except ClientConfigError as err:
        print(f"edge-agent: {err}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except MqttError as err:
        m = settings.mqtt
        print(f"edge-agent: cannot use the broker at {m.host}:{m.port}: {err}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    try:
        await client.watch_status(device)
        try:
            rid = await client.send(device, kind, request, expiry_s=int(timeout_s))
        except (PermissionError, LookupError) as err:
            print(f"edge-agent: {err}", file=sys.stderr)
            return EXIT_UNAVAILABLE
        status = client.device_status.get(device, {})
        if status.get("state") == "offline" and not json_lines:
            print(f"[{device} is offline; the request waits for it]", file=sys.stderr, flush=True)
        try:
            async for event in client.events(rid, timeout_s):
                if json_lines:
                    print(event.model_dump_json(), flush=True)
                    if event.type in ("answer", "needs_confirmation", "error"):  # type: ignore[attr-defined]
                        return EXIT_ERROR if event.type == "error" else EXIT_OK  # type: ignore[attr-defined]
                    continue
                if event.type == "accepted":  # type: ignore[attr-defined]
                    device = event.device  # type: ignore[attr-defined]  # a pool's member: confirm with it
                code = _print_event(event, device=device, default_device=settings.device_id)
                if code is not None:
                    return code
        except asyncio.TimeoutError:
            print(f"edge-agent: no answer from {device} within {timeout_s:.0f} s (request {rid}; sending it "
                  "again with the same id is safe)", file=sys.stderr)
            return EXIT_TIMEOUT
        return EXIT_ERROR
    finally:
        await client.close()


def _run(args, settings: Settings, kind: str, model: type[BaseModel], fields: dict) -> int:
    device = getattr(args, "device", None) or settings.device_id
    timeout_s = getattr(args, "timeout", None) or DEFAULT_TIMEOUT_S
    try:
        request = model(request_id=new_request_id(), **fields)
    except ValidationError as err:
        print(f"edge-agent: {describe_validation_error(err)}", file=sys.stderr)
        return EXIT_ERROR
    return asyncio.run(exchange(settings, device, kind, request, timeout_s=timeout_s,
                                json_lines=bool(getattr(args, "json", False))))


def ask_remote(args, settings: Settings) -> int:
    """`edge-agent ask` without --local: args.question, .device (the agent to ask), .json, .timeout,
    .mode, and .files_device when the command offers it."""
    return _run(args, settings, "ask", AskRequest,
                {"question": args.question, "mode": getattr(args, "mode", None) or "harness",
                 "files_device": getattr(args, "files_device", None)})


def confirm_remote(args, settings: Settings) -> int:
    """`edge-agent confirm ID` without --local: args.id, .json (and .device/.timeout when given)."""
    action_id = getattr(args, "id", None) or getattr(args, "action_id", None)
    return _run(args, settings, "confirm", ConfirmRequest, {"action_id": action_id or ""})

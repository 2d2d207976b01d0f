"""`edge-agent ask [--local] "question"`: ask the assistant; --local runs it in this process.

With --local the question runs over the data dir with the configured model (the bundled one by
default). --json prints the event stream as JSON lines: one {"event": "pill"} a tool as it
starts, then {"event": "answer"} with the exit kind and usage. Without --local the question goes
over MQTT to the running service (edge_agent.net.client).
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import uuid

from edge_agent.harness.runner import MODES

EXIT_ERROR = 1  # the question ended with exit kind error


def register(sub, parents) -> None:
    p = sub.add_parser("ask", parents=parents, help="ask a question (over MQTT, or --local in-process)")
    p.add_argument("question", help="the question, in quotes")
    p.add_argument("--local", action="store_true", help="run the harness in this process over the data dir")
    p.add_argument("--mode", choices=MODES, default="harness", help="harness (L1-L2-L3) or the direct baseline")
    p.add_argument("--json", action="store_true", help="print the event stream as JSON lines")
    p.add_argument("--device", help="the agent to ask over MQTT (default: device_id from the config)")
    p.add_argument("--files-device", metavar="NAME", help="search files on this device only")
    p.add_argument("--timeout", type=float, help="wall-clock deadline for the question, seconds")
    p.add_argument("--now", help="fixed current time (ISO 8601), for reproducible runs (--local only)")
    p.set_defaults(func=run)


def run(args, settings) -> int:
    if not args.local:
        from edge_agent.net.client import ask_remote

        return ask_remote(args, settings)
    if args.timeout is not None:
        settings.harness.deadline_s = args.timeout
    return asyncio.run(_ask_local(args, settings))


def outcome_event(outcome) -> dict:
    """The final event of the stream: the Outcome as JSON."""
    body = dataclasses.asdict(outcome)
    return {"event": "answer", **body}


async def _ask_local(args, settings) -> int:
    from edge_agent.app import build_assistant

    def on_pill(label: str) -> None:
        if args.json:
            print(json.dumps({"event": "pill", "label": label}), flush=True)
        else:
            print(f"[{label}]", file=sys.stderr, flush=True)

    request_id = uuid.uuid4().hex[:12]
    async with build_assistant(settings, now=args.now) as assistant:
        outcome = await assistant.ask(args.question, request_id=request_id, mode=args.mode, on_pill=on_pill,
                                      device=args.files_device)
    if args.json:
        print(json.dumps(outcome_event(outcome), ensure_ascii=False), flush=True)
    else:
        from edge_agent.harness.reply import source_lines

        print(outcome.answer)
        for line in source_lines(outcome.sources):
            print(line)
        if outcome.attachment:
            a = outcome.attachment
            print(f"(attached: {a.get('name')} on {a.get('device')}: {a.get('path')})")
        print(f"[{outcome.exit_kind}; request {outcome.request_id}; {outcome.usage.get('wall_ms', 0):.0f} ms]",
              file=sys.stderr)
    return EXIT_ERROR if outcome.exit_kind == "error" else 0

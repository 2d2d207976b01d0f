"""`edge-agent confirm [--local] ID`: run exactly the pending action a question previewed, once."""
from __future__ import annotations

import asyncio
import json
import uuid

EXIT_ERROR = 1  # the action was unknown, already confirmed, or failed


def register(sub, parents) -> None:
    p = sub.add_parser("confirm", parents=parents, help="confirm a previewed action (e.g. remember)")
    p.add_argument("id", help="the pending-action id shown with the preview")
    p.add_argument("--local", action="store_true", help="run it in this process over the data dir")
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    p.add_argument("--device", help="the agent that previewed it, over MQTT (default: device_id from the config)")
    p.add_argument("--timeout", type=float, help="seconds to wait for the result over MQTT")
    p.set_defaults(func=run)


def run(args, settings) -> int:
    if not args.local:
        from edge_agent.net.client import confirm_remote

        return confirm_remote(args, settings)
    return asyncio.run(_confirm_local(args, settings))


async def _confirm_local(args, settings) -> int:
    from edge_agent.app import build_assistant
    from edge_agent.commands.ask import outcome_event

    async with build_assistant(settings, confirm_only=True) as assistant:  # no model needed
        outcome = await assistant.confirm(args.id, request_id=uuid.uuid4().hex[:12])
    if args.json:
        print(json.dumps(outcome_event(outcome), ensure_ascii=False))
    else:
        print(outcome.answer)
    return EXIT_ERROR if outcome.exit_kind == "error" else 0

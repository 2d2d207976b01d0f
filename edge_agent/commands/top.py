"""`edge-agent top [--device NAME|--all] [--once] [--json]`: live status of the service(s)."""
from __future__ import annotations

import json
import sys
import time

from edge_agent.ops.top import CONNECT_TIMEOUT_S, BrokerError, StatusWatcher, render_table

WAIT_S = 5.0  # --once: how long to wait for a retained status
REFRESH_S = 1.0  # live mode: table refresh period
CLEAR = "\x1b[H\x1b[2J"  # ANSI: cursor home + clear screen


def register(sub, parents) -> None:
    p = sub.add_parser("top", parents=parents, help="show the retained status of one device or all")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--device", metavar="NAME", help="device to show (default: this device's id)")
    which.add_argument("--all", action="store_true", help="every device on the broker")
    p.add_argument("--once", action="store_true", help="print once and exit")
    p.add_argument("--json", action="store_true", help="with --once: print the status as JSON")
    p.add_argument("--wait", type=float, default=WAIT_S, metavar="S",
                   help=f"--once: seconds to wait for a status (default {WAIT_S:.0f})")
    p.set_defaults(func=run)


def run(args, settings) -> int:
    device = None if args.all else (args.device or settings.device_id)
    watcher = StatusWatcher(settings, device)
    try:
        watcher.start(CONNECT_TIMEOUT_S)
    except BrokerError as err:
        print(f"edge-agent top: {err}", file=sys.stderr)
        return 1
    try:
        if args.once or args.json:
            return _once(args, watcher, device)
        return _live(watcher)
    finally:
        watcher.stop()


def _once(args, watcher: StatusWatcher, device: str | None) -> int:
    if not watcher.wait_any(args.wait):
        print(f"edge-agent top: no status for {device or 'any device'} on {watcher.topic} "
              f"within {args.wait:.0f} s", file=sys.stderr)
        return 1
    if device is None:
        watcher.wait_settled(args.wait)
    statuses = watcher.statuses()
    if args.json:
        print(json.dumps(statuses if device is None else statuses[device], sort_keys=True))
    else:
        print(render_table(statuses))
    return 0


def _live(watcher: StatusWatcher) -> int:
    try:
        while True:
            table = render_table(watcher.statuses())
            sys.stdout.write(f"{CLEAR}edge-agent top — {watcher.topic} — Ctrl-C to quit\n\n{table}\n")
            sys.stdout.flush()
            time.sleep(REFRESH_S)
    except KeyboardInterrupt:
        return 0

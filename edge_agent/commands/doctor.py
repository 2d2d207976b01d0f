"""`edge-agent doctor [--json]`: a pass/warn/fail table of what the service needs; exit 1 on a fail."""
from __future__ import annotations

import json
from dataclasses import asdict

from edge_agent.ops.doctor import BROKER_TIMEOUT_S, run_checks

MARKS = {"pass": "PASS", "warn": "WARN", "fail": "FAIL"}


def register(sub, parents) -> None:
    p = sub.add_parser("doctor", parents=parents, help="check model, memory, broker, disk and clock")
    p.add_argument("--json", action="store_true", help="print the checks as one JSON object")
    p.add_argument("--broker-timeout", type=float, default=BROKER_TIMEOUT_S, metavar="S",
                   help=f"seconds to wait for the broker (default {BROKER_TIMEOUT_S:.0f})")
    p.set_defaults(func=run)


def run(args, settings) -> int:
    checks = run_checks(settings, broker_timeout_s=args.broker_timeout)
    ok = all(c.status != "fail" for c in checks)
    if args.json:
        print(json.dumps({"ok": ok, "checks": [asdict(c) for c in checks]}))
    else:
        width = max(len(c.name) for c in checks)
        for c in checks:
            print(f"{MARKS[c.status]}  {c.name:<{width}}  {c.detail}")
        failed = sum(c.status == "fail" for c in checks)
        print("all checks passed" if ok else f"{failed} check(s) failed")
    return 0 if ok else 1

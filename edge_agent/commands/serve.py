"""`edge-agent serve`: the MQTT service (the device's main job, run by systemd)."""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

log = logging.getLogger(__name__)


def register(sub, parents) -> None:
    p = sub.add_parser("serve", parents=parents, help="answer questions over MQTT (the main job)")
    p.add_argument("--log-format", choices=("json", "text"), default=None,
                   help="log lines as JSON (default when stdout is not a terminal) or text")
    # Test and benchmark seams (hidden): a subprocess cannot be handed a model object, so these
    # make `serve` use a scripted zero/fixed-latency model and journal every execution.
    p.add_argument("--scripted-delay-ms", type=float, default=None, help=argparse.SUPPRESS)
    p.add_argument("--exec-journal", type=Path, default=None, help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def run(args, settings) -> int:
    from edge_agent.llm.base import ModelError
    from edge_agent.net.runtime import StartRefused, serve
    from edge_agent.store.db import DatabaseDamaged
    from edge_agent.ops.logging import setup_logging

    json_lines = (args.log_format or ("text" if sys.stdout.isatty() else "json")) == "json"
    verbosity = getattr(args, "verbose", 0) or 0
    setup_logging([logging.INFO, logging.INFO, logging.DEBUG][min(verbosity, 2)], json_lines,
                  log_text=settings.ops.log_text)
    try:
        return serve(settings, scripted_delay_ms=args.scripted_delay_ms, exec_journal=args.exec_journal)
    except (ModelError, StartRefused, DatabaseDamaged) as err:  # one clear line, a non-zero exit
        what = "cannot open the database" if isinstance(err, DatabaseDamaged) else "cannot start"
        log.error("%s: %s", what, err)
        print(f"edge-agent serve: {what}: {err}", file=sys.stderr)
        return 1

"""The one entry point, `edge-agent`. Subcommands are thin and live in edge_agent/commands/.

Each module in edge_agent.commands has `register(subparsers, parents)`, which adds its
subcommand(s) with `set_defaults(func=...)`; func(args, settings) returns the exit code.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys
from pathlib import Path

from edge_agent import commands
from edge_agent.config import ConfigError, Settings, load_settings

log = logging.getLogger(__name__)


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    g = common.add_argument_group("global options")
    g.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS,
                   help="data directory (env EDGE_AGENT_DATA_DIR; default a per-user data dir)")
    g.add_argument("--model", type=Path, default=argparse.SUPPRESS,
                   help="GGUF model file (env EDGE_AGENT_MODEL; default the bundled tiny model)")
    g.add_argument("--config", type=Path, default=argparse.SUPPRESS,
                   help="TOML config file (env EDGE_AGENT_CONFIG)")
    g.add_argument("--no-adapter", action="store_true", default=argparse.SUPPRESS,
                   help="run the model without its task adapter (model.adapter = none)")
    g.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                   help="more log output (repeat for debug)")
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _common_options()
    parser = argparse.ArgumentParser(prog="edge-agent", parents=[common],
                                     description="On-device assistant: a small model, your data, MQTT.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"edge_agent.commands.{info.name}")
        module.register(sub, [common])
    return parser


def settings_from_args(args: argparse.Namespace) -> Settings:
    overrides = {
        "data_dir": getattr(args, "data_dir", None),
        "model.path": getattr(args, "model", None),
        "model.adapter": "none" if getattr(args, "no_adapter", False) else None,
    }
    return load_settings(getattr(args, "config", None), overrides)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    verbosity = getattr(args, "verbose", 0) or 0
    logging.basicConfig(level=[logging.WARNING, logging.INFO, logging.DEBUG][min(verbosity, 2)],
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        settings = settings_from_args(args)
    except ConfigError as err:
        print(f"edge-agent: config error: {err}", file=sys.stderr)
        return 2
    from edge_agent.store.db import DatabaseDamaged

    try:
        return int(args.func(args, settings) or 0)
    except DatabaseDamaged as err:  # every command that opens the database: one line, not a traceback
        print(f"edge-agent: cannot open the database: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())

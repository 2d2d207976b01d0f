"""`edge-agent config show [--json]` and `edge-agent config check [FILE]`.

show prints the effective settings (secrets redacted) and which layer set each key: default,
the TOML file, the environment (EDGE_AGENT_*) or the command line. check validates a file the
way start-up does, plus what pydantic cannot see (time zone names, files that must exist), and
names the key and the file on error.
"""
from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from edge_agent import config as cfg
from edge_agent.config import ConfigError, Settings, load_settings

REDACTED = "********"
SECRET_WORDS = ("password", "secret", "token")  # keys named so, or ending _<word>, are never printed


def is_secret(dotted: str) -> bool:
    """mqtt.password, x.api_token... but not harness.token_budget."""
    last = dotted.rsplit(".", 1)[-1]
    return any(last == w or last.endswith("_" + w) for w in SECRET_WORDS)


def register(sub, parents) -> None:
    p = sub.add_parser("config", parents=parents, help="show or check the configuration")
    actions = p.add_subparsers(dest="config_action", metavar="ACTION", required=True)
    show = actions.add_parser("show", parents=parents, help="print the effective settings and their sources")
    show.add_argument("--json", action="store_true", help="print one JSON object")
    show.set_defaults(func=run_show)
    check = actions.add_parser("check", parents=parents, help="validate a config file (exit 1 on error)")
    check.add_argument("file", nargs="?", type=Path, help="TOML file (default: --config / EDGE_AGENT_CONFIG)")
    check.set_defaults(func=run_check)


def _flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, dotted + "."))
        else:
            out[dotted] = value
    return out


def _flag_overrides(args) -> dict[str, Any]:
    """The command-line layer, as cli.settings_from_args builds it."""
    return {k: v for k, v in {"data_dir": getattr(args, "data_dir", None),
                              "model.path": getattr(args, "model", None)}.items() if v is not None}


def key_sources(config_file: Path | None, flags: dict[str, Any],
                environ: dict[str, str] | None = None) -> dict[str, str]:
    """dotted key -> the last layer that set it; keys no layer set are absent (defaults)."""
    environ = dict(os.environ) if environ is None else environ
    layers: list[tuple[str, dict[str, Any]]] = []
    if config_file is not None and config_file.is_file():
        layers.append((str(config_file), _flatten(tomllib.loads(config_file.read_text(encoding="utf-8")))))
    layers.append(("environment", _flatten(cfg.env_overrides(environ))))
    layers.append(("command line", dict(flags)))
    out: dict[str, str] = {}
    for origin, keys in layers:
        for key in keys:
            out[key] = origin
    return out


def redacted(settings: Settings) -> dict[str, Any]:
    """The settings as JSON-able data with every secret replaced."""
    flat = _flatten(settings.model_dump(mode="json"))
    return {k: (REDACTED if v is not None and is_secret(k) else v)
            for k, v in flat.items()}


def run_show(args, settings: Settings) -> int:
    config_file = cfg.config_path_from(None, getattr(args, "config", None))
    sources = key_sources(config_file, _flag_overrides(args))
    values = redacted(settings)
    if args.json:
        print(json.dumps({"config_file": str(config_file) if config_file else None, "settings": values,
                          "sources": {k: sources.get(k, "default") for k in values}}, sort_keys=True))
        return 0
    print(f"# config file: {config_file or '(none)'}")
    width = max(len(k) + len(json.dumps(v)) for k, v in values.items()) + 3
    for key, value in values.items():
        line = f"{key} = {json.dumps(value)}"
        print(f"{line:<{width}} # {sources.get(key, 'default')}")
    return 0


def semantic_errors(settings: Settings, sources: dict[str, str]) -> list[str]:
    """What validates as a type but cannot work, each naming the key and where it was set."""
    errors: list[tuple[str, str]] = []
    if settings.timezone:
        try:
            ZoneInfo(settings.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            errors.append(("timezone", f"unknown IANA time zone {settings.timezone!r}"))
    if settings.model.path is not None and not settings.model.path.is_file():
        errors.append(("model.path", f"model file not found: {settings.model.path}"))
    if settings.mqtt.tls_ca is not None and not settings.mqtt.tls_ca.is_file():
        errors.append(("mqtt.tls_ca", f"CA file not found: {settings.mqtt.tls_ca}"))
    for i, root in enumerate(settings.files_roots):
        if not root.is_dir():
            errors.append(("files_roots", f"entry {i} is not a directory: {root}"))
    return [f"{sources.get(key, 'default')}: {key}: {msg}" for key, msg in errors]


def run_check(args, settings: Settings) -> int:
    config_file = args.file or cfg.config_path_from(None, getattr(args, "config", None))
    flags = _flag_overrides(args)
    try:
        checked = load_settings(config_file, flags)
        errors = semantic_errors(checked, key_sources(config_file, flags))
    except (ConfigError, tomllib.TOMLDecodeError) as err:
        print(f"edge-agent: config error: {err}", file=sys.stderr)
        return 1
    for line in errors:
        print(f"edge-agent: config error: {line}", file=sys.stderr)
    if errors:
        return 1
    print(f"ok: {config_file or '(defaults and environment)'}")
    return 0

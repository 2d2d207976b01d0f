"""`python -m edge_agent.ops.sizing --config FILE`: the systemd drop-in with the memory limits for
the configured model (install.sh writes it). The formula is edge_agent.modelfile.sizing's."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from edge_agent.config import ConfigError, load_settings
from edge_agent.modelfile.files import configured_model_path
from edge_agent.modelfile.sizing import SizingError, estimate, systemd_limits


def main(argv: list[str] | None = None) -> int:
    """Print a systemd drop-in with the memory limits for the configured model."""
    parser = argparse.ArgumentParser(prog="python -m edge_agent.ops.sizing", description=main.__doc__)
    parser.add_argument("--config", type=Path, help="TOML config (default: EDGE_AGENT_CONFIG)")
    parser.add_argument("--model", type=Path, help="GGUF file (default: the configured model)")
    parser.add_argument("--json", action="store_true", help="print the estimate as JSON")
    args = parser.parse_args(argv)
    try:
        settings = load_settings(args.config)
        path = args.model or configured_model_path(settings)
        need = estimate(path, n_ctx=settings.model.n_ctx, n_batch=settings.model.n_batch,
                        keep_sessions=settings.model.keep_sessions)
    except (ConfigError, SizingError, OSError, ValueError) as err:
        print(f"sizing: {err}", file=sys.stderr)
        return 1
    limits = systemd_limits(need)
    if args.json:
        print(json.dumps({**asdict(need), "total_mb": need.total_mb, **limits}))
        return 0
    print(f"# {path.name}: estimate {need.total_mb:.0f} MiB (model {need.model_mb:.0f}, KV {need.kv_mb:.0f}, "
          f"sessions {need.sessions_mb:.0f}, logits {need.logits_mb:.0f}, runtime {need.runtime_mb:.0f})")
    print("[Service]")
    print(f"MemoryHigh={limits['MemoryHigh']}M")
    print(f"MemoryMax={limits['MemoryMax']}M")
    return 0


if __name__ == "__main__":
    sys.exit(main())

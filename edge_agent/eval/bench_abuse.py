"""Every attack of issue 10 against a real Mosquitto and a running agent service; counts what held.

Each case is one attempt by a paired party (or a flaky load) to do what it may not: forge a
reply, forge file hits, confirm another's action, read a file through a symlink out of a file
peer's roots, plant a "memory" through a question, crowd out other askers with 300 questions,
crash intake with nested JSON, and overlap two generations by cancelling one under load (the
real bundled model, in a child process, so a crash is observed rather than suffered); then the
takeovers, storage faults and hostile files of abuse_faults. The agent
runs in this process with the real harness on the scripted model (edge_agent.net.scripted),
its own SQLite store and the generated ACL. Prints {"cases", "held", "failed", ...}.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Awaitable, Callable

from edge_agent.config import MqttSettings, Settings
from edge_agent.eval.abuse_cases import CASES as FIRST_CASES, Rig
from edge_agent.eval.abuse_faults import FAULT_CASES
from edge_agent.net.broker import start_local_broker
from edge_agent.net.pairing import PairingPaths, add_member, read_password
from edge_agent.paths import PROJECT_ROOT

log = logging.getLogger(__name__)

PREFIX = "edge/v1"
MEMBERS = {"pi": "agent", "laptop": "device", "desk": "device", "me": "client", "eve": "client"}
CASES = {**FIRST_CASES, **FAULT_CASES}
CASE_TIMEOUT_S = 120.0  # one case that hangs is a failure, not a hung benchmark
PROBE_TIMEOUT_S = 600.0  # the real-model cancellation probe (model load + three questions)
CASE_TIMEOUTS = {"cancel_under_load": PROBE_TIMEOUT_S + 30.0}
"""A case's own bound where CASE_TIMEOUT_S is too short: the probe's first load of the bundled model in
a fresh data dir merges its adapter (about two minutes here with the default's fitted head)."""


def add_arguments(parser) -> None:
    parser.add_argument("--only", action="append", default=[], metavar="CASE",
                        help=f"run only these cases (repeatable): {', '.join(CASES)}")
    parser.add_argument("--skip-real-model", action="store_true",
                        help="leave out the case that loads the real model (it is then reported as skipped)")


@dataclass
class Result:
    """One case's outcome."""

    held: bool
    """The attack failed (the service held)."""
    detail: str
    """What was observed."""
    seconds: float
    """How long the case took."""


async def _run_case(name: str, case: Callable[[Rig], Awaitable[tuple[bool, str]]], rig: Rig) -> Result:
    started = time.monotonic()
    try:
        held, detail = await asyncio.wait_for(case(rig), CASE_TIMEOUTS.get(name, CASE_TIMEOUT_S))
    except Exception as err:  # an exception is a failed defence, reported with its cause
        log.exception("case %s raised", name)
        held, detail = False, f"{type(err).__name__}: {err}"
    return Result(held, detail, round(time.monotonic() - started, 2))


async def run_cases(root: Path, names: list[str], model_path: Path | None) -> dict[str, Result]:
    pairing = PairingPaths(root / "pairing")
    for name, role in MEMBERS.items():
        add_member(pairing, name, role, prefix=PREFIX, host="127.0.0.1", port=0)
    broker = start_local_broker(root / "broker", password_file=pairing.password_file, acl_file=pairing.acl_file)

    def settings_for(name: str, **extra) -> Settings:
        data = root / f"data-{name}"
        data.mkdir(exist_ok=True)
        mqtt = MqttSettings(host=broker.host, port=broker.port, username=name,
                            password=read_password(pairing, name), prefix=PREFIX)
        device = name if MEMBERS[name] in ("agent", "device") else "pi"
        return Settings(data_dir=data, device_id=device, mqtt=mqtt, **extra)

    results: dict[str, Result] = {}
    rig = Rig(root, settings_for, model_path)
    try:
        await rig.start()
        for name in names:
            results[name] = await _run_case(name, CASES[name], rig)
            log.info("case %s: %s (%s)", name, "held" if results[name].held else "FAILED", results[name].detail)
    finally:
        await rig.close()
        broker.kill()
    return results


def resolve_model(settings: Settings) -> Path:
    """The real model the cancellation case loads: the configured one, else the bundled one."""
    if settings.model.path is not None:
        return settings.model.path
    from edge_agent.llm.bundled import ensure_bundled_model

    return ensure_bundled_model(settings.models_dir)


def run(args, settings: Settings) -> dict:
    names = list(args.only or CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        raise SystemExit(f"edge-agent bench abuse: unknown case(s) {unknown}; known: {', '.join(CASES)}")
    skipped = []
    if args.skip_real_model and "cancel_under_load" in names:
        names.remove("cancel_under_load")
        skipped.append("cancel_under_load")
    model_path = resolve_model(settings) if "cancel_under_load" in names else None
    with tempfile.TemporaryDirectory(prefix="edge-agent-bench-abuse-") as tmp:
        results = asyncio.run(run_cases(Path(tmp), names, model_path))
    failed = [n for n, r in results.items() if not r.held]
    return {"cases": len(results), "held": len(results) - len(failed), "failed": failed, "skipped": skipped,
            "details": {n: r.detail for n, r in results.items()},
            "seconds": {n: r.seconds for n, r in results.items()}}


def probe_command(data_dir: Path, model_path: Path) -> list[str]:
    """The child process of the cancellation case (see abuse_cases.cancel_probe)."""
    return [sys.executable, "-m", "edge_agent.eval.abuse_cases", "--cancel-probe", str(data_dir), str(model_path)]


def run_probe(data_dir: Path, model_path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
    return subprocess.run(probe_command(data_dir, model_path), capture_output=True, text=True, env=env,
                          timeout=PROBE_TIMEOUT_S, check=False)


def probe_verdict(proc: subprocess.CompletedProcess) -> tuple[bool, str]:
    """Held when the child lived, every question ended with an exit kind and no two decodes overlapped."""
    if proc.returncode != 0:
        lines = (proc.stderr or "").strip().splitlines()
        why = [line for line in lines if "GGML_ASSERT" in line or "Error" in line][:2] or lines[-2:]
        return False, f"the process died (exit {proc.returncode}): {' | '.join(why)}"
    try:
        got = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return False, f"no result from the probe: {proc.stdout[-300:]!r}"
    # Exactly 1: decodes were seen (the counter works) and never two at once.
    held = got["cancelled"] and got["max_concurrent_decodes"] == 1 and all(got["exit_kinds"])
    return held, (f"cancelled mid-generation: {got['cancelled']}; then exit kinds {got['exit_kinds']}; "
                  f"most decodes at once {got['max_concurrent_decodes']}")

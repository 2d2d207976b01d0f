"""`edge-agent serve` as a process: the request log, the assistant, the service, systemd, signals."""
from __future__ import annotations

import asyncio
import faulthandler
import logging
import signal
import sys
from pathlib import Path

from edge_agent.config import Settings
from edge_agent.net.pairing import PairingError, PairingPaths, load_members
from edge_agent.net.service import AgentService
from edge_agent.ops import sdnotify
from edge_agent.store.db import connect

log = logging.getLogger(__name__)


def pairing_paths(settings: Settings) -> PairingPaths:
    return PairingPaths(settings.data_dir / "pairing")


def paired_devices(settings: Settings):
    """A callable listing devices paired on this machine (empty if pairing is done elsewhere)."""
    paths = pairing_paths(settings)

    def names() -> list[str]:
        try:
            return [m.name for m in load_members(paths).values() if m.role in ("agent", "device")]
        except PairingError as err:
            log.warning("%s", err)
            return []
    return names


async def _systemd_status(service: AgentService) -> None:
    """The one line `systemctl status` shows, refreshed every status interval."""
    while True:
        await asyncio.sleep(service.settings.ops.status_interval_s)
        snap = service.metrics.snapshot(queue_depth=service.queue_depth)
        state = "connected" if service.bridge.connected else "reconnecting"
        sdnotify.status(f"{state}; {snap['requests']} answered; queue {snap['queue_depth']}; "
                        f"p50 {snap['latency_p50_ms']} ms")


class StartRefused(RuntimeError):
    """A start-up check failed (doctor.start_failures); the message names each."""


async def serve_async(settings: Settings, *, scripted_delay_ms: float | None = None,
                      exec_journal: Path | None = None) -> int:
    from edge_agent.app import build_assistant
    from edge_agent.ops.doctor import start_failures

    failed = await asyncio.to_thread(start_failures, settings, model=scripted_delay_ms is None)
    if failed:
        raise StartRefused("; ".join(f"{c.name}: {c.detail}" for c in failed))
    conn = await connect(settings.db_path)
    service = AgentService(settings, conn, paired_devices=paired_devices(settings))
    loop = asyncio.get_running_loop()
    bounded = False

    def stop() -> None:
        """A clean stop (the running request's grace, the broker goodbye, closing the stores, the
        executor's threads) bounded by ops.stop_limit_s: past it, stacks to stderr and exit 1."""
        nonlocal bounded
        if not bounded:  # the first signal starts the clock; another one does not restart it
            bounded = True
            limit = settings.ops.stop_limit_s
            log.info("stopping (at most %.0f s)", limit)
            faulthandler.dump_traceback_later(limit, exit=True, file=sys.stderr)
        service.stop()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop)
    model = None
    if scripted_delay_ms is not None:
        from edge_agent.net.scripted import scripted_model

        model = scripted_model(scripted_delay_ms)
        log.warning("serving with the scripted test model (%.1f ms a generation)", scripted_delay_ms)
    watchdog = asyncio.create_task(sdnotify.run_watchdog(), name="watchdog")
    extension = asyncio.create_task(sdnotify.extend_start(), name="start-extension")  # until ready
    systemd_status = asyncio.create_task(_systemd_status(service), name="systemd-status")
    m = settings.mqtt

    def ready() -> None:
        extension.cancel()
        sdnotify.ready(f"serving {settings.device_id} via {m.host}:{m.port}")
        log.info("ready: serving %s via %s:%s", settings.device_id, m.host, m.port)

    try:
        sdnotify.status("loading the model")
        async with build_assistant(settings, model=model, remote_search=service.remote.search,
                                   list_remote_devices=service.directory.list_remote_devices) as assistant:
            asker = assistant
            if exec_journal is not None:
                from edge_agent.net.scripted import JournalingAsker

                asker = JournalingAsker(assistant, exec_journal)
            await service.run(asker, on_ready=ready)
            sdnotify.stopping("stopped cleanly")
    finally:
        watchdog.cancel()
        extension.cancel()
        systemd_status.cancel()
        await conn.close()
    return 0


def serve(settings: Settings, *, scripted_delay_ms: float | None = None, exec_journal: Path | None = None) -> int:
    return asyncio.run(serve_async(settings, scripted_delay_ms=scripted_delay_ms, exec_journal=exec_journal))

"""`edge-agent files serve`: a device without a model answers file searches over MQTT.

It indexes its folders into its own SQLite file (<data_dir>/file-peer-<device>.db; only new or
changed files are read again, every REINDEX_INTERVAL_S, walking and reading in worker threads so
a search is never held up), publishes its retained status and answers
<prefix>/<device>/files/search/<sender> with hits and their best passages. Only files whose real
path is inside its roots are indexed or served (store.files checks at both times). Its session
is not persistent: a search that finds it offline is answered by nobody, which the agent
reports as "unreachable" instead of waiting.
"""
from __future__ import annotations

import asyncio
import logging
import signal
import sys
from pathlib import Path

import aiosqlite

from edge_agent.config import Settings
from edge_agent.net.bridge import MqttBridge
from edge_agent.net.events import Error, dump
from edge_agent.net.intake import Rejected, read_request
from edge_agent.net.mqtt_types import ConnectOptions, Message, MqttError, private_client_id
from edge_agent.net.presence import StatusPublisher, offline_will
from edge_agent.net.remote_files import answer_file_search
from edge_agent.net.tasks import cancel_and_wait
from edge_agent.net.topics import Topics
from edge_agent.ops import sdnotify
from edge_agent.store.db import connect
from edge_agent.store.files import index_paths
from edge_agent.store.synonyms import use_user_synonyms

log = logging.getLogger(__name__)

REINDEX_INTERVAL_S = 300.0  # look for new or changed files this often


def peer_db_path(settings: Settings, device: str) -> Path:
    return settings.data_dir / f"file-peer-{device}.db"


class FilePeer:
    """Serves one device's file index."""

    def __init__(self, settings: Settings, conn: aiosqlite.Connection, device: str, roots: list[Path]):
        self.settings = settings
        self.conn = conn
        self.device = device
        self.roots = roots
        self.topics = Topics(settings.mqtt.prefix)
        m = settings.mqtt
        opts = ConnectOptions(m.host, m.port, private_client_id(f"edge-agent-files-{device}", m.password),
                              m.username, m.password, m.tls_ca,
                              m.keepalive_s, clean_start=True, session_expiry_s=0,
                              will=offline_will(self.topics, device, "files"))
        self.bridge = MqttBridge(opts, on_connect=self._on_connect)
        self.bridge.add_subscription(self.topics.files_search(device, "+"))
        self.files = 0
        self.status = StatusPublisher(self.bridge, self.topics, device, "files", lambda: {"files": self.files},
                                      settings.ops.status_interval_s)
        self._stop = asyncio.Event()

    def stop(self) -> None:
        self._stop.set()

    async def _on_connect(self, session_present: bool) -> None:
        self.status.publish_online()

    async def reindex(self) -> None:
        report = await index_paths(self.conn, self.device, self.roots)
        for line in report.rejects:
            log.warning("index: %s", line)
        self.files = report.indexed + report.unchanged
        log.info("indexed %d files of %s (%d new or changed, %d removed)", self.files, self.device,
                 report.indexed, report.removed)

    async def handle(self, msg: Message) -> None:
        got = read_request(msg, self.topics, self.device, self.settings.mqtt.max_payload_bytes)
        if isinstance(got, Rejected):
            log.warning("rejected file search: %s", got.message, extra={"sender": got.sender, "code": got.code})
            if got.route is not None:
                err = Error(request_id=got.request_id, seq=0, code=got.code, message=got.message)
                self.bridge.publish(got.route.topic, dump(err), qos=1, correlation=got.route.correlation)
            return
        payload = await answer_file_search(self.conn, self.device, got.request)  # type: ignore[arg-type]
        self.bridge.publish(got.route.topic, payload, qos=1, correlation=got.route.correlation)

    async def _serve_messages(self) -> None:
        async for msg in self.bridge.messages():
            try:
                await self.handle(msg)
            except Exception:
                log.exception("file search on %s failed", msg.topic)

    async def _reindex_loop(self) -> None:
        while True:
            await asyncio.sleep(REINDEX_INTERVAL_S)
            try:
                await self.reindex()
                self.status.publish_online()
            except Exception:
                log.exception("re-indexing failed")

    async def run(self) -> None:
        await self.reindex()
        await self.bridge.start()
        tasks = [asyncio.create_task(self._serve_messages()), asyncio.create_task(self._reindex_loop()),
                 asyncio.create_task(self.status.run()), asyncio.create_task(sdnotify.run_watchdog())]
        await self.bridge.wait_connected()
        sdnotify.ready(f"serving files of {self.device}")
        log.info("file peer %s ready: %d files", self.device, self.files)
        try:
            await self._stop.wait()
        finally:
            await cancel_and_wait(tasks)
            await self.status.publish_offline()
            await self.bridge.close()


async def _serve(settings: Settings, device: str, roots: list[Path]) -> int:
    use_user_synonyms(settings.data_dir)  # the same words find the same files here as on the agent
    conn = await connect(peer_db_path(settings, device))
    try:
        peer = FilePeer(settings, conn, device, roots)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, peer.stop)
        await peer.run()
    finally:
        await conn.close()
    return 0


def serve_files(args, settings: Settings) -> int:
    """Entry point of `edge-agent files serve --root DIR... [--device NAME]`."""
    from edge_agent.ops.logging import setup_logging

    roots = list(getattr(args, "root", None) or settings.files_roots)
    device = getattr(args, "device", None) or settings.device_id
    if not roots:
        print("edge-agent files serve: no --root given and files_roots is empty", file=sys.stderr)
        return 2
    setup_logging(logging.INFO, not sys.stdout.isatty(), log_text=settings.ops.log_text)
    try:
        return asyncio.run(_serve(settings, device, roots))
    except MqttError as err:
        print(f"edge-agent files serve: {err}", file=sys.stderr)
        return 2

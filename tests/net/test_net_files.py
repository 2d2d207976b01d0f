"""find_file across two file peers over a real broker: one answers, one is offline, one is silent."""
from __future__ import annotations

import asyncio
import contextlib
import signal
import time

from netkit import FakeAsker, kill_tree, spawn_cli, until

from edge_agent.net.bridge import MqttBridge
from edge_agent.net.file_peer import FilePeer, peer_db_path
from edge_agent.net.mqtt_types import ConnectOptions
from edge_agent.net.presence import offline_will
from edge_agent.net.topics import Topics
from edge_agent.ops.status import status_payload
from edge_agent.store.api import Store
from edge_agent.store.db import connect
from edge_agent.tools.base import ToolContext
from edge_agent.tools.clock import system_clock
from edge_agent.tools.find_file import FindFile, FindFileArgs
from edge_agent.tools.list_devices import ListDevices, ListDevicesArgs

RESUME = "Nadia Ferris curriculum vitae: ten years of garden design, fluent in Welsh."
TAXES = "Tax return 2025 for Nadia Ferris: refund expected in March."


@contextlib.asynccontextmanager
async def running_peer(settings, root):
    conn = await connect(peer_db_path(settings, settings.device_id))
    peer = FilePeer(settings, conn, settings.device_id, [root])
    task = asyncio.create_task(peer.run())
    try:
        await peer.bridge.wait_connected(10)
        yield peer
    finally:
        peer.stop()
        await asyncio.wait_for(task, 10)
        await conn.close()


async def test_find_file_across_two_peers_with_one_offline(settings_for, start_agent, tmp_path):
    (tmp_path / "laptop-files" / "cv").mkdir(parents=True)
    (tmp_path / "laptop-files" / "cv" / "resume.txt").write_text(RESUME, encoding="utf-8")
    (tmp_path / "desk-files").mkdir()
    (tmp_path / "desk-files" / "tax-return.txt").write_text(TAXES, encoding="utf-8")
    settings = settings_for("pi")
    service = await start_agent(FakeAsker(), settings)
    async with running_peer(settings_for("laptop"), tmp_path / "laptop-files"):
        async with running_peer(settings_for("desk"), tmp_path / "desk-files"):
            await until(lambda: service.directory.online("desk") and service.directory.online("laptop"))
            both = await service.remote.search("Nadia Ferris", [])
        # desk has stopped: its retained status says offline.
        await until(lambda: not service.directory.online("desk"))
        started = time.monotonic()
        result = await service.remote.search("curriculum vitae", [])
        elapsed = time.monotonic() - started
        async with Store.open(settings.db_path) as store:
            ctx = ToolContext(store=store, now=system_clock(None), device_id="pi",
                              remote_search=service.remote.search,
                              list_remote_devices=service.directory.list_remote_devices)
            found = await FindFile(enforce_guards=False)(FindFileArgs(query="resume"), ctx)
            devices = await ListDevices(enforce_guards=False)(ListDevicesArgs(), ctx)
    assert sorted(h["device"] for h in both["hits"]) == ["desk", "laptop"] and both["unreachable"] == []
    assert [h["name"] for h in result["hits"]] == ["resume.txt"]
    hit = result["hits"][0]
    assert hit["device"] == "laptop" and hit["path"].endswith("cv/resume.txt") and "curriculum vitae" in hit["excerpt"]
    assert result["unreachable"] == ["desk"]
    assert elapsed < 1.0  # an offline device is not waited for
    assert found.payload["best"]["name"] == "resume.txt" and found.payload["unreachable"] == ["desk"]
    assert "Unreachable: desk" in found.text
    online = {d["id"]: d["online"] for d in devices.payload}
    assert online == {"pi": True, "laptop": True, "desk": False}


async def test_a_silent_device_is_unreachable_after_the_deadline(settings_for, start_agent):
    settings = settings_for("pi")
    service = await start_agent(FakeAsker(), settings)
    service.remote.deadline_s = 0.5
    topics = Topics("edge/v1")
    # "desk" says it is online but never answers a search.
    silent = MqttBridge(ConnectOptions(settings.mqtt.host, settings.mqtt.port, "silent-desk", "desk",
                                       "desk-secret", clean_start=True, will=offline_will(topics, "desk", "files")))
    await silent.start()
    try:
        await silent.publish(topics.status("desk"), status_payload("online", "desk", {"role": "files"}), retain=True)
        await until(lambda: service.directory.online("desk"))
        started = time.monotonic()
        result = await service.remote.search("anything", ["desk"])
        elapsed = time.monotonic() - started
    finally:
        await silent.close()
    assert result == {"hits": [], "unreachable": ["desk"]}
    assert 0.45 < elapsed < 2.0


async def test_files_serve_command_answers_searches(settings_for, start_agent, tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "resume.txt").write_text(RESUME, encoding="utf-8")
    service = await start_agent(FakeAsker(), settings_for("pi"))
    laptop = settings_for("laptop")
    peer = spawn_cli(["files", "serve", "--root", str(root), "--device", "laptop"], laptop, tmp_path / "peer.log")
    try:
        await until(lambda: service.directory.online("laptop"), 30)
        result = await service.remote.search("curriculum vitae", ["laptop"])
        kill_tree(peer, signal.SIGTERM)  # a clean stop publishes "offline"
        await until(lambda: not service.directory.online("laptop"), 10)
    finally:
        kill_tree(peer)
    assert [h["name"] for h in result["hits"]] == ["resume.txt"] and result["unreachable"] == []
    assert peer.returncode == 0, (tmp_path / "peer.log").read_text()[-2000:]


async def test_a_named_pipe_in_the_folder_neither_hangs_files_serve_nor_its_sigterm(settings_for, start_agent,
                                                                                    tmp_path):
    # pipe.txt, a FIFO nobody writes to: opening it to read would wait forever. The peer skips it,
    # comes online, answers, and stops within 5 s of SIGTERM.
    import os
    import time

    root = tmp_path / "docs"
    root.mkdir()
    (root / "resume.txt").write_text(RESUME, encoding="utf-8")
    os.mkfifo(root / "pipe.txt")
    service = await start_agent(FakeAsker(), settings_for("pi"))
    peer = spawn_cli(["files", "serve", "--root", str(root), "--device", "laptop"], settings_for("laptop"),
                     tmp_path / "peer.log")
    try:
        await until(lambda: service.directory.online("laptop"), 30)
        result = await service.remote.search("curriculum vitae", ["laptop"])
        started = time.monotonic()
        os.killpg(peer.pid, signal.SIGTERM)
        peer.wait(5)
        stopped_s = time.monotonic() - started
    finally:
        kill_tree(peer)
    assert [h["name"] for h in result["hits"]] == ["resume.txt"]
    assert stopped_s < 5 and peer.returncode == 0, (tmp_path / "peer.log").read_text()[-2000:]

"""Real-broker fixtures: paired names, a Mosquitto per test on a free loopback port (persistence
on, the generated ACL), settings for each name, and an in-process agent service.
"""
from __future__ import annotations

import asyncio
from typing import Any, Callable

import pytest
from netkit import MEMBERS, PREFIX

from edge_agent.config import MqttSettings, Settings
from edge_agent.net.broker import LocalBroker, start_local_broker
from edge_agent.net.pairing import PairingPaths, add_member
from edge_agent.net.service import AgentService
from edge_agent.store.db import connect


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/net/" in str(item.fspath):
            item.add_marker(pytest.mark.broker)


@pytest.fixture(scope="session")
def pairing(tmp_path_factory) -> PairingPaths:
    paths = PairingPaths(tmp_path_factory.mktemp("pairing"))
    for name, role in MEMBERS.items():
        add_member(paths, name, role, prefix=PREFIX, host="127.0.0.1", port=1883, password=f"{name}-secret")
    return paths


@pytest.fixture
def broker(tmp_path, pairing) -> LocalBroker:
    b = start_local_broker(tmp_path / "broker", password_file=pairing.password_file, acl_file=pairing.acl_file)
    yield b
    b.kill()


@pytest.fixture
def settings_for(tmp_path, broker) -> Callable[..., Settings]:
    """Settings for a paired name, with its own data dir."""
    def make(name: str, **overrides: Any) -> Settings:
        data = tmp_path / f"data-{name}"
        data.mkdir(exist_ok=True)
        mqtt = MqttSettings(**{"host": broker.host, "port": broker.port, "username": name,
                               "password": f"{name}-secret", "prefix": PREFIX, **overrides.pop("mqtt", {})})
        device = name if MEMBERS.get(name) == "device" else "pi"
        return Settings(data_dir=data, device_id=overrides.pop("device_id", device), mqtt=mqtt, **overrides)
    return make


@pytest.fixture
async def start_agent(settings_for):
    """start_agent(asker, **kw) -> a running in-process AgentService for device pi (stopped at teardown)."""
    running: list[tuple[AgentService, asyncio.Task, Any]] = []

    async def start(asker, settings: Settings | None = None, **kwargs) -> AgentService:
        s = settings or settings_for("pi")
        conn = await connect(s.db_path)
        service = AgentService(s, conn, **kwargs)
        task = asyncio.create_task(service.run(asker))
        running.append((service, task, conn))
        await service.bridge.wait_connected(10)
        return service

    yield start
    for service, task, conn in running:
        service.stop()
        try:
            await asyncio.wait_for(task, 15)  # a service that cannot stop cleanly fails the test
        finally:
            await conn.close()



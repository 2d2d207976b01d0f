"""Fixtures for tool tests: the sample world loaded once a session, copied fresh for each test."""
from __future__ import annotations

import asyncio
import shutil

import pytest

from edge_agent.ingest.world import load_world, read_world_info
from edge_agent.paths import WORLD_DIR
from edge_agent.store import Store
from edge_agent.tools.context import local_context


@pytest.fixture(scope="session")
def world_info():
    return read_world_info(WORLD_DIR)


@pytest.fixture(scope="session")
def world_db_file(tmp_path_factory):
    """The sample world in a SQLite file, loaded once; tests copy it so none sees another's writes."""
    path = tmp_path_factory.mktemp("world") / "world.db"

    async def build():
        async with Store.open(path) as store:
            report = await load_world(store, WORLD_DIR)
        assert report.problems == [] and report.rejects == [], (report.problems, report.rejects)

    asyncio.run(build())
    return path


@pytest.fixture
async def world_store(world_db_file, tmp_path):
    copy = tmp_path / "world.db"
    shutil.copyfile(world_db_file, copy)
    async with Store.open(copy) as store:
        yield store


@pytest.fixture
def world_ctx(world_store, world_info):
    """A context on the world with its fixed clock (world.toml's now, in its time zone)."""
    return local_context(world_store, world_info.timezone, "pi", world_info.now)


@pytest.fixture
async def empty_store(tmp_path):
    async with Store.open(tmp_path / "empty.db") as store:
        yield store

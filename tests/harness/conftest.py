"""Harness test fixtures: a real SQLite store seeded with a tiny household, scripted models by role."""
from __future__ import annotations

import pytest

from edge_agent.harness.runner import Harness
from edge_agent.harness.skills import load_skills
from edge_agent.harness.toolbox import Toolbox
from edge_agent.store.api import Store
from edge_agent.store.db import connect
from edge_agent.tools.base import ToolContext
from edge_agent.tools.clock import fixed_clock
from edge_agent.tools.registry import build_tools
from edge_agent.harness.turn import Limits
from harness_kit import DEFAULT_LIMITS, NOW, ZONE, seed


@pytest.fixture
async def store(tmp_path):
    async with Store.open(tmp_path / "data" / "edge-agent.db") as s:
        await seed(s, tmp_path / "files")
        yield s


@pytest.fixture
async def db(tmp_path, store):
    conn = await connect(tmp_path / "data" / "edge-agent.db")
    yield conn
    await conn.close()




@pytest.fixture
def make_harness(store, db):
    def make(model, *, tools=None, limits: Limits = DEFAULT_LIMITS, clock=None, tracing=True,
             constrain_l2=True, by_question=False, remote_search=None) -> Harness:
        tools = tools if tools is not None else build_tools(enforce_guards=False)
        ctx = ToolContext(store=store, now=fixed_clock(NOW, ZONE), device_id="pi", remote_search=remote_search)
        skills = load_skills(known_tools=tools)
        return Harness(model, Toolbox(tools, ctx), skills, limits, db, tracing, clock, constrain_l2,
                       by_question=by_question)
    return make

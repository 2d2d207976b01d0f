"""Fixtures for the tune tests: generated households (once a session) and a few of them loaded into data dirs."""
from __future__ import annotations

import asyncio
import io

import pytest

from edge_agent.config import Settings
from edge_agent.eval.world_setup import ensure_world_loaded
from edge_agent.tune.households import generate_household
from edge_agent.tune.scenarios import questions_for

from tunekit import LOADED_SEEDS, QUESTION_SEEDS, Generated


@pytest.fixture(scope="session")
def generated(tmp_path_factory) -> list[Generated]:
    """Households 0..19 with their questions, written under one temporary folder."""
    root = tmp_path_factory.mktemp("tune-households")
    out = []
    for seed in QUESTION_SEEDS:
        hh = generate_household(seed, root / f"h{seed}")
        out.append(Generated(hh, questions_for(hh, 0)))
    return out


@pytest.fixture(scope="session")
def loaded(generated, tmp_path_factory) -> list[tuple[Generated, Settings]]:
    """A sample of the households, each loaded by the project's world loader into a fresh data dir."""
    out = []
    for g in generated:
        if g.household.seed not in LOADED_SEEDS:
            continue
        data = tmp_path_factory.mktemp(f"tune-data-{g.household.seed}")
        settings = Settings(data_dir=data, timezone=g.household.timezone)
        assert asyncio.run(ensure_world_loaded(settings, g.household.directory, err=io.StringIO())) is True
        out.append((g, settings))
    return out

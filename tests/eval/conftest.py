"""Fixtures for the eval tests: a data dir with the sample world loaded, and hand-made questions."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from edge_agent.config import Settings
from edge_agent.eval.world_setup import WorldClock, ensure_world_loaded, world_clock
from edge_agent.paths import WORLD_DIR

from eval_samples import SAMPLE_QUESTIONS, write_questions


@pytest.fixture(scope="session")
def world_clock_fixed() -> WorldClock:
    return world_clock(WORLD_DIR)


@pytest.fixture(scope="session")
def world_settings(tmp_path_factory, world_clock_fixed) -> Settings:
    """Settings over a data dir holding the sample world (loaded once for the session)."""
    data = tmp_path_factory.mktemp("eval-world")
    settings = Settings(data_dir=data, timezone=world_clock_fixed.timezone)
    assert asyncio.run(ensure_world_loaded(settings, WORLD_DIR)) is True
    return settings


@pytest.fixture
def sample_questions_file(tmp_path) -> Path:
    return write_questions(tmp_path / "questions.jsonl", SAMPLE_QUESTIONS)

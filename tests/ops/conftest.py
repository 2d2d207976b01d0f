"""Fixtures of the ops tests."""
from __future__ import annotations

import pytest

from ops_helpers import free_port, start_broker


@pytest.fixture
def broker(tmp_path):
    """An anonymous Mosquitto on a free loopback port, stopped after the test."""
    b = start_broker(tmp_path / "broker", free_port())
    yield b
    b.proc.terminate()
    b.proc.wait(10)

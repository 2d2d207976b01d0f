"""Fixtures for the model catalog, pull and instruct-path tests: a fake hub on loopback serving the
bundled GGUF under a made-up repository, and an environment that never reaches the real hub."""
from __future__ import annotations

import os

import pytest

from fakehub import FakeHub
from modelkit import TEST_FILE, TEST_REPO


@pytest.fixture
def hub_env(tmp_path, monkeypatch) -> dict[str, str]:
    """HF_HOME in tmp (no stored token), no HF_TOKEN, no telemetry; returned for subprocesses too."""
    home = tmp_path / "hf-home"
    home.mkdir()
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    return dict(os.environ)


@pytest.fixture(scope="session")
def tiny_bytes(tiny_model_path) -> bytes:
    return tiny_model_path.read_bytes()


@pytest.fixture
def hub(hub_env, tiny_bytes, monkeypatch):
    """A fake hub with the bundled GGUF as test/tiny:model.gguf; HF_ENDPOINT points at it."""
    with FakeHub() as fake:
        fake.add(TEST_REPO, TEST_FILE, tiny_bytes)
        monkeypatch.setenv("HF_ENDPOINT", fake.endpoint)
        yield fake

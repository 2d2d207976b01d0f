"""llama.cpp runs on every core the process may use unless told otherwise (llama-cpp-python alone
would decode on half of them)."""
from __future__ import annotations

import os

import pytest

from edge_agent.llm import loading


def test_usable_cores_are_the_processs_affinity_not_the_machines_count(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert loading.usable_cores() == 3
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    assert loading.usable_cores() == 64


@pytest.mark.real_model
def test_the_model_decodes_and_prefills_on_every_usable_core_unless_set(tiny_model_path):
    from edge_agent.llm.llamacpp import LlamaCppModel

    model = LlamaCppModel(tiny_model_path, n_ctx=512)
    try:
        params = model._llm.context_params
        assert params.n_threads == params.n_threads_batch == loading.usable_cores()
    finally:
        model.close()
    one = LlamaCppModel(tiny_model_path, n_ctx=512, n_threads=1)
    try:
        assert one._llm.context_params.n_threads == one._llm.context_params.n_threads_batch == 1
    finally:
        one.close()

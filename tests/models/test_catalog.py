"""The model catalog (edge_agent/llm/models.toml), `model list` and `model use`."""
from __future__ import annotations

import hashlib
import json
import os
import shutil

import pytest
from modelkit import run_cli

from edge_agent.config import load_settings
from edge_agent.llm.catalog import DEFAULT_HEAD_CACHE_MB, CatalogError, describe, load_catalog
from edge_agent.modelfile.gguf import read_header
from edge_agent.modelfile.sizing import MIB, estimate, kv_cache_bytes

# The survey of issue 30: small instruct models that call tools (and one research-licensed model).
REQUIRED = {"Qwen3-4B-Instruct-2507", "Qwen3-1.7B", "Llama-3.2-3B-Instruct", "Phi-4-mini-instruct", "SmolLM3-3B",
            "Gemma-3-1B-it", "Gemma-3-4B-it", "Qwen2.5-3B-Instruct"}


def test_the_catalog_has_every_recommended_model_with_its_hub_file():
    catalog = load_catalog()
    titles = {m.title for m in catalog.models}
    assert REQUIRED <= titles and any(m.bundled for m in catalog.models)
    for m in catalog.models:
        assert m.file.lower().endswith("q4_k_m.gguf") and m.licence and m.source and m.size_gb > 0
        assert m.context >= 4096  # every one holds the window it will be given
        assert m.bundled or m.repo.count("/") == 1
    assert {b.name for b in catalog.boards} == {"pi4-4gb", "pi5-4gb", "pi5-8gb"}


def test_kv_bytes_per_token_follow_the_formula_and_the_published_anchors():
    catalog = load_catalog()
    for m in catalog.models:
        assert m.kv_bytes_per_token == 2 * m.layers * m.kv_heads * m.head_dim * 2
    # shared/ANCHORS.md: KV at n_ctx 4096, f16 — Qwen2.5-3B 144 MiB, Llama-3.2-3B 448 MiB.
    assert catalog.get("qwen2.5-3b").kv_bytes_per_token * 4096 / MIB == 144
    assert catalog.get("llama-3.2-3b").kv_bytes_per_token * 4096 / MIB == 448


def test_the_bundled_entry_matches_the_bundled_gguf(tiny_model_path):
    entry = load_catalog().get("gemma-3-270m")
    header = read_header(tiny_model_path)
    assert entry.context == header.arch_value("context_length")
    per_token, layers, kv_heads, head_dim = kv_cache_bytes(header, 1)
    assert (entry.layers, entry.kv_heads, entry.head_dim) == (layers, kv_heads, head_dim)
    assert entry.kv_bytes_per_token == per_token
    assert entry.size_bytes == tiny_model_path.stat().st_size and entry.file == tiny_model_path.name
    settings = load_settings(None, {}, environ={})
    m = settings.model
    need = estimate(tiny_model_path, n_ctx=m.n_ctx, n_batch=m.n_batch, keep_sessions=m.keep_sessions)
    row = describe(entry, load_catalog(), settings, None)
    # The catalog's RAM figure is doctor's estimate for the real file plus the head-cache budget.
    assert row["need_mb"] == round(need.total_mb + DEFAULT_HEAD_CACHE_MB)
    assert row["fits_here"] is None  # unknown RAM is not a yes


def test_fits_follow_the_ram_and_the_8gb_board_takes_every_model():
    catalog = load_catalog()
    settings = load_settings(None, {}, environ={})
    for m in catalog.models:
        row = describe(m, catalog, settings, here_mb=row_need_plus(m, catalog, settings, 1))
        assert row["fits_here"] is True  # the need plus the OS reserve (need_mb is rounded: ±1)
        assert describe(m, catalog, settings, here_mb=row_need_plus(m, catalog, settings, -1))["fits_here"] is False
        assert row["fits"]["pi5-8gb"] is True
        assert row["fits"]["pi4-4gb"] == row["fits"]["pi5-4gb"]  # same RAM, same answer
    big = describe(catalog.get("qwen3-4b-2507"), catalog, settings, here_mb=1024)
    assert big["fits"]["pi5-4gb"] is False and big["fits_here"] is False  # 2.5 GB + 576 MiB KV + 2 saved sessions
    qwen = describe(catalog.get("qwen2.5-3b"), catalog, settings, here_mb=4096)
    assert qwen["fits"]["pi5-4gb"] is True and qwen["fits_here"] is True


def row_need_plus(model, catalog, settings, extra_mb):
    from edge_agent.modelfile.sizing import OS_RESERVE_MB

    return describe(model, catalog, settings, None)["need_mb"] + OS_RESERVE_MB + extra_mb


def test_a_smaller_window_needs_less():
    catalog = load_catalog()
    big = describe(catalog.get("llama-3.2-3b"), catalog, load_settings(None, {}, environ={}), None)
    small = describe(catalog.get("llama-3.2-3b"), catalog,
                     load_settings(None, {"model.n_ctx": 2048}, environ={}), None)
    assert small["need_mb"] < big["need_mb"] and small["kv_mb"] == big["kv_mb"] / 2


def test_unknown_names_and_broken_data_are_clear_errors(tmp_path):
    with pytest.raises(CatalogError, match="not in the catalog"):
        load_catalog().get("gpt-9")
    bad = tmp_path / "models.toml"
    bad.write_text("[[model]]\nname = 'x'\n")
    with pytest.raises(CatalogError, match="models.toml"):
        load_catalog(bad)


def test_model_list_json_prints_the_catalog_with_this_machines_fit(tmp_path):
    proc = run_cli("--data-dir", str(tmp_path / "d"), "model", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["this_machine"]["ram_mb"] > 0
    assert {m["title"] for m in out["models"]} >= REQUIRED
    for m in out["models"]:
        assert m["fits_here"] in (True, False) and set(m["fits"]) == {"pi4-4gb", "pi5-4gb", "pi5-8gb"}
        assert m["need_parts_mb"]["head_cache"] == DEFAULT_HEAD_CACHE_MB and "need_mb" in m["computed"]
    table = run_cli("--data-dir", str(tmp_path / "d"), "model", "list")
    assert table.returncode == 0 and "qwen2.5-3b" in table.stdout and "pi5-8gb" in table.stdout


def test_model_use_sets_the_path_and_keeps_the_rest_of_the_config(tmp_path, tiny_model_path):
    data = tmp_path / "data"
    models = data / "models"
    models.mkdir(parents=True)
    shutil.copyfile(tiny_model_path, models / "model.gguf")
    digest = hashlib.sha256((models / "model.gguf").read_bytes()).hexdigest()
    (models / "SHA256SUMS").write_text(f"{digest}  model.gguf\n")
    config = tmp_path / "config.toml"
    config.write_text('device_id = "pi"\n\n[model]\n# The GGUF file.\n# path = "/x.gguf"\nn_ctx = 4096\n\n'
                      '[mqtt]\nport = 1884\n')
    proc = run_cli("--config", str(config), "--data-dir", str(data), "model", "use", "test/tiny:model.gguf")
    assert proc.returncode == 0, proc.stderr
    text = config.read_text()
    assert f'# path = "/x.gguf"\npath = "{models / "model.gguf"}"\nn_ctx = 4096' in text
    assert "# The GGUF file." in text and "port = 1884" in text
    settings = load_settings(config, environ={})
    assert settings.model.path == models / "model.gguf" and settings.mqtt.port == 1884
    again = run_cli("--config", str(config), "--data-dir", str(data), "model", "use", "model.gguf")
    assert again.returncode == 0 and config.read_text() == text  # the same line, replaced in place


def test_model_use_refuses_a_missing_model_or_no_config(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[model]\nn_ctx = 4096\n")
    proc = run_cli("--config", str(config), "--data-dir", str(tmp_path / "d"), "model", "use", "qwen2.5-3b")
    assert proc.returncode == 1 and "model pull qwen2.5-3b" in proc.stderr
    assert config.read_text() == "[model]\nn_ctx = 4096\n"
    env_without = {k: v for k, v in os.environ.items() if k != "EDGE_AGENT_CONFIG"}
    proc = run_cli("--data-dir", str(tmp_path / "d"), "model", "use", "qwen2.5-3b", env=env_without)
    assert proc.returncode == 1 and "no config file" in proc.stderr


def test_a_non_commercial_licence_is_flagged_and_pulled_only_when_accepted(tmp_path):
    from edge_agent.llm.catalog import licence_refusal

    catalog = load_catalog()
    research = catalog.get("qwen2.5-3b")
    assert research.non_commercial and not any(m.non_commercial for m in catalog.models if m is not research)
    assert "forbids commercial use" in licence_refusal(research, accepted=False)
    assert licence_refusal(research, accepted=True) is None and licence_refusal(catalog.get("smollm3-3b"), False) is None
    listing = run_cli("--data-dir", str(tmp_path / "d"), "model", "list")
    assert "qwen-research (non-commercial)" in listing.stdout and "--accept-licence" in listing.stdout
    env = {**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9"}  # a closed port: never a real hub
    for spec in ("qwen2.5-3b", f"{research.repo}:{research.file}"):
        refused = run_cli("--data-dir", str(tmp_path / "d"), "model", "pull", spec, "--json", env=env)
        assert refused.returncode == 1 and "forbids commercial use" in json.loads(refused.stdout)["error"]
    # Accepted, the pull goes on to the hub (here a closed port: a download error, not the licence).
    accepted = run_cli("--data-dir", str(tmp_path / "d"), "model", "pull", "qwen2.5-3b", "--accept-licence",
                       "--json", "--max-resumes", "0", env=env)
    assert accepted.returncode == 1 and "commercial" not in json.loads(accepted.stdout)["error"]

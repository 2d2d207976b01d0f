"""The task adapter: chosen only for its own base model, checked by sha256, refused for another base."""
from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from edge_agent.llm import adapter as adapters
from edge_agent.llm.adapter import AdapterError, choose_adapter


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def shipped(tmp_path, monkeypatch, tiny_model_path):
    """A package adapters folder holding a (fake) adapter trained on the bundled model."""
    folder = tmp_path / "adapters"
    folder.mkdir()
    fake = folder / adapters.BUNDLED_ADAPTER
    fake.write_bytes(b"GGUF lora adapter bytes")
    card = {"file": fake.name, "sha256": _sha(fake), "base_file": tiny_model_path.name,
            "base_sha256": _sha(tiny_model_path), "data": {"examples": 12}}
    adapters.card_path(fake).write_text(json.dumps(card))
    monkeypatch.setattr(adapters, "ADAPTERS_DIR", folder)
    return fake


def test_auto_loads_the_bundled_adapter_on_its_own_base_only(shipped, tiny_model_path, tmp_path):
    chosen = choose_adapter("auto", tiny_model_path, tmp_path / "markers")
    assert chosen is not None and chosen.path == shipped and chosen.sha256 == _sha(shipped)
    other = tmp_path / "other.gguf"
    shutil.copyfile(tiny_model_path, other)
    with other.open("ab") as fh:
        fh.write(b"\0")  # any other file: another base
    assert choose_adapter("auto", other, tmp_path / "markers") is None
    assert choose_adapter("none", tiny_model_path, tmp_path / "markers") is None


def test_a_damaged_adapter_is_refused(shipped, tiny_model_path, tmp_path):
    shipped.write_bytes(b"GGUF something else")
    with pytest.raises(AdapterError, match="does not match its card"):
        choose_adapter("auto", tiny_model_path, tmp_path / "markers")


def test_an_explicit_adapter_for_another_base_is_refused(shipped, tiny_model_path, tmp_path):
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF not the base")
    with pytest.raises(AdapterError, match="was trained on"):
        choose_adapter(str(shipped), other, tmp_path / "markers")
    with pytest.raises(AdapterError, match="not found"):
        choose_adapter(str(tmp_path / "missing.gguf"), tiny_model_path, tmp_path / "markers")


def test_doctor_reports_the_adapter(shipped, tiny_model_path, tmp_path):
    from edge_agent.config import load_settings
    from edge_agent.ops.doctor import check_adapter

    s = load_settings(None, {"data_dir": str(tmp_path / "data"), "model.path": str(tiny_model_path)}, environ={})
    ok = check_adapter(s, tiny_model_path)
    assert ok.status == "pass" and "matches its card" in ok.detail and "12 synthetic examples" in ok.detail
    s.model.adapter = "none"
    assert "model.adapter = none" in check_adapter(s, tiny_model_path).detail
    shipped.write_bytes(b"tampered")
    s.model.adapter = "auto"
    assert check_adapter(s, tiny_model_path).status == "fail"


def test_no_adapter_flag_turns_it_off():
    from edge_agent.cli import build_parser, settings_from_args

    args = build_parser().parse_args(["--no-adapter", "doctor"])
    assert settings_from_args(args).model.adapter == "none"
    assert settings_from_args(build_parser().parse_args(["doctor"])).model.adapter == "auto"

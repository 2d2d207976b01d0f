"""Settings: defaults, TOML, environment and flags, and errors that name the key and the source."""
from pathlib import Path

import pytest

from edge_agent.config import ConfigError, Settings, load_settings


def test_defaults_hold_the_window(tmp_path):
    s = load_settings(environ={"HOME": str(tmp_path)})
    assert s.model.n_ctx == 4096 and s.mqtt.prefix == "edge/v1" and s.model.path is None


def test_layers_override_in_order(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('device_id = "kitchen"\n[mqtt]\nport = 1884\n[harness]\nmax_l2_steps = 4\n')
    env = {"EDGE_AGENT_MQTT__PORT": "1999", "EDGE_AGENT_MODEL": "/m/x.gguf"}
    s = load_settings(cfg, {"data_dir": tmp_path / "d"}, environ=env)
    assert s.device_id == "kitchen" and s.mqtt.port == 1999 and s.harness.max_l2_steps == 4
    assert s.model.path == Path("/m/x.gguf") and s.data_dir == tmp_path / "d"


def test_bad_value_names_key_and_file(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[model]\nn_ctx = 8192\n")
    with pytest.raises(ConfigError) as info:
        load_settings(cfg, environ={})
    assert "model.n_ctx" in str(info.value) and str(cfg) in str(info.value)


def test_unknown_key_is_refused(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[mqtt]\nprot = 1\n")
    with pytest.raises(ConfigError, match="mqtt.prot"):
        load_settings(cfg, environ={})


def test_bad_env_names_the_environment():
    with pytest.raises(ConfigError, match="environment.*mqtt.port"):
        load_settings(environ={"EDGE_AGENT_MQTT__PORT": "not-a-port"})


def test_broken_toml_and_missing_file(tmp_path):
    cfg = tmp_path / "broken.toml"
    cfg.write_text("[model\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(cfg, environ={})
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "missing.toml", environ={})


def test_settings_paths():
    s = Settings(data_dir=Path("/x"))
    assert s.db_path == Path("/x/edge-agent.db") and s.models_dir == Path("/x/models")

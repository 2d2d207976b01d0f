"""`edge-agent config show` and `config check`: sources, redaction, errors naming key and file."""
from __future__ import annotations

import json

import pytest

from ops_helpers import REPO, cli_env, run_cli

EXAMPLE = REPO / "deploy" / "config.example.toml"


def test_example_config_is_valid():
    proc = run_cli("config", "check", str(EXAMPLE))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"ok: {EXAMPLE}"


@pytest.mark.parametrize("toml, key", [
    ('[mqtt]\nport = "abc"\n', "mqtt.port"),
    ('[mqtt]\nport = 70000\n', "mqtt.port"),
    ('[model]\nn_ctx = 8192\n', "model.n_ctx"),
    ('device_id = "Not A Name"\n', "device_id"),
    ('[ops]\nunknown_knob = 1\n', "ops.unknown_knob"),
    ('timezone = "Mars/Olympus_Mons"\n', "timezone"),
    ('[model]\npath = "/nonexistent/model.gguf"\n', "model.path"),
    ('files_roots = ["/nonexistent/folder"]\n', "files_roots"),
])
def test_check_names_the_key_and_the_file(tmp_path, toml, key):
    conf = tmp_path / "edge.toml"
    conf.write_text(toml)
    proc = run_cli("config", "check", str(conf))
    assert proc.returncode == 1
    assert f"{conf}: {key}:" in proc.stderr, proc.stderr


def test_check_reports_broken_toml_with_the_file(tmp_path):
    conf = tmp_path / "broken.toml"
    conf.write_text("[mqtt\nport = 1\n")
    proc = run_cli("config", "check", str(conf))
    assert proc.returncode == 1 and f"{conf}: not valid TOML" in proc.stderr


def test_check_names_the_environment_when_it_breaks_a_key(tmp_path):
    conf = tmp_path / "ok.toml"
    conf.write_text("[mqtt]\nport = 1884\n")
    proc = run_cli("config", "check", str(conf), env=cli_env(EDGE_AGENT_OPS__LATENCY_WINDOW="zero"))
    assert proc.returncode != 0 and "environment: ops.latency_window" in proc.stderr


def test_show_gives_sources_and_redacts_the_password(tmp_path):
    conf = tmp_path / "edge.toml"
    conf.write_text('device_id = "kitchen"\n[mqtt]\nport = 1884\npassword = "hunter2"\n')
    env = cli_env(EDGE_AGENT_MQTT__HOST="10.1.2.3")
    proc = run_cli("--config", str(conf), "--data-dir", str(tmp_path / "d"), "config", "show", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "hunter2" not in proc.stdout
    out = json.loads(proc.stdout)
    s, src = out["settings"], out["sources"]
    assert s["mqtt.password"] == "********" and s["mqtt.port"] == 1884 and s["device_id"] == "kitchen"
    assert src["mqtt.port"] == str(conf) and src["mqtt.password"] == str(conf)
    assert src["mqtt.host"] == "environment" and s["mqtt.host"] == "10.1.2.3"
    assert src["data_dir"] == "command line" and src["model.n_ctx"] == "default"
    assert s["harness.token_budget"] == 2000  # "token" in a name is not a secret
    text = run_cli("--config", str(conf), "config", "show", env=env)
    assert text.returncode == 0 and "hunter2" not in text.stdout
    line = next(x for x in text.stdout.splitlines() if x.startswith("mqtt.port"))
    assert line.split() == ["mqtt.port", "=", "1884", "#", str(conf)]

